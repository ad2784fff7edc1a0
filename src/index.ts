// Ward's public library surface: exactly what docs/sdk.md "Everything the package exports" lists
// (tests/public-api.test.ts holds the two together). Everything not exported here is private.

// The SDK: `new Ward({ policy })`, `ward.evaluate(intent)`, `guardTool`, intent builders.
export * from './sdk/index.js';

// Errors, exit codes, reason codes, version.
export { WardError, ERROR_CODES, isWardError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { EXIT, EXIT_CODE_INFO } from './contract/exit-codes.js';
export type { ExitCode } from './contract/exit-codes.js';
export { REASON_CODES, REASON_CODE_FAMILIES, describeReasonCode, isRegisteredReasonCode } from './gate/reason-codes.js';
export type { ReasonCodeInfo } from './gate/reason-codes.js';
export { WARD_VERSION } from './version.js';

// The pure engine (gate.md §1–§5): no disk, no clock.
export { evaluate, evaluateNormalized, GATE_RESULT_SCHEMA_ID, GATE_RESULT_SCHEMA_VERSION } from './gate/evaluate.js';
export type { EvaluateOptions, GateOutcome, GateResult, ScriptSummary } from './gate/evaluate.js';
export { explainOutcome, POLICY_EXPLAIN_SCHEMA_ID } from './gate/explain.js';
export { parseWrkrInventory, enrichWithWrkr } from './gate/wrkr.js';
export type { WrkrInventory } from './gate/wrkr.js';
export { parseKillSwitchState, evaluateKillSwitch } from './gate/kill-switch.js';
export type { KillSwitchState, KillSwitchDecision } from './gate/kill-switch.js';

// Intents (gate.md §1).
export { normalizeIntent, intentDigest, argsDigest, INTENT_SCHEMA_ID, INTENT_SCHEMA_VERSION } from './intent/index.js';
export type { NormalizedIntent } from './intent/index.js';

// Policies (gate.md §2).
export { parsePolicyYaml, loadPolicyFile, formatPolicyYaml, checkProfile, policyDigest, POLICY_SCHEMA_ID, POLICY_SCHEMA_VERSION, VERDICTS } from './policy/index.js';
export type { LoadedPolicy, NormalizedPolicy, PolicyProfile, Verdict } from './policy/index.js';

// Context evidence (gate.md §4).
export { parseContextEnvelope, contextSetDigest, CONTEXT_ENVELOPE_SCHEMA_ID, CONTEXT_ENVELOPE_SCHEMA_VERSION } from './context/index.js';
export type { ContextEnvelope } from './context/index.js';

// Keys, traces, tokens (gate.md §6–§7).
export { generateSigningKey, parsePrivateKey, parsePublicKey, loadVerifyKeys, loadKeyRing, buildJwks, keyIdFor } from './keys/index.js';
export type { SigningKey, VerifyKey } from './keys/index.js';
export {
  verifyTraceRecord,
  verifyTraceText,
  verifyTraceFile,
  verifyTracePath,
  exportJws,
  exportDsse,
  verifyJws,
  verifyDsse,
  TRACE_SCHEMA_ID,
  TRACE_SCHEMA_VERSION,
} from './trace/index.js';
export type { SignedTrace, TraceVerification } from './trace/index.js';
export {
  mintApprovalToken,
  validateApprovalToken,
  requiredApprovalScope,
  mintDelegationToken,
  validateDelegationToken,
  evaluateApprovals,
  evaluateDelegations,
} from './tokens/index.js';

// Canonical JSON, digests, strict parsing and Go-compatible times, as the contract uses them.
export { jcs, digestJcs, sha256Hex, parseJsonText, nowUTC, parseRFC3339, formatRFC3339Nano, parseGoDuration } from './canon/index.js';
export type { JsonValue, JsonObject, GoTime } from './canon/index.js';
