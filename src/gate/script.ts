import { uniqueSorted, type GoTime, type JsonObject } from '../canon/index.js';
import type { NormalizedIntent, ScriptStep, Target } from '../intent/types.js';
import type { NormalizedPolicy, Verdict } from '../policy/types.js';
import { MAX_SCRIPT_STEPS } from '../intent/normalize.js';
import type { EndpointFacts } from './constraints.js';
import { pickFreezeDecision, pickSandboxDecision } from './decisions.js';
import { evaluateSingleIntent, tighterLimit, type SingleOutcome } from './tier.js';
import { mostRestrictive } from './verdict.js';

export interface StepVerdict {
  index: number;
  tool_name: string;
  verdict: Verdict;
  reason_codes: string[];
  violations: string[];
  matched_rule: string;
}

export type StepRisk = 'low' | 'medium' | 'high';

export interface ScriptOutcome extends SingleOutcome {
  stepCount: number;
  compositeRiskClass: StepRisk;
  stepVerdicts: StepVerdict[];
  /** Sorted union of the steps' matched rule names (the trace's `matched_rule_ids`). */
  matchedRuleIds: string[];
  /** Whether Wrkr enrichment applied to any step. */
  wrkrApplied: boolean;
}

/** Per-step hook: Wrkr enrichment of the step's auth_context. */
export type StepEnricher = (authContext: JsonObject | undefined, toolName: string) => { authContext: JsonObject | undefined; applied: boolean };

/** `evaluateScriptPolicyDetailed` (§3.4). Fail-closed checks have already run on the script-level intent. */
export function evaluateScript(
  policy: NormalizedPolicy,
  intent: NormalizedIntent,
  now: GoTime,
  enrich: StepEnricher | undefined,
  facts?: EndpointFacts,
): ScriptOutcome {
  const steps = intent.script!.steps;
  let wrkrApplied = false;
  const outcomes = steps.map((step) => {
    let authContext = intent.context.auth_context ? structuredClone(intent.context.auth_context) : undefined;
    if (enrich) {
      const r = enrich(authContext, step.tool_name);
      authContext = r.authContext;
      wrkrApplied ||= r.applied;
    }
    return evaluateSingleIntent(policy, stepIntent(intent, step, authContext), now, facts);
  });

  let verdict: Verdict = 'allow';
  for (const o of outcomes) verdict = mostRestrictive(verdict, o.verdict);
  const first = outcomes[0]!;
  const rolled: ScriptOutcome = {
    ...first,
    verdict,
    reasonCodes: uniqueSorted(outcomes.flatMap((o) => o.reasonCodes)),
    violations: uniqueSorted(outcomes.flatMap((o) => o.violations)),
    matchedRule: uniqueSorted(outcomes.flatMap((o) => splitRules(o.matchedRule))).join(','),
    matchedRules: outcomes.flatMap((o) => o.matchedRules),
    minApprovals: Math.max(...outcomes.map((o) => o.minApprovals)),
    requireDistinctApprovers: outcomes.some((o) => o.requireDistinctApprovers),
    requireBrokerCredential: outcomes.some((o) => o.requireBrokerCredential),
    brokerReference: outcomes.find((o) => o.brokerReference !== '')?.brokerReference ?? '',
    brokerScopes: uniqueSorted(outcomes.flatMap((o) => o.brokerScopes)),
    requireDelegation: outcomes.some((o) => o.requireDelegation),
    delegationScopes: uniqueSorted(outcomes.flatMap((o) => o.delegationScopes)),
    rateLimit: outcomes.reduce((acc, o) => (o.rateLimit ? tighterLimit(acc, o.rateLimit) : acc), first.rateLimit),
    destructiveBudget: outcomes.reduce(
      (acc, o) => (o.destructiveBudget ? tighterLimit(acc, o.destructiveBudget) : acc),
      first.destructiveBudget,
    ),
    freezeWindow: outcomes.reduce((acc, o) => (o.freezeWindow ? pickFreezeDecision(acc, o.freezeWindow) : acc), first.freezeWindow),
    sandbox: outcomes.reduce((acc, o) => (o.sandbox ? pickSandboxDecision(acc, o.sandbox) : acc), first.sandbox),
    stepCount: steps.length,
    compositeRiskClass: 'low',
    stepVerdicts: outcomes.map((o, index) => ({
      index,
      tool_name: steps[index]!.tool_name,
      verdict: o.verdict,
      reason_codes: o.reasonCodes,
      violations: o.violations,
      matched_rule: o.matchedRule,
    })),
    matchedRuleIds: uniqueSorted(outcomes.flatMap((o) => splitRules(o.matchedRule))),
    wrkrApplied,
  };

  const risks = steps.map((s) => stepRisk(s.targets));
  rolled.compositeRiskClass = risks.includes('high') ? 'high' : risks.includes('medium') ? 'medium' : 'low';

  const maxSteps = policy.scripts.max_steps > 0 ? policy.scripts.max_steps : MAX_SCRIPT_STEPS;
  const reasons = [...rolled.reasonCodes];
  const violations = [...rolled.violations];
  if (steps.length > maxSteps) {
    rolled.verdict = 'block';
    reasons.push('script_max_steps_exceeded');
    violations.push('script_max_steps_exceeded');
  }
  const threshold = policy.scripts.require_approval_above;
  if (threshold > 0 && steps.length > threshold) {
    rolled.verdict = mostRestrictive(rolled.verdict, 'require_approval');
    reasons.push('script_step_threshold_approval');
    rolled.minApprovals = Math.max(rolled.minApprovals, 1);
  }
  if (policy.scripts.block_mixed_risk && new Set(risks).size > 1) {
    rolled.verdict = 'block';
    reasons.push('script_mixed_risk_blocked');
    violations.push('script_mixed_risk');
  }
  rolled.reasonCodes = uniqueSorted(reasons);
  rolled.violations = uniqueSorted(violations);
  return rolled;
}

function stepIntent(intent: NormalizedIntent, step: ScriptStep, authContext: JsonObject | undefined): NormalizedIntent {
  return {
    ...intent,
    tool_name: step.tool_name,
    args: step.args,
    targets: step.targets,
    arg_provenance: step.arg_provenance,
    script: undefined,
    script_hash: '',
    context: { ...intent.context, auth_context: authContext },
  };
}

function splitRules(matched: string): string[] {
  return matched === '' ? [] : matched.split(',');
}

export function stepRisk(targets: readonly Target[]): StepRisk {
  if (targets.some((t) => t.endpoint_class === 'fs.delete' || t.endpoint_class === 'proc.exec' || t.destructive)) return 'high';
  if (targets.some((t) => t.endpoint_class === 'fs.write' || t.endpoint_class === 'net.http' || t.endpoint_class === 'net.dns')) {
    return 'medium';
  }
  return 'low';
}
