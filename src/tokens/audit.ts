import { formatRFC3339Nano, toUTC, type GoTime, type JsonObject } from '../canon/index.js';
import type { ApprovalAuditEntry, ApprovalEvaluation, DelegationAuditEntry, DelegationEvaluation } from './rollup.js';

export const APPROVAL_AUDIT_SCHEMA_ID = 'gait.gate.approval_audit_record';
export const DELEGATION_AUDIT_SCHEMA_ID = 'gait.gate.delegation_audit_record';
export const AUDIT_SCHEMA_VERSION = '1.0.0';

export interface AuditContext {
  traceId: string;
  toolName: string;
  intentDigest: string;
  policyDigest: string;
  /** The trace's `relationship` object, so audits join the same graph. */
  relationship: JsonObject;
  /** Wall clock at emission. */
  createdAt: GoTime;
  producerVersion: string;
}

/** `approval_audit_<trace_id>.json` (`gate.md` §7.1 CLI roll-up). */
export function buildApprovalAuditRecord(ctx: AuditContext, result: ApprovalEvaluation): JsonObject {
  return {
    ...header(APPROVAL_AUDIT_SCHEMA_ID, ctx),
    required_approvals: result.requiredApprovals,
    valid_approvals: result.validCount,
    approved: result.granted,
    approvers: [...result.approvers],
    relationship: ctx.relationship,
    entries: result.entries.map(entryJson),
  };
}

/** `delegation_audit_<trace_id>.json` (`gate.md` §7.2). */
export function buildDelegationAuditRecord(ctx: AuditContext, result: DelegationEvaluation): JsonObject {
  const record: JsonObject = {
    ...header(DELEGATION_AUDIT_SCHEMA_ID, ctx),
    delegation_required: true,
    valid_delegations: result.validCount,
    delegated: result.granted,
  };
  if (result.granted) record['delegation_ref'] = result.validTokenIds.join(',');
  record['relationship'] = ctx.relationship;
  record['entries'] = result.entries.map(entryJson);
  return record;
}

function header(schemaId: string, ctx: AuditContext): JsonObject {
  return {
    schema_id: schemaId,
    schema_version: AUDIT_SCHEMA_VERSION,
    created_at: formatRFC3339Nano(toUTC(ctx.createdAt)),
    producer_version: ctx.producerVersion,
    trace_id: ctx.traceId,
    tool_name: ctx.toolName,
    intent_digest: ctx.intentDigest,
    policy_digest: ctx.policyDigest,
  };
}

/** Entries keep `valid` always and drop other empty members, as Go's omitempty would. */
function entryJson(entry: ApprovalAuditEntry | DelegationAuditEntry): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(entry) as [string, string | boolean | string[]][]) {
    if (key === 'valid' || (value !== '' && !(Array.isArray(value) && value.length === 0))) out[key] = value;
  }
  return out;
}
