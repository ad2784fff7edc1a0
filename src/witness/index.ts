/**
 * The witness (issue 19, docs/witness.md): pure functions over what Ward saw on the wire. No I/O,
 * no clock reads except where a caller passes the time; the MCP proxy and the SDK own sessions,
 * signing and traces.
 *
 * API summary (for the proxy and SDK integration):
 *
 * Taint — witnessed provenance (taint.ts)
 *   const taint = new TaintMemory(limits?)            // one per client session; random key per instance
 *   taint.remember(result, { traceId, toolName })     // after a tools/call result reaches the client
 *     → { remembered, refreshed, dropped }
 *   taint.match(args) → TaintHit[]                    // before deciding a tools/call
 *     TaintHit = { traceId, toolName, argPath: '$.body', encoding: 'raw' | 'json_unescaped' }
 *     non-empty ⇒ the call's arg provenance is `tool_output` whatever the client declared.
 *   taint.stats() → { values, approxBytes, evicted }; DEFAULT_TAINT_LIMITS (10,000 values/session, LRU)
 *
 * Result firewall (results.ts); config = loadedPolicy.policy.results (ResultsConfig)
 *   inspectResult(result, config, { digestKey? }) → { findings, action, bytes, truncated }
 *     finding = { detector, kind, path, offset, length, digest, action } — never the matched text
 *   applyResultAction(result, findings, action) → the result to forward
 *     pass: unchanged · redact: markers `[REDACTED:<detector>:<kind>]` in place (oversize: a summary)
 *     · block: { content: [{ type: 'text', text: 'Ward blocked … credentials (aws_access_key_id).' }], isError: true }
 *   RESULT_REASON_CODES[detector] → the registered reason code for a result trace
 *
 * Tool definitions (tool-scan.ts), at tools/list
 *   scanToolDefinition(tool) → { reason_code: 'mcp_tool_description_suspicious', kind, path, digest }[]
 *   findShadowing({ [server]: toolNames[] } | Map) → { reason_code: 'mcp_tool_name_shadowed', folded, tools: [{ server, name }] }[]
 *
 * Other registered codes: `arg_provenance_witnessed` (a taint hit overrode the declared
 * provenance), `context_evidence_witnessed` (the bound envelope is Ward's own).
 *
 * Witnessed context (context.ts); config = loadedPolicy.policy.context (ContextConfig)
 *   isRetrievalTool(config, toolName) → boolean
 *   const ctx = new WitnessedContext(limits?)          // one per session (1,000 records, oldest dropped)
 *   ctx.observe({ server, toolName, args, result (as forwarded), seenAt: GoTime, traceId }) → ContextRecord | undefined
 *   ctx.envelope({ contextSetId, createdAt, producerVersion?, evidenceMode? = 'required' }) → verified ContextEnvelope
 *   witnessedRecord(retrieval), resultContentDigest(result) = sha256(JCS(result without _meta))
 *
 */
export {
  TaintMemory,
  DEFAULT_TAINT_LIMITS,
  MIN_TEXT_CHARS,
  MIN_TOKEN_CHARS,
  MIN_DISTINCT_CHARS,
  candidates,
  unescapeJsonText,
  type TaintSource,
  type TaintHit,
  type TaintLimits,
  type TaintStats,
  type RememberOutcome,
} from './taint.js';
export {
  inspectResult,
  applyResultAction,
  blockedResult,
  redactionMarker,
  strictestAction,
  CREDENTIAL_PATTERNS,
  MAX_FINDINGS,
  RESULT_REASON_CODES,
  INVISIBLE_RUN,
  type ResultDetector,
  type ResultFinding,
  type ResultInspection,
  type InspectOptions,
} from './results.js';
export {
  scanToolDefinition,
  findShadowing,
  TOOL_SUSPICIOUS,
  TOOL_SHADOWED,
  type ToolScanFinding,
  type ToolScanKind,
  type ShadowFinding,
} from './tool-scan.js';
export {
  WitnessedContext,
  witnessedRecord,
  witnessedLocator,
  resultContentDigest,
  isRetrievalTool,
  jcsDigest,
  WITNESS_SOURCE_TYPE,
  DEFAULT_WITNESSED_CONTEXT_LIMITS,
  type WitnessedRetrieval,
  type WitnessedContextLimits,
} from './context.js';
export { walkStrings, jsonPathChild, type StringAt, type Walked } from './walk.js';
export type { ResultAction, ResultsConfig, ContextConfig, PiiPattern } from '../policy/types.js';
