// The reference-compatible MCP decision service (`mcp-decision-service.md`): payload adapters,
// the decision pipeline, `mcp proxy --call`, `mcp serve` (HTTP), `mcp verify` (trust) and the
// Claude Code PreToolUse hook.
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
export { runMcpCall, type McpCallFlags } from './call-command.js';
export {
  createEvaluateHandler,
  createMcpServeListener,
  EVALUATE_ROUTES,
  DEFAULT_MAX_REQUEST_BYTES,
  type EvaluateHandler,
  type EvaluateHandlerOptions,
  type HttpVerdictStatus,
} from './http.js';
export { startMcpServe, runMcpServe, parseListen, isLoopbackHost, type McpServeFlags } from './serve-command.js';
export { runMcpVerify, type McpVerifyFlags } from './verify.js';
export { evaluateMcpTrust, parseTrustSnapshot, applyMcpTrust, mcpTrustDecisionJson, type McpTrustDecision } from './trust.js';
export {
  runClaudeCodeHook,
  hookOutput,
  hookOutputFor,
  replyForVerdict,
  failReply,
  readHookInput,
  HOOK_EVENTS,
  type ClaudeCodeHookFlags,
  type HookOutput,
  type HookEvent,
  type HookReply,
} from './hook.js';
export { contextOsResultEnvelope, CONTEXTOS_CALL_VERSION, CONTEXTOS_RESULT_VERSION } from './contextos.js';
export type { ToolCall, CallContext, CallTarget, ServerInfo } from './tool-call.js';
