import type { GoTime } from '../canon/index.js';
import type { ContextEnvelope } from '../context/index.js';
import { approvedScriptOutcome, evaluate, evaluateNormalized, type EvaluateOptions, type GateOutcome } from '../gate/evaluate.js';
import type { KillSwitchState } from '../gate/kill-switch.js';
import { verdictRank } from '../gate/verdict.js';
import type { WrkrInventory } from '../gate/wrkr.js';
import { normalizeIntent } from '../intent/normalize.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { ResolvedHosts } from '../intent/address.js';
import { matchApprovedScript, type ApprovedScriptEntry } from '../tokens/index.js';
import { WARD_VERSION } from '../version.js';
import { pathViewOfNormalized } from './path-view.js';
import type { DecisionBasis } from './types.js';

/**
 * How a request is evaluated (`gate.md` §3.1–3.6 step 2): the options are built once per decision
 * from the request's inputs, then the policy sees the intent — or, for the MCP proxy, each reading
 * of the call — or the approved-script registry decides instead (§3.6 step 1).
 */

/** The per-call inputs of an evaluation; loaded (with their fail-closed fallbacks) by decision/inputs.ts. */
export interface EvaluationInputs {
  /** `--evaluation-time`; the wall clock otherwise. */
  now: GoTime;
  contextEnvelope?: ContextEnvelope | undefined;
  wrkr?: { inventory: WrkrInventory; source: string } | undefined;
  killSwitch?: { state: KillSwitchState } | { unavailable: true } | undefined;
  /** The addresses the targets' host names resolved to (host-resolution.ts `resolveIntentHosts`). */
  resolvedHosts?: ResolvedHosts | undefined;
}

export function evaluationOptions(basis: DecisionBasis, inputs: EvaluationInputs): EvaluateOptions {
  return {
    now: inputs.now,
    contextNow: inputs.now,
    ...(inputs.contextEnvelope ? { contextEnvelope: inputs.contextEnvelope } : {}),
    ...(inputs.wrkr ? { wrkr: inputs.wrkr } : {}),
    ...(inputs.killSwitch ? { killSwitch: inputs.killSwitch } : {}),
    ...(inputs.resolvedHosts ? { resolvedHosts: inputs.resolvedHosts } : {}),
    producerVersion: basis.producerVersion ?? WARD_VERSION,
  };
}

/** The registry match; `intent` is the normalized intent whenever it normalized, so it is not normalized twice. */
export type FastPath =
  | { matched: true; patternId: string; intent: NormalizedIntent }
  | { matched: false; reason: string; intent: NormalizedIntent | undefined };

export interface Evaluated {
  outcome: GateOutcome;
  /** The reading of the call the outcome is about (the request's intent unless a stricter claimed reading won). */
  intent: unknown;
  latencyMs: number;
  /** Set when the approved-script registry was consulted. */
  fastPath?: FastPath;
}

export interface EvaluationPlan {
  intent: unknown;
  /** Other readings of the same call carrying untrusted claims (the MCP proxy's tool annotations). */
  claimedReadings?: readonly unknown[] | undefined;
  /** Verified registry entries (§3.6 step 1); undefined when the fast path is off. */
  approvedScripts?: readonly ApprovedScriptEntry[] | undefined;
}

export function evaluateRequest(basis: DecisionBasis, plan: EvaluationPlan, planOptions: EvaluateOptions, wallNow: GoTime): Evaluated {
  // process.uptime(), not performance.now(): the global `performance` loads perf_hooks, about 1 ms
  // of every one-shot command.
  const started = process.uptime() * 1000;
  const normalized = normalizer();
  const options = withPathView(basis, plan, planOptions, normalized);
  if (plan.approvedScripts) {
    const fastPath = approvedScriptMatch(plan.approvedScripts, plan.intent, basis.policy.digest, wallNow);
    const outcome =
      fastPath.matched
        ? approvedScriptOutcome(fastPath.intent, options, wallNow)
        : fastPath.intent
          ? evaluateNormalized(basis.policy.policy, fastPath.intent, options)
          : evaluate(basis.policy, plan.intent, options);
    return { outcome, intent: plan.intent, latencyMs: process.uptime() * 1000 - started, fastPath };
  }
  const { outcome, intent } = strictestReading(basis, plan, options, normalized);
  return { outcome, intent, latencyMs: process.uptime() * 1000 - started };
}

/** Where the host sees the file system, every reading of the call is evaluated with what the disk makes of its paths. */
function withPathView(basis: DecisionBasis, plan: EvaluationPlan, options: EvaluateOptions, normalized: Normalizer): EvaluateOptions {
  if (basis.pathResolution !== 'filesystem') return options;
  const intents = [plan.intent, ...(plan.claimedReadings ?? [])].map(normalized).filter((i): i is NormalizedIntent => i !== undefined);
  const pathView = pathViewOfNormalized(intents, basis.policy.policy);
  return pathView ? { ...options, pathView } : options;
}

/**
 * The request's intent must evaluate (its errors are the decision's); each claimed reading is
 * evaluated too and the strictest verdict wins, a later reading on a tie. A claimed reading that
 * cannot be evaluated is ignored: a claim may tighten a decision, never break or loosen it.
 */
function strictestReading(basis: DecisionBasis, plan: EvaluationPlan, options: EvaluateOptions, normalized: Normalizer): { outcome: GateOutcome; intent: unknown } {
  // `evaluate` is normalize + `evaluateNormalized`: a reading the path view already normalized is
  // not normalized again (for a call with thousands of arguments that was half the decision).
  // One that does not normalize goes through `evaluate`, which reports or fails closed on it.
  const evaluateReading = (raw: unknown) => {
    const n = normalized(raw);
    return n ? evaluateNormalized(basis.policy.policy, n, options) : evaluate(basis.policy, raw, options);
  };
  let best = { outcome: evaluateReading(plan.intent), intent: plan.intent };
  for (const reading of plan.claimedReadings ?? []) {
    let outcome: GateOutcome;
    try {
      outcome = evaluateReading(reading);
    } catch {
      continue;
    }
    if (verdictRank(best.outcome.verdict) <= verdictRank(outcome.verdict)) best = { outcome, intent: reading };
  }
  return best;
}

/** Match the raw intent against the registry; an intent that does not normalize takes the normal path. */
function approvedScriptMatch(entries: readonly ApprovedScriptEntry[], raw: unknown, policyDigest: string, wallNow: GoTime): FastPath {
  let intent: NormalizedIntent;
  try {
    intent = normalizeIntent(raw);
  } catch {
    return { matched: false, reason: 'not_script', intent: undefined };
  }
  const m = matchApprovedScript(entries, intent, policyDigest, wallNow);
  return m.matched ? { matched: true, patternId: m.entry.pattern_id, intent } : { matched: false, reason: m.reason, intent };
}

type Normalizer = (raw: unknown) => NormalizedIntent | undefined;

/** Each reading normalized at most once per decision (by identity); undefined when it does not normalize. */
function normalizer(): Normalizer {
  const seen = new Map<unknown, NormalizedIntent | undefined>();
  return (raw) => {
    if (seen.has(raw)) return seen.get(raw);
    let intent: NormalizedIntent | undefined;
    try {
      intent = normalizeIntent(raw);
    } catch {
      intent = undefined;
    }
    seen.set(raw, intent);
    return intent;
  };
}
