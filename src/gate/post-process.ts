import { uniqueSorted } from '../canon/index.js';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import type { Verdict } from '../policy/types.js';

/**
 * The decision as the CLI post-processing (§3.6 steps 4–11) refines it. Each step is a pure
 * function applied in the reference's order by the gate runner.
 */
export interface Decision {
  verdict: Verdict;
  reasonCodes: string[];
  violations: string[];
  simulatedVerdict?: Verdict;
  simulatedReasonCodes?: string[];
  wouldHaveBlocked?: boolean;
}

function add(d: Decision, verdict: Verdict | undefined, reasons: readonly string[], violations: readonly string[]): Decision {
  return {
    ...d,
    verdict: verdict ?? d.verdict,
    reasonCodes: uniqueSorted([...d.reasonCodes, ...reasons]),
    violations: uniqueSorted([...d.violations, ...violations]),
  };
}

/** Steps 4–5: reaching a rate limit or destructive budget forces `block`. */
export function applyLimitExceeded(d: Decision, code: 'rate_limit_exceeded' | 'destructive_budget_exceeded'): Decision {
  return add(d, 'block', [code], [code]);
}

export interface DelegationRollup {
  granted: boolean;
  /** Per-token failure codes plus the roll-up code. */
  reasonCodes: string[];
}

/** Step 7. */
export function applyDelegation(d: Decision, r: DelegationRollup): Decision {
  if (r.granted) return add(d, undefined, ['delegation_granted'], []);
  return add(d, 'block', r.reasonCodes, ['delegation_not_granted']);
}

export interface ApprovalRollup {
  granted: boolean;
  reasonCodes: string[];
  /** `approval_not_granted` whenever the roll-up failed. */
  violations: string[];
}

/** Step 8 (only while the verdict is still `require_approval`): success turns it into `allow`. */
export function applyApproval(d: Decision, r: ApprovalRollup): Decision {
  if (r.granted) return add(d, 'allow', [...r.reasonCodes, 'approval_granted'], []);
  return add(d, undefined, r.reasonCodes, r.violations);
}

/**
 * Step 9 with no credential broker configured (Ward supports only `--credential-broker off`): a
 * winning rule that requires a brokered credential cannot be satisfied, so an `allow` becomes a
 * `block` rather than running without the credential.
 */
export function applyBrokerUnavailable(d: Decision): Decision {
  return add(d, 'block', ['broker_credential_required'], ['broker_credential_missing']);
}

/** Step 10: `--simulate` never enforces; it reports what would have happened. */
export function applySimulate(d: Decision): Decision {
  const simulated: Decision = {
    ...d,
    simulatedVerdict: d.verdict,
    simulatedReasonCodes: d.reasonCodes,
    reasonCodes: uniqueSorted([...d.reasonCodes, 'simulate_mode_non_enforcing']),
  };
  if (d.verdict === 'block' || d.verdict === 'require_approval') {
    simulated.wouldHaveBlocked = true;
    simulated.verdict = 'allow';
    simulated.violations = [];
    simulated.reasonCodes = uniqueSorted([...simulated.reasonCodes, `simulated_${d.verdict}`]);
  }
  return simulated;
}

/** Step 11: block 3, require_approval 4, allow and dry_run 0. */
export function exitCodeForVerdict(verdict: Verdict): ExitCode {
  if (verdict === 'block') return EXIT.BLOCKED;
  if (verdict === 'require_approval') return EXIT.APPROVAL_REQUIRED;
  return EXIT.OK;
}
