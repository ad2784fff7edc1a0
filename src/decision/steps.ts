import { approvalSessionBound } from './approval-binding.js';
import { dirname, join } from 'node:path';
import { uniqueSorted, type GoTime, type JsonObject } from '../canon/index.js';
import type { GateOutcome } from '../gate/evaluate.js';
import {
  applyApproval,
  applyBrokerUnavailable,
  applyDelegation,
  applyLimitExceeded,
  applySimulate,
  type Decision,
} from '../gate/post-process.js';
import { delegationDigest } from '../intent/digest.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { LoadedPolicy } from '../policy/types.js';
import { fileLimitCounter, type LimitCounter, type RateLimitUse } from '../state/rate-limit.js';
import { FileTokenLedger, type ApprovalLedger, type TokenLedger } from '../state/token-ledger.js';
import { andThen, type MaybePromise } from './maybe-async.js';
import type { ApprovalStep, DecisionSubject, DelegationStep, GateRuntime, TokenContext } from './types.js';

/**
 * The steps after evaluation (`gate.md` §3.6 steps 4–10, `mcp-decision-service.md` §6.3 steps
 * 4–5). Each host lists the steps it runs, in order; where hosts differ, it is in these lists:
 *
 * | host                   | evaluation                           | steps                                                                     |
 * |------------------------|--------------------------------------|---------------------------------------------------------------------------|
 * | `gate eval`            | policy, or approved-script registry  | rate_limit, destructive_budget, delegation, approval, broker, [simulate]  |
 * | daemon                 | policy                               | rate_limit, destructive_budget, delegation, approval, broker, [simulate]  |
 * | SDK                    | policy                               | rate_limit, destructive_budget, delegation, approval, broker, [simulate]  |
 * | MCP proxy              | stricter of the annotation readings  | rate_limit, destructive_budget, delegation, approval, broker, [witnessed] |
 * | MCP decision service   | policy                               | mcp_trust, emergency_stop                                                 |
 *
 * The MCP proxy's changed tools and refused calls are blocked before policy (no step runs);
 * see `blockBeforePolicy` in pipeline.ts.
 *
 * Steps run synchronously, except where the state they consult is shared through the cluster
 * database (the daemon with `--store postgres://…`): `rate_limit`, `destructive_budget` and
 * `approval` are written once over a counter or ledger that may answer with a promise
 * (maybe-async.ts). Over local files they return nothing and `decide` stays synchronous; over the
 * database they return a promise and only `decideAsync` may run them.
 */

export type StepName =
  | 'rate_limit'
  | 'destructive_budget'
  | 'delegation'
  | 'approval'
  | 'broker'
  | 'simulate'
  | 'mcp_trust'
  | 'emergency_stop'
  | 'witnessed';

export interface DecisionStepDef {
  readonly name: StepName;
  /** A promise only when the step consults shared state (see above); nothing otherwise. */
  apply(s: DecisionState): MaybePromise<void>;
}

/** A decision between evaluation and signing: the steps refine `decision` and record what they saw. */
export interface DecisionState {
  readonly policy: LoadedPolicy;
  readonly subject: DecisionSubject;
  readonly outcome: GateOutcome;
  /** False when the intent could not be evaluated (fail-closed block): no step applies to it. */
  readonly evaluable: boolean;
  /** The evaluation clock and the wall clock (limits, token expiry). */
  readonly now: GoTime;
  readonly wallNow: GoTime;
  /** The names of the steps this decision runs (a step may depend on a later one, e.g. approval on simulate). */
  readonly stepNames: ReadonlySet<StepName>;
  decision: Decision;
  readonly records: StepRecords;
}

/** What the steps saw, for the trace and the hosts' outputs. */
export interface StepRecords {
  /** Rate-limit and destructive-budget counters consumed, in step order. */
  limits: { prefix: 'rate_limit' | 'destructive_budget'; use: RateLimitUse }[];
  delegation?: DelegationStep;
  approval?: ApprovalStep;
  /**
   * max(min_approvals, 1) when the winning outcome requires approval, also when the approval step
   * did not run because a failed delegation (or a limit) blocked first (`gate.md` §3.6 step 7).
   */
  requiredApprovals?: number;
  simulated?: boolean;
  mcpTrust?: JsonObject;
  emergencyStop?: EmergencyStop;
}

/** The job runtime's answer for a call's `context.job_id` (`mcp-decision-service.md` §6.3 step 5). */
export type EmergencyStop = { status: 'running' } | { status: 'stopped' } | { status: 'unavailable'; detail: string };

/** A promise only over the cluster's token ledger (token-steps.ts). */
export type ApprovalTokens = (t: TokenContext) => MaybePromise<ApprovalStep>;
export type DelegationTokens = (t: TokenContext) => DelegationStep;

