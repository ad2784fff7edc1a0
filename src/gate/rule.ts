import type { GoTime } from '../canon/index.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { PolicyRule, Verdict } from '../policy/types.js';
import type { FreezeWindowDecision, SandboxDecision } from './decisions.js';
import {
  checkAgentIdentity,
  checkContextEvidence,
  checkCredentialPosture,
  checkDataflow,
  checkEndpoint,
  checkFreezeWindow,
  checkSandbox,
  type EndpointFacts,
  type Finding,
} from './constraints.js';
import { hasAgentConstraint, hasCredentialConstraint } from '../policy/rule.js';
import { mostRestrictive } from './verdict.js';

export interface RuleEvaluation {
  rule: PolicyRule;
  effect: Verdict;
  reasons: string[];
  violations: string[];
  minApprovals: number;
  freezeWindow: FreezeWindowDecision | undefined;
  sandbox: SandboxDecision | undefined;
}

/**
 * `evaluateMatchedRule` (`gate.md` §3.3): the constraints run in this exact order, because the
 * dataflow step replaces the effect while every later step only tightens it.
 */
export function evaluateMatchedRule(rule: PolicyRule, intent: NormalizedIntent, now: GoTime, facts?: EndpointFacts): RuleEvaluation {
  let effect = rule.effect;
  const reasons = rule.reason_codes.length ? [...rule.reason_codes] : [`matched_rule_${sanitizeRuleName(rule.name)}`];
  const violations = [...rule.violations];
  const absorb = (f: Finding) => {
    reasons.push(...f.reasons);
    violations.push(...f.violations);
  };

  if (rule.dataflow.enabled) {
    const f = checkDataflow(rule.dataflow, intent);
    if (f) {
      effect = rule.dataflow.action;
      absorb(f);
    }
  }
  if (rule.endpoint.enabled) {
    const f = checkEndpoint(rule.endpoint, intent.targets, intent.context.workspace, facts, intent.path_view);
    if (f) {
      effect = mostRestrictive(effect, f.effect);
      absorb(f);
    }
  }
  if (rule.require_context_evidence || rule.required_context_evidence_mode === 'required' || rule.max_context_age_seconds > 0) {
    const f = checkContextEvidence(rule, intent);
    if (f.reasons.length) {
      effect = 'block';
      absorb(f);
    }
  }
  if (hasAgentConstraint(rule)) {
    const f = checkAgentIdentity(rule, intent, now);
    if (f.reasons.length) {
      effect = 'block';
      absorb(f);
    }
  }
  if (hasCredentialConstraint(rule)) {
    const f = checkCredentialPosture(rule, intent);
    if (f.reasons.length) {
      effect = 'block';
      absorb(f);
    }
  }
  let freezeWindow: FreezeWindowDecision | undefined;
  if (rule.freeze_window.enabled) {
    const r = checkFreezeWindow(rule.freeze_window, intent, now);
    freezeWindow = r.decision;
    if (r.code !== '') {
      effect = mostRestrictive(effect, r.effect);
      reasons.push(r.code);
      violations.push(r.code);
    }
  }
  let sandbox: SandboxDecision | undefined;
  if (rule.sandbox.enabled) {
    sandbox = checkSandbox(rule.sandbox, intent);
    if (sandbox.reason_codes.length) {
      effect = 'block';
      reasons.push(...sandbox.reason_codes);
      violations.push(...sandbox.reason_codes);
    }
  }
  const execOnlyInValidSandbox =
    sandbox?.status === 'valid' && intent.targets.length > 0 && intent.targets.every((t) => t.endpoint_class === 'proc.exec');
  if (!execOnlyInValidSandbox && intent.targets.some((t) => t.destructive)) {
    if (intent.context.phase === 'plan') {
      effect = mostRestrictive(effect, 'dry_run');
      reasons.push('plan_phase_non_destructive');
    } else {
      effect = mostRestrictive(effect, 'require_approval');
      reasons.push('destructive_apply_requires_approval');
    }
  }
  const minApprovals = rule.min_approvals === 0 && effect === 'require_approval' ? 1 : rule.min_approvals;
  return { rule, effect, reasons, violations, minApprovals, freezeWindow, sandbox };
}

/**
 * The default reason-code suffix for a rule: Go-JSON-encode the name (HTML-safe escapes included),
 * strip quotes the way Go's `strings.Trim(s, "\"")` does — every leading and trailing `"`, so a
 * name ending in a quote also loses the quote of its `\"` escape (gate.md §3.3) — then turn spaces
 * and `-` into `_` and lowercase.
 */
export function sanitizeRuleName(name: string): string {
  const encoded = JSON.stringify(name)
    .replace(/^"+|"+$/g, '')
    .replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return encoded.replace(/[ -]/g, '_').toLowerCase();
}
