import type { NormalizedIntent } from '../intent/types.js';
import type { NormalizedPolicy } from '../policy/types.js';
import { uniqueSorted } from '../canon/index.js';
import { declaredTargets } from '../intent/discover.js';

export function failClosedApplies(policy: NormalizedPolicy, riskClass: string): boolean {
  return policy.fail_closed.enabled && policy.fail_closed.risk_classes.includes(riskClass);
}

const REQUIRED_FIELD_CHECKS: Record<string, (i: NormalizedIntent) => [string, string] | undefined> = {
  // The field the intent declares (the reference's check): targets found in the arguments are checked, but do not fill it.
  targets: (i) => (declaredTargets(i.targets).length === 0 ? ['fail_closed_missing_targets', 'missing_targets'] : undefined),
  arg_provenance: (i) =>
    i.arg_provenance.length === 0 ? ['fail_closed_missing_arg_provenance', 'missing_arg_provenance'] : undefined,
  endpoint_class: (i) =>
    i.targets.some(unknownClass) ? ['fail_closed_missing_endpoint_class', 'missing_endpoint_class'] : undefined,
  delegation: (i) => (i.delegation ? undefined : ['fail_closed_missing_delegation', 'missing_delegation']),
  context_evidence: (i) =>
    i.context.context_set_digest === '' ? ['context_evidence_missing', 'missing_context_evidence'] : undefined,
};

function unknownClass(t: { endpoint_class: string }): boolean {
  return t.endpoint_class === '' || t.endpoint_class === 'other';
}

function highRiskFieldMissing(intent: NormalizedIntent, field: string): boolean {
  const ctx = intent.context;
  if (field === 'credential_ttl_seconds') return ctx.credential_ttl_seconds <= 0;
  if (field === 'agent_identity') return ctx.agent_identity === undefined;
  const value = (ctx as unknown as Record<string, unknown>)[field];
  return typeof value !== 'string' || value === '';
}

/**
 * §3.1 step 2: the fields a fail-closed risk class must carry. Any finding blocks before rules run.
 * Returns reason codes and violations (sorted), empty when the intent passes.
 */
export function failClosedFindings(policy: NormalizedPolicy, intent: NormalizedIntent): { reasons: string[]; violations: string[] } {
  const reasons: string[] = [];
  const violations: string[] = [];
  for (const field of policy.fail_closed.required_fields) {
    const hit = REQUIRED_FIELD_CHECKS[field]?.(intent);
    if (hit) {
      reasons.push(hit[0]);
      violations.push(hit[1]);
    }
  }
  for (const field of policy.fail_closed.required_high_risk_fields) {
    if (highRiskFieldMissing(intent, field)) {
      reasons.push(`fail_closed_missing_${field}`);
      violations.push(`missing_${field}`);
    }
  }
  if (intent.targets.some(unknownClass)) {
    reasons.push('fail_closed_endpoint_class_unknown');
    violations.push('endpoint_class_unknown');
  }
  return { reasons: uniqueSorted(reasons), violations: uniqueSorted(violations) };
}
