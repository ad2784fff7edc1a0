import type { JsonObject, JsonValue } from '../canon/index.js';
import { freezeDecisionJson, sandboxDecisionJson } from '../gate/decisions.js';
import { killSwitchDecisionJson } from '../gate/kill-switch.js';
import type { StepVerdict } from '../gate/script.js';
import type { Decided } from './pipeline.js';

/**
 * The `gate eval --json` object (`gate.md` §5.2, without `correlation_id`) of a decision whose
 * trace is durable at `tracePath`. Keys follow the order they always had (the CLI sorts them;
 * the SDK hands the object over as is). Audit records are written here, after the trace.
 */
export function gateEvalOutput(d: Decided, tracePath: string, profile: string, warnings: readonly string[] | undefined): JsonObject {
  const { outcome, records, decision } = d;
  const intent = d.subject.intent;
  const out: JsonObject = {};
  for (const { prefix, use } of records.limits) {
    out[`${prefix}_scope`] = use.scope;
    out[`${prefix}_key`] = use.key;
    out[`${prefix}_used`] = use.used;
    out[`${prefix}_remaining`] = use.remaining;
  }
  Object.assign(out, {
    ok: true,
    profile,
    verdict: decision.verdict,
    reason_codes: decision.reasonCodes,
    violations: decision.violations,
    matched_rule: outcome.matchedRule,
    phase: intent.context.phase,
    intent_digest: d.subject.intentDigest,
    policy_digest: String(d.trace['policy_digest']),
    trace_id: String(d.trace['trace_id']),
    trace_path: tracePath,
    context_set_digest: intent.context.context_set_digest,
    context_evidence_mode: intent.context.context_evidence_mode,
    context_ref_count: intent.context.context_refs.length,
    context_source: outcome.contextSource,
  } satisfies JsonObject);
  if (outcome.script) {
    Object.assign(out, {
      script: true,
      step_count: outcome.script.stepCount,
      script_hash: outcome.script.scriptHash,
      composite_risk_class: outcome.script.compositeRiskClass,
      step_verdicts: outcome.script.stepVerdicts.map(stepVerdictJson),
    });
  }
  tokenFields(out, d);
  if (d.fastPath?.matched) {
    out['pre_approved'] = true;
    out['pattern_id'] = d.fastPath.patternId;
  } else if (d.fastPath) out['registry_reason'] = d.fastPath.reason;
  if (outcome.freezeWindow) out['freeze_window'] = freezeDecisionJson(outcome.freezeWindow);
  if (outcome.sandbox) out['sandbox'] = sandboxDecisionJson(outcome.sandbox);
  if (outcome.killSwitch) out['kill_switch'] = killSwitchDecisionJson(outcome.killSwitch);
  if (records.simulated) {
    out['simulate_mode'] = true;
    out['would_have_blocked'] = decision.wouldHaveBlocked ?? false;
    out['simulated_verdict'] = decision.simulatedVerdict ?? '';
    out['simulated_reason_codes'] = decision.simulatedReasonCodes ?? [];
  }
  if (warnings?.length) out['warnings'] = [...warnings];
  if (outcome.intentError) out['warnings'] = [...((out['warnings'] as string[]) ?? []), `intent not evaluable: ${outcome.intentError.message}`];
  return out;
}

/** Approval and delegation steps; their audit records reference the (durable) trace. */
function tokenFields(out: JsonObject, d: Decided): void {
  const { approval, delegation } = d.records;
  if (approval) {
    out['approval_ref'] = approval.approvalRef;
    out['required_approvals'] = approval.requiredApprovals;
    out['valid_approvals'] = approval.validApprovals;
    if (approval.writeAudit) out['approval_audit_path'] = approval.writeAudit(d.trace);
  } else if (d.records.requiredApprovals !== undefined) out['required_approvals'] = d.records.requiredApprovals;
  if (delegation) {
    out['delegation_ref'] = delegation.delegationRef;
    out['delegation_required'] = true;
    out['valid_delegations'] = delegation.validDelegations;
    if (delegation.writeAudit) out['delegation_audit_path'] = delegation.writeAudit(d.trace);
  }
}

function stepVerdictJson(s: StepVerdict): JsonValue {
  const o: JsonObject = { index: s.index, tool_name: s.tool_name, verdict: s.verdict };
  if (s.reason_codes.length) o['reason_codes'] = s.reason_codes;
  if (s.violations.length) o['violations'] = s.violations;
  if (s.matched_rule) o['matched_rule'] = s.matched_rule;
  return o;
}
