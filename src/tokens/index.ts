// Approval and delegation tokens (`gate.md` §7), their gate roll-ups and audit records, and the
// approved-script registry.
export { TokenInvalidError } from './decode.js';
export {
  APPROVAL_TOKEN_SCHEMA_ID,
  APPROVAL_TOKEN_SCHEMA_VERSION,
  approvalTokenPayload,
  normalizeApprovalToken,
  mintApprovalToken,
  validateApprovalToken,
  requiredApprovalScope,
  approvalTargetCount,
  approvalOpCount,
  approvalCallOf,
  checkedTargets,
  approvalTargetText,
  callFields,
  MAX_APPROVAL_REASON,
  MAX_APPROVAL_TOKEN_TTL_NS,
  MAX_APPROVAL_TOKEN_TTL_TEXT,
} from './approval.js';
export type { ApprovalToken, ApprovalErrorCode, MintApprovalOptions, ApprovalBinding, ApprovalValidation, ApprovalCall } from './approval.js';
export {
  DELEGATION_TOKEN_SCHEMA_ID,
  DELEGATION_TOKEN_SCHEMA_VERSION,
  delegationTokenPayload,
  normalizeDelegationToken,
  mintDelegationToken,
  requiredDelegationLinks,
  validateDelegationToken,
  delegationChainProblem,
  delegationChainRoot,
} from './delegation.js';
export type {
  DelegationToken,
  DelegationErrorCode,
  MintDelegationOptions,
  DelegationLinkRequirement,
  DelegationBinding,
  DelegationValidation,
} from './delegation.js';
export { evaluateApprovals, evaluateDelegations } from './rollup.js';
export type {
  ParsedToken,
  ApprovalAuditEntry,
  ApprovalEvaluationInput,
  ApprovalEvaluation,
  DelegationAuditEntry,
  DelegationEvaluationInput,
  DelegationEvaluation,
} from './rollup.js';
export {
  buildApprovalAuditRecord,
  buildDelegationAuditRecord,
  APPROVAL_AUDIT_SCHEMA_ID,
  DELEGATION_AUDIT_SCHEMA_ID,
} from './audit.js';
export type { AuditContext } from './audit.js';
export { readTokenFile, readTokenFiles, writeTokenFile, writeAuditRecord, readApprovedScriptRegistry } from './files.js';
export type { WriteAuditOptions } from './files.js';
export {
  APPROVED_SCRIPT_SCHEMA_ID,
  normalizeApprovedScriptEntry,
  approvedScriptPayload,
  signApprovedScriptEntry,
  verifyApprovedScriptEntry,
  verifyApprovedScriptRegistry,
  matchApprovedScript,
} from './approved-scripts.js';
export type { ApprovedScriptEntry, ApprovedScriptMatch, SignApprovedScriptOptions } from './approved-scripts.js';
export { approvedScriptRegistryEntries } from './approved-scripts.js';
