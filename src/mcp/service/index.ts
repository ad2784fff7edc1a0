// The reference-compatible MCP decision service (`mcp-decision-service.md`), protocol only:
// payload adapters, the decision pipeline, the HTTP service (`/v1/evaluate*`), MCP server trust
// and the Claude Code hook protocol. The commands that run them (`mcp proxy --call`, `mcp serve`,
// `mcp verify`, `hook claude-code`) are in src/cli/commands.
export { ADAPTERS, normalizeAdapter, decodeToolCall, claudeCodeToolName, type AdapterName } from './adapters.js';
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
export {
  hookOutput,
  hookOutputFor,
  replyForVerdict,
  failReply,
  parseHookInput,
  alignMcpToolTargets,
  HOOK_EVENTS,
  type HookInput,
  type HookOutput,
  type HookEvent,
  type HookReply,
} from './hook.js';
export { contextOsResultEnvelope, CONTEXTOS_CALL_VERSION, CONTEXTOS_RESULT_VERSION } from './contextos.js';
export type { ToolCall, CallContext, CallTarget, ServerInfo } from './tool-call.js';
