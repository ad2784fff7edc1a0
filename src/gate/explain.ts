import type { JsonObject } from '../canon/index.js';
import type { GateOutcome } from './evaluate.js';
import { freezeDecisionJson, sandboxDecisionJson } from './decisions.js';
import { killSwitchDecisionJson } from './kill-switch.js';

export const POLICY_EXPLAIN_SCHEMA_ID = 'gait.gate.policy_explain';

const MISSING_FIELD_CODES: Record<string, string> = {
  credential_evidence_missing: 'credential_evidence',
  sandbox_metadata_missing: 'sandbox',
  sandbox_evidence_missing: 'sandbox_evidence',
  kill_switch_state_unavailable: 'kill_switch_state',
  broker_credential_missing: 'broker_credential',
  broker_credential_required: 'broker_credential',
};

export interface ExplainRefs {
  traceId: string;
  tracePath: string;
  approvalAuditPath?: string;
  delegationAuditPath?: string;
  validApprovals?: number;
}

/**
 * `gait.gate.policy_explain` 1.0.0 (`gate.md` §5.2): why the core decided what it did. Its verdict
 * and reason codes are the core outcome, before approvals, rate limits and simulate.
 */
export function explainOutcome(outcome: GateOutcome, refs: ExplainRefs): JsonObject {
  const reasons = outcome.reasonCodes;
  const missing = new Set<string>();
  for (const code of reasons) {
    if (code.startsWith('fail_closed_missing_')) missing.add(code.slice('fail_closed_missing_'.length));
    const mapped = MISSING_FIELD_CODES[code];
    if (mapped) missing.add(mapped);
  }
  const ctx = outcome.preparedIntent?.context;
  const contextStatus = outcome.contextSource.split(',').includes('context_envelope')
    ? 'verified'
    : reasons.includes('context_evidence_missing')
      ? 'missing'
      : ctx?.context_set_digest
        ? 'present'
        : 'not_required';
  const out: JsonObject = {
    ok: true,
    schema_id: POLICY_EXPLAIN_SCHEMA_ID,
    schema_version: '1.0.0',
    created_at: outcome.result.created_at,
    producer_version: outcome.result.producer_version,
    verdict: outcome.verdict,
    matched_rule: outcome.matchedRule,
    matched_rules: outcome.matchedRules.map((r) => ({ name: r.name, priority: r.priority, effect: r.effect })),
    reason_codes: reasons,
    violations: outcome.violations,
    missing_fields: [...missing].sort(),
    fail_closed_reason_codes: reasons.filter((c) => c.startsWith('fail_closed_')),
    approval_required: outcome.verdict === 'require_approval',
    required_approvals: outcome.verdict === 'require_approval' ? Math.max(outcome.minApprovals, 1) : 0,
    valid_approvals: refs.validApprovals ?? 0,
    require_broker_credential: outcome.requireBrokerCredential,
    broker_reference: outcome.brokerReference,
    broker_scopes: outcome.brokerScopes,
    require_delegation: outcome.requireDelegation,
    required_delegation_scopes: outcome.delegationScopes,
    credential_posture: {
      present: Boolean(ctx?.credential_ref),
      source: ctx?.credential_source ?? '',
      access_type: ctx?.credential_access_type ?? '',
      issuer: ctx?.credential_issuer ?? '',
      ttl_seconds: ctx?.credential_ttl_seconds ?? 0,
      credential_ref: ctx?.credential_ref ?? '',
    },
    context_evidence_status: contextStatus,
    proof_refs: {
      trace_id: refs.traceId,
      trace_path: refs.tracePath,
      ...(refs.approvalAuditPath ? { approval_audit_path: refs.approvalAuditPath } : {}),
      ...(refs.delegationAuditPath ? { delegation_audit_path: refs.delegationAuditPath } : {}),
    },
  };
  if (outcome.freezeWindow) out['freeze_window'] = freezeDecisionJson(outcome.freezeWindow);
  if (outcome.sandbox) out['sandbox'] = sandboxDecisionJson(outcome.sandbox);
  if (outcome.killSwitch) out['kill_switch'] = killSwitchDecisionJson(outcome.killSwitch);
  return out;
}
