import type { NormalizedPolicy } from '../policy/types.js';

/**
 * Whether an approval for this decision binds the session (docs/approvals.md "Call or session"):
 * when any matched rule says `approval_binding: session`. Otherwise an approval binds the call —
 * tool, arguments, targets and context without the run, session and request ids — so a client
 * that opens a new session per call can retry the call it had approved.
 */
export function approvalSessionBound(policy: NormalizedPolicy, matchedRules: Iterable<string>): boolean {
  const names = new Set(matchedRules);
  return policy.rules.some((r) => r.approval_binding === 'session' && names.has(r.name));
}
