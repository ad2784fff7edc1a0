// Ward's public library surface. Everything not exported here is private.
export * from './canon/index.js';
export { WardError, ERROR_CODES, isWardError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { EXIT, EXIT_CODE_INFO } from './contract/exit-codes.js';
export type { ExitCode } from './contract/exit-codes.js';
export { WARD_VERSION } from './version.js';

// Intents (gate.md §1)
export * from './intent/index.js';

// Policies (gate.md §2)
export * from './policy/index.js';

// Context evidence (gate.md §4)
export * from './context/index.js';

// Evaluation (gate.md §3, §5)
export { evaluate, evaluateNormalized, GATE_RESULT_SCHEMA_ID, GATE_RESULT_SCHEMA_VERSION } from './gate/evaluate.js';
export type { EvaluateOptions, GateOutcome, GateResult, ScriptSummary } from './gate/evaluate.js';
export { explainOutcome, POLICY_EXPLAIN_SCHEMA_ID } from './gate/explain.js';
export { REASON_CODES, REASON_CODE_FAMILIES, describeReasonCode, isRegisteredReasonCode } from './gate/reason-codes.js';
export type { ReasonCodeInfo } from './gate/reason-codes.js';
export { parseWrkrInventory, enrichWithWrkr } from './gate/wrkr.js';
export type { WrkrInventory } from './gate/wrkr.js';
export { parseKillSwitchState, evaluateKillSwitch } from './gate/kill-switch.js';
export type { KillSwitchState, KillSwitchDecision } from './gate/kill-switch.js';

// A full decision with post-processing and a durably written signed trace.
export { runGate } from './decision/gate-run.js';
export type { GateRuntime, GateRequest, GateResultOutput } from './decision/gate-run.js';

// Keys, traces, tokens (gate.md §6–7)
export * from './keys/index.js';
export * from './trace/index.js';
export {
  mintApprovalToken,
  validateApprovalToken,
  requiredApprovalScope,
  mintDelegationToken,
  validateDelegationToken,
  evaluateApprovals,
  evaluateDelegations,
} from './tokens/index.js';

// The SDK: `new Ward({ policy })`, `ward.evaluate(intent)`, `guardTool`, intent builders.
export * from './sdk/index.js';
