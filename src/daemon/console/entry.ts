import { uniqueSortedLower } from '../../canon/index.js';
import { canonicalTarget } from '../../intent/canonical.js';
import { argsDigest, delegationDigest, intentDigest } from '../../intent/digest.js';
import type { NormalizedIntent } from '../../intent/types.js';
import { approvalCallOf, approvalOpCount, approvalTargetCount, checkedTargets, requiredApprovalScope } from '../../tokens/index.js';
import type { ArgsView, NewEntry, TargetView } from './inbox.js';

/*
 * What an inbox entry says about a call, derived from the normalized intent and nothing else
 * (spec decision 16, "approvals bind what the approver saw"): the tool, the targets in their
 * canonical form, the arguments (or their digest), who asked, the digests and the bounds the
 * token will carry. The daemon's own decisions and the reports of MCP proxies both come here, so
 * a reporter's text can never stand beside a digest it does not describe.
 */

/** What the policy said about the call: from this daemon's own evaluation, never from a reporter. */
export interface EntryVerdict {
  matchedRule: string;
  reasonCodes: string[];
  violations: string[];
  requiredApprovals: number;
  policyDigest: string;
  traceId: string;
  /** A matched rule binds approvals to the session (`approval_binding: session`): the token gets no call digest. */
  sessionBound: boolean;
}

export interface EntrySource {
  source: 'daemon' | 'reported';
  reporter?: string | undefined;
  requestedAt?: string | undefined;
}

export function targetViews(intent: NormalizedIntent): TargetView[] {
  const workspace = intent.context.workspace;
  return checkedTargets(intent).map((t) => ({
    kind: t.kind,
    value: t.value,
    canonical: canonicalTarget(t, workspace).value ?? t.value,
    operation: t.operation,
    endpoint_class: t.endpoint_class,
    endpoint_domain: t.endpoint_domain,
    sensitivity: t.sensitivity,
    destructive: t.destructive,
  }));
}

export function entryFromIntent(intent: NormalizedIntent, verdict: EntryVerdict, from: EntrySource, showArgs: boolean): NewEntry {
  const digest = argsDigest(intent);
  const call = approvalCallOf(intent);
  const args: ArgsView = showArgs ? { redacted: false, args_digest: digest, values: intent.args } : { redacted: true, args_digest: digest };
  return {
    source: from.source,
    ...(from.reporter ? { reporter: from.reporter } : {}),
    tool_name: intent.tool_name,
    targets: targetViews(intent),
    matched_rule: verdict.matchedRule,
    reason_codes: verdict.reasonCodes,
    violations: verdict.violations,
    identity: intent.context.identity,
    agent_id: intent.context.agent_id,
    session_id: intent.context.session_id,
    requested_at: from.requestedAt ?? new Date().toISOString(),
    intent_digest: intentDigest(intent),
    policy_digest: verdict.policyDigest,
    delegation_binding_digest: intent.delegation ? delegationDigest(intent.delegation) : '',
    trace_id: verdict.traceId,
    required_scope: uniqueSortedLower(requiredApprovalScope(intent)),
    required_approvals: Math.min(Math.max(verdict.requiredApprovals, 1), 16),
    max_targets: approvalTargetCount(intent),
    max_ops: approvalOpCount(intent),
    target_count: approvalTargetCount(intent),
    op_count: approvalOpCount(intent),
    args,
    call: { tool_name: call.toolName, targets: call.targets, args_digest: call.argsDigest, call_digest: verdict.sessionBound ? '' : call.callDigest },
  };
}