/** §3.6 step 4: the winning rate limit. `counter`: a counter file's path, or a counter. */
function rateLimit(counter: string | LimitCounter): DecisionStepDef {
  const limits = counterOf(counter);
  return {
    name: 'rate_limit',
    apply(s) {
      if (!s.evaluable || !s.outcome.rateLimit) return;
      return andThen(limits.consume(s.outcome.rateLimit, subjectOf(s.subject.intent), s.wallNow), (use) => recordLimit(s, 'rate_limit', use));
    },
  };
}

/** §3.6 step 5: the destructive budget, counted only for calls with a destructive target. */
function destructiveBudget(counter: string | LimitCounter): DecisionStepDef {
  const limits = counterOf(counter);
  return {
    name: 'destructive_budget',
    apply(s) {
      const intent = s.subject.intent;
      if (!s.evaluable || !s.outcome.destructiveBudget || !hasDestructiveTarget(intent)) return;
      const toolName = `destructive_budget|${intent.tool_name}`;
      return andThen(limits.consume(s.outcome.destructiveBudget, { ...subjectOf(intent), toolName }, s.wallNow), (use) => recordLimit(s, 'destructive_budget', use));
    },
  };
}

function recordLimit(s: DecisionState, prefix: 'rate_limit' | 'destructive_budget', use: RateLimitUse): void {
  s.records.limits.push({ prefix, use });
  if (use.exceeded) s.decision = applyLimitExceeded(s.decision, `${prefix}_exceeded`);
}

function counterOf(counter: string | LimitCounter): LimitCounter {
  return typeof counter === 'string' ? fileLimitCounter(counter) : counter;
}

/** §3.6 step 7: without a token source, a required delegation is missing. */
function delegation(rt: GateRuntime, tokens: DelegationTokens | undefined): DecisionStepDef {
  return {
    name: 'delegation',
    apply(s) {
      if (!s.evaluable || !s.outcome.requireDelegation) return;
      const step = tokens?.(tokenContext(rt, s)) ?? { granted: false, reasonCodes: ['delegation_token_missing'], validDelegations: 0, delegationRef: '' };
      s.records.delegation = step;
      s.decision = applyDelegation(s.decision, step);
    },
  };
}

/** §3.6 step 8, while the verdict is still `require_approval`: without a token source, approval is missing. */
function approval(rt: GateRuntime, tokens: ApprovalTokens | undefined): DecisionStepDef {
  return {
    name: 'approval',
    apply(s) {
      if (!s.evaluable) return;
      if (s.outcome.verdict === 'require_approval') s.records.requiredApprovals = Math.max(s.outcome.minApprovals, 1);
      if (s.decision.verdict !== 'require_approval') return;
      const step: MaybePromise<ApprovalStep> = tokens?.(tokenContext(rt, s)) ?? {
        granted: false,
        reasonCodes: ['approval_token_missing'],
        violations: ['approval_not_granted'],
        requiredApprovals: Math.max(s.outcome.minApprovals, 1),
        validApprovals: 0,
        approvalRef: '',
      };
      return andThen(step, (approved) => {
        s.records.approval = approved;
        s.decision = applyApproval(s.decision, approved);
      });
    },
  };
}

/**
 * The approval step behind a person's denial (the console's inbox): a call `denied` says a person
 * refused is blocked with `approval_denied` instead of being asked again, and tokens do not
 * override the denial. Otherwise `step` decides.
 */
function deniedApproval(step: DecisionStepDef, denied: (s: DecisionState) => boolean): DecisionStepDef {
  return {
    name: step.name,
    apply(s) {
      if (!s.evaluable || s.decision.verdict !== 'require_approval' || !denied(s)) return step.apply(s);
      s.records.requiredApprovals = Math.max(s.outcome.minApprovals, 1);
      s.decision = {
        ...s.decision,
        verdict: 'block',
        reasonCodes: uniqueSorted([...s.decision.reasonCodes, 'approval_denied']),
        violations: uniqueSorted([...s.decision.violations, 'approval_denied']),
      };
    },
  };
}

/** §3.6 step 9 with no credential broker (Ward supports only `off`): an allow that needs one is blocked. */
const broker: DecisionStepDef = {
  name: 'broker',
  apply(s) {
    if (s.evaluable && s.outcome.requireBrokerCredential && s.decision.verdict === 'allow') s.decision = applyBrokerUnavailable(s.decision);
  },
};

/**
 * What the MCP proxy's witness contributed to the decision, as informational reason codes whatever
 * the verdict (`arg_provenance_witnessed`: an argument came out of an earlier tool result, its
 * provenance is already `tool_output` in the intent; `context_evidence_witnessed`: the bound
 * envelope is Ward's own), so the client and the operator learn why a rule held.
 */
function witnessed(codes: readonly string[]): DecisionStepDef {
  return {
    name: 'witnessed',
    apply(s) {
      if (s.evaluable) s.decision = { ...s.decision, reasonCodes: uniqueSorted([...s.decision.reasonCodes, ...codes]) };
    },
  };
}

/** §3.6 step 10: report what would have happened, enforce nothing. */
const simulate: DecisionStepDef = {
  name: 'simulate',
  apply(s) {
    s.records.simulated = true;
    s.decision = applySimulate(s.decision);
  },
};

