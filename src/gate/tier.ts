import { compareUtf8, uniqueSorted, type GoTime } from '../canon/index.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { NormalizedPolicy, PolicyRule, RateLimitConfig, Verdict } from '../policy/types.js';
import { pickFreezeDecision, pickSandboxDecision, type FreezeWindowDecision, type SandboxDecision } from './decisions.js';
import { ruleMatches } from './match.js';
import type { EndpointFacts } from './constraints.js';
import { evaluateMatchedRule } from './rule.js';
import { visitCandidates } from './rule-index.js';
import { mostRestrictive } from './verdict.js';

export interface MatchedRuleRef {
  name: string;
  priority: number;
  effect: Verdict;
}

/** The core outcome of one (non-script) intent against a policy. */
export interface SingleOutcome {
  verdict: Verdict;
  reasonCodes: string[];
  violations: string[];
  /** Tier rule names, sorted, comma-joined ("" when the default applied). */
  matchedRule: string;
  matchedRules: MatchedRuleRef[];
  minApprovals: number;
  requireDistinctApprovers: boolean;
  requireBrokerCredential: boolean;
  brokerReference: string;
  brokerScopes: string[];
  requireDelegation: boolean;
  delegationScopes: string[];
  rateLimit: RateLimitConfig | undefined;
  destructiveBudget: RateLimitConfig | undefined;
  freezeWindow: FreezeWindowDecision | undefined;
  sandbox: SandboxDecision | undefined;
}

/**
 * `evaluateSingleIntent` (§3.2): the first matching priority tier decides. Only the rules that can
 * match are walked (rule-index.ts); skipping a rule that does not match changes nothing in this walk.
 */
export function evaluateSingleIntent(policy: NormalizedPolicy, intent: NormalizedIntent, now: GoTime, facts?: EndpointFacts): SingleOutcome {
  const tier: PolicyRule[] = [];
  visitCandidates(policy, intent, (rule) => {
    // A matching rule of another priority ends the tier.
    if (tier.length && rule.priority !== tier[0]!.priority) return !ruleMatches(rule, intent);
    if (ruleMatches(rule, intent)) tier.push(rule);
    return true;
  });
  if (tier.length === 0) return defaultOutcome(policy.default_verdict);

  const evaluations = tier.map((rule) => evaluateMatchedRule(rule, intent, now, facts));
  let verdict: Verdict = 'allow';
  for (const e of evaluations) verdict = mostRestrictive(verdict, e.effect);

  const reasons: string[] = [];
  const violations: string[] = [];
  const brokerRefs: string[] = [];
  const brokerScopes: string[] = [];
  const delegationScopes: string[] = [];
  const out = defaultOutcome(verdict);
  out.matchedRule = uniqueSorted(tier.map((r) => r.name)).join(',');
  out.matchedRules = tier.map((r) => ({ name: r.name, priority: r.priority, effect: r.effect }));
  out.minApprovals = 0;
  for (const e of evaluations) {
    if (e.effect !== verdict) continue;
    const r = e.rule;
    reasons.push(...e.reasons);
    violations.push(...e.violations);
    out.minApprovals = Math.max(out.minApprovals, e.minApprovals);
    out.requireDistinctApprovers ||= r.require_distinct_approvers;
    out.requireBrokerCredential ||= r.require_broker_credential;
    if (r.broker_reference) brokerRefs.push(r.broker_reference);
    brokerScopes.push(...r.broker_scopes);
    out.requireDelegation ||= r.match.require_delegation;
    delegationScopes.push(...r.match.delegation_scopes);
    out.rateLimit = tighterLimit(out.rateLimit, r.rate_limit);
    out.destructiveBudget = tighterLimit(out.destructiveBudget, r.destructive_budget);
    if (e.freezeWindow) out.freezeWindow = pickFreezeDecision(out.freezeWindow, e.freezeWindow);
    if (e.sandbox) out.sandbox = pickSandboxDecision(out.sandbox, e.sandbox);
  }
  out.reasonCodes = uniqueSorted(reasons);
  out.violations = uniqueSorted(violations);
  out.brokerReference = uniqueSorted(brokerRefs).join(',');
  out.brokerScopes = uniqueSorted(brokerScopes);
  out.delegationScopes = uniqueSorted(delegationScopes);
  if (verdict !== 'require_approval') {
    out.minApprovals = 0;
    out.requireDistinctApprovers = false;
  }
  return out;
}

/** The outcome when no rule matched: the policy default and `default_<verdict>`. */
export function defaultOutcome(verdict: Verdict): SingleOutcome {
  return {
    verdict,
    reasonCodes: [`default_${verdict}`],
    violations: [],
    matchedRule: '',
    matchedRules: [],
    minApprovals: verdict === 'require_approval' ? 1 : 0,
    requireDistinctApprovers: false,
    requireBrokerCredential: false,
    brokerReference: '',
    brokerScopes: [],
    requireDelegation: false,
    delegationScopes: [],
    rateLimit: undefined,
    destructiveBudget: undefined,
    freezeWindow: undefined,
    sandbox: undefined,
  };
}

/** Fewer requests wins; on a tie `minute` beats `hour`, then the smaller scope. Disabled limits never win. */
export function tighterLimit(current: RateLimitConfig | undefined, next: RateLimitConfig): RateLimitConfig | undefined {
  if (next.requests <= 0) return current;
  if (!current) return next;
  if (next.requests !== current.requests) return next.requests < current.requests ? next : current;
  if (next.window !== current.window) return next.window === 'minute' ? next : current;
  return compareUtf8(next.scope, current.scope) < 0 ? next : current;
}
