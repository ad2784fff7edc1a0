// The reference-compatible MCP decision service (`mcp-decision-service.md`), protocol only:
// payload adapters, the decision pipeline, the HTTP service (`/v1/evaluate*`) and MCP server trust.
// The commands that run them (`mcp proxy --call`, `mcp serve`, `mcp verify`, `hook`) are in src/cli/commands
// and the daemon mounts its /v1/evaluate* routes; it speaks no MCP protocol, so it is not in src/mcp;
// coding agents' hook protocols (and the `claude_code` adapter's decoding) are in src/agent-hooks.
export { ADAPTERS, normalizeAdapter, decodeToolCall, type AdapterName } from './adapters.js';
export { toIntentRequest, FALLBACK_CONTEXT_WARNING, type Profile } from './intent.js';
export {
  evaluateDecision,
  evaluateDecisionAsync,
  prepareDecision,
  DecisionTraceWriter,
  normalizeRunId,
  type DecisionServiceConfig,
  type DecisionRequest,
  type DecisionResult,
  type PendingDecisionResult,
} from './evaluate.js';
export { loadServiceConfig, type ServiceOptions } from './config.js';
export {
  createEvaluateHandler,
  createMcpServeListener,
  EVALUATE_ROUTES,
  DEFAULT_MAX_REQUEST_BYTES,
  type EvaluateHandler,
  type EvaluateHandlerOptions,
  type HttpVerdictStatus,
} from './http.js';
export { verifyMcpServer, type McpServerVerdict } from './verify.js';
export { evaluateMcpTrust, parseTrustSnapshot, applyMcpTrust, mcpTrustDecisionJson, type McpTrustDecision } from './trust.js';
export { contextOsResultEnvelope, CONTEXTOS_CALL_VERSION, CONTEXTOS_RESULT_VERSION } from './contextos.js';
export type { ToolCall, CallContext, CallTarget, ServerInfo } from '../agent-hooks/tool-call.js';