/** The MCP trust check (§6.7 of the decision service); the host evaluates the server's trust. */
export interface McpTrustCheck {
  /** Applies the trust decision to the verdict so far and returns the trace's `mcp_trust` object. */
  (s: DecisionState): { decision: Decision; record: JsonObject } | undefined;
}

function mcpTrust(check: McpTrustCheck): DecisionStepDef {
  return {
    name: 'mcp_trust',
    apply(s) {
      const r = check(s);
      if (!r) return;
      s.decision = r.decision;
      s.records.mcpTrust = r.record;
    },
  };
}

/** §6.3 step 5: a stopped job, or one whose state cannot be read, blocks its calls. */
function emergencyStop(check: (jobId: string) => EmergencyStop): DecisionStepDef {
  return {
    name: 'emergency_stop',
    apply(s) {
      const jobId = s.subject.intent.context.job_id;
      if (!jobId) return;
      const stop = check(jobId);
      s.records.emergencyStop = stop;
      if (stop.status === 'running') return;
      const code = stop.status === 'stopped' ? ['emergency_stop_preempted', 'emergency_stop_active'] : ['emergency_stop_state_unavailable', 'emergency_stop_state_unavailable'];
      s.decision = {
        verdict: 'block',
        reasonCodes: uniqueSorted([...s.decision.reasonCodes, code[0]!]),
        violations: uniqueSorted([...s.decision.violations, code[1]!]),
      };
    },
  };
}

/** Step constructors, for hosts to list. */
export const steps = { rateLimit, destructiveBudget, delegation, approval, deniedApproval, broker, simulate, mcpTrust, emergencyStop, witnessed };

/** `gate eval`'s steps (§3.6 steps 4–10) with the given token sources. */
export function gateEvalSteps(
  rt: GateRuntime,
  tokens: { approvals?: ApprovalTokens | undefined; delegations?: DelegationTokens | undefined },
  options: { simulate?: boolean | undefined } = {},
): DecisionStepDef[] {
  const limits = rt.sharedState?.limits ?? rt.rateLimitStatePath;
  return [
    rateLimit(limits),
    destructiveBudget(limits),
    delegation(rt, tokens.delegations),
    approval(rt, tokens.approvals),
    broker,
    ...(options.simulate ? [simulate] : []),
  ];
}

/** The file ledger of a runtime's approval steps, or undefined with `approvalTokenReuse: 'ttl'`. */
export function approvalLedgerOf(rt: GateRuntime): TokenLedger | undefined {
  if (rt.approvalTokenReuse === 'ttl') return undefined;
  return new FileTokenLedger(rt.tokenLedgerDir ?? join(dirname(rt.traceDir), 'token_ledger'));
}

/** The ledger a decision consults: the cluster's when the runtime shares state, else the file ledger. */
function decisionLedgerOf(rt: GateRuntime): ApprovalLedger | undefined {
  if (rt.approvalTokenReuse === 'ttl') return undefined;
  return rt.sharedState?.tokens ?? approvalLedgerOf(rt);
}

/** Token steps bind to digests only, so the trace id they may reference is the provisional one. */
function tokenContext(rt: GateRuntime, s: DecisionState): TokenContext {
  const intent = s.subject.intent;
  return {
    intent,
    intentDigest: s.subject.intentDigest,
    policyDigest: s.policy.digest,
    delegationDigest: intent.delegation ? delegationDigest(intent.delegation) : '',
    outcome: s.outcome,
    traceId: '',
    wallNow: s.wallNow,
    approvalLedger: decisionLedgerOf(rt),
    consumeApprovals: !s.stepNames.has('simulate') && !s.outcome.requireBrokerCredential,
    allowedRootDelegators: allowedRootDelegators(s.policy, s.outcome),
    approvalSessionBound: approvalSessionBound(s.policy.policy, s.outcome.matchedRules.map((r) => r.name)),
  };
}

/**
 * The matched rules' `allowed_delegator_identities`, intersected (each matched rule's restriction
 * holds for the chain's root); undefined when no matched rule restricts delegators.
 */
function allowedRootDelegators(policy: LoadedPolicy, outcome: GateOutcome): string[] | undefined {
  const names = new Set(outcome.matchedRules.map((r) => r.name));
  let allowed: string[] | undefined;
  for (const rule of policy.policy.rules) {
    if (!names.has(rule.name) || rule.match.allowed_delegator_identities.length === 0) continue;
    const list = rule.match.allowed_delegator_identities;
    allowed = allowed ? allowed.filter((identity) => list.includes(identity)) : [...list];
  }
  return allowed;
}

function subjectOf(intent: NormalizedIntent): { toolName: string; identity: string } {
  return { toolName: intent.tool_name, identity: intent.context.identity };
}

function hasDestructiveTarget(intent: NormalizedIntent): boolean {
  if (intent.targets.some((t) => t.destructive)) return true;
  return intent.script?.steps.some((s) => s.targets.some((t) => t.destructive)) ?? false;
}
