import { EPOCH_1980, formatRFC3339Nano, goLower, goTrim, isJsonObject, isZeroTime, parseRFC3339, toUTC, uniqueSorted, type GoTime } from '../canon/index.js';
import { bindContextEvidence, type ContextEnvelope } from '../context/index.js';
import { ERROR_CODES, WardError, isWardError } from '../errors.js';
import { withDiscoveredTargets } from '../intent/discover.js';
import { normalizeIntent } from '../intent/normalize.js';
import type { NormalizedIntent, PathView } from '../intent/types.js';
import type { ResolvedHosts } from '../intent/address.js';
import type { LoadedPolicy, NormalizedPolicy, Verdict } from '../policy/types.js';
import { WARD_VERSION } from '../version.js';
import { failClosedApplies, failClosedFindings } from './fail-closed.js';
import { evaluateKillSwitch, killSwitchUnavailableDecision, type KillSwitchDecision, type KillSwitchState } from './kill-switch.js';
import { evaluateScript, type StepVerdict, type StepRisk } from './script.js';
import { defaultOutcome, evaluateSingleIntent, type SingleOutcome } from './tier.js';
import { enrichWithWrkr, type WrkrInventory } from './wrkr.js';

export const GATE_RESULT_SCHEMA_ID = 'gait.gate.result';
export const GATE_RESULT_SCHEMA_VERSION = '1.0.0';

/** `gait.gate.result` 1.0.0 (`gate.md` §5.1): the core decision object. */
export interface GateResult {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  verdict: Verdict;
  reason_codes: string[];
  violations: string[];
}

export interface EvaluateOptions {
  /** Evaluation clock for freeze windows, agent expiry and kill-switch expiry. The core never reads the wall clock. */
  now: GoTime;
  /** Clock for envelope freshness; defaults to `now`. */
  contextNow?: GoTime;
  /** A verified envelope (from `parseContextEnvelope`). Without one, context claims are stripped. */
  contextEnvelope?: ContextEnvelope;
  wrkr?: { inventory: WrkrInventory; source: string };
  /** Kill-switch state, or `unavailable` when the caller requires it and it could not be loaded. */
  killSwitch?: { state: KillSwitchState } | { unavailable: true };
  producerVersion?: string;
  /**
   * The addresses the host names of the intent's targets resolved to, by canonical host
   * (decision/host-resolution.ts). Undefined when the caller did no resolution: host lists then
   * judge names by their text alone.
   */
  resolvedHosts?: ResolvedHosts;
  /**
   * What the file system makes of the intent's paths, resolved by the host before evaluation
   * (decision/path-view.ts); it becomes the prepared intent's `path_view`. Absent: paths are lexical.
   */
  pathView?: PathView;
}

export interface ScriptSummary {
  stepCount: number;
  scriptHash: string;
  compositeRiskClass: StepRisk;
  stepVerdicts: StepVerdict[];
  matchedRuleIds: string[];
}

/** Everything the core decided; the CLI, proxy and daemon post-process and trace it. */
export interface GateOutcome extends SingleOutcome {
  result: GateResult;
  /** The intent the decision is about: normalized, claims stripped or bound, Wrkr-enriched. */
  preparedIntent: NormalizedIntent | undefined;
  /** Set when the intent was not evaluable and fail-closed turned that into a block. */
  intentError: WardError | undefined;
  contextSource: string;
  killSwitch: KillSwitchDecision | undefined;
  script: ScriptSummary | undefined;
}

/**
 * Evaluate a raw intent request (parsed JSON) against a loaded policy (`gate.md` §3.1). Pure and
 * synchronous. Throws WardError for input that cannot be evaluated outside fail-closed risk
 * classes; inside them, returns a `block` with `fail_closed_intent_invalid` instead.
 */
export function evaluate(policy: LoadedPolicy | NormalizedPolicy, rawIntent: unknown, options: EvaluateOptions): GateOutcome {
  const p = 'policy' in policy ? policy.policy : policy;
  let normalized: NormalizedIntent;
  try {
    normalized = normalizeIntent(rawIntent);
  } catch (err) {
    if (isWardError(err) && err.code === ERROR_CODES.INTENT_INVALID && failClosedApplies(p, rawRiskClass(rawIntent))) {
      return notEvaluable(err, undefined, rawCreatedAt(rawIntent), options);
    }
    throw err;
  }
  return evaluateNormalized(p, normalized, options);
}

/** Evaluate an already-normalized intent (claims not yet bound). */
export function evaluateNormalized(policy: NormalizedPolicy, intent: NormalizedIntent, options: EvaluateOptions): GateOutcome {
  let prepared: NormalizedIntent;
  // What the rules check: the declared targets plus those the arguments show (intent/discover.ts).
  // `prepared` keeps the declared ones only: it is what digests and traces are built from.
  let checked: NormalizedIntent;
  let contextSource: string;
  try {
    const bound = bindContextEvidence(intent, options.contextEnvelope, options.contextNow ?? options.now);
    prepared = options.pathView ? { ...bound.intent, path_view: options.pathView } : bound.intent;
    contextSource = bound.contextSource;
    checked = withDiscoveredTargets(prepared);
  } catch (err) {
    if (isWardError(err) && failClosedApplies(policy, intent.context.risk_class)) {
      return notEvaluable(err, intent, intent.created_at, options);
    }
    throw err;
  }

  const failClosed = failClosedApplies(policy, prepared.context.risk_class);
  const findings = failClosed ? failClosedFindings(policy, checked) : undefined;
  if (findings && findings.reasons.length) {
    return finish(blockedOutcome(findings.reasons, findings.violations), prepared, contextSource, options);
  }
  if (options.killSwitch && 'unavailable' in options.killSwitch) {
    const outcome = blockedOutcome(['kill_switch_state_unavailable'], ['kill_switch_state_unavailable']);
    return finish(outcome, prepared, contextSource, options, killSwitchUnavailableDecision(options.now));
  }

  let core: SingleOutcome;
  let script: ScriptSummary | undefined;
  const sources = contextSource ? [contextSource] : [];
  const facts = { resolved: options.resolvedHosts, failClosed };
  const wrkr = options.wrkr;
  if (prepared.script) {
    const enrich = wrkr ? (auth: typeof prepared.context.auth_context, tool: string) => enrichWithWrkr(auth, tool, wrkr.inventory) : undefined;
    const s = evaluateScript(policy, checked, options.now, enrich, facts);
    if (s.wrkrApplied) sources.push(wrkr!.source);
    core = s;
    script = {
      stepCount: s.stepCount,
      scriptHash: prepared.script_hash,
      compositeRiskClass: s.compositeRiskClass,
      stepVerdicts: s.stepVerdicts,
      matchedRuleIds: s.matchedRuleIds,
    };
  } else {
    if (wrkr) {
      const r = enrichWithWrkr(prepared.context.auth_context, prepared.tool_name, wrkr.inventory);
      if (r.applied) {
        prepared = { ...prepared, context: { ...prepared.context, auth_context: r.authContext } };
        checked = checked.targets === prepared.targets ? prepared : { ...checked, context: prepared.context };
        sources.push(wrkr.source);
      }
    }
    core = evaluateSingleIntent(policy, checked, options.now, facts);
  }

  let killSwitch: KillSwitchDecision | undefined;
  if (options.killSwitch && 'state' in options.killSwitch) {
    const ks = evaluateKillSwitch(options.killSwitch.state, checked, options.now);
    killSwitch = ks.decision;
    if (ks.reasonCodes.length) {
      core = {
        ...core,
        verdict: 'block',
        reasonCodes: uniqueSorted([...core.reasonCodes, ...ks.reasonCodes]),
        violations: uniqueSorted([...core.violations, 'kill_switch_active']),
      };
    }
  }
  const outcome = script ? finishScript(core, prepared, uniqueSorted(sources).join(','), options, killSwitch) : finish(core, prepared, uniqueSorted(sources).join(','), options, killSwitch);
  outcome.script = script;
  return outcome;
}

/**
 * The approved-script fast path (§3.6 step 1): a verified registry entry already approved this
 * exact script under this exact policy, so policy evaluation is skipped. The context claims are
 * still stripped (or bound) so the trace records only verified evidence, and `created_at` is the
 * wall clock, as in the reference.
 */
export function approvedScriptOutcome(intent: NormalizedIntent, options: EvaluateOptions, wallNow: GoTime): GateOutcome {
  const bound = bindContextEvidence(intent, options.contextEnvelope, options.contextNow ?? options.now);
  const core: SingleOutcome = { ...defaultOutcome('allow'), reasonCodes: ['approved_script_match'] };
  return finish(core, { ...bound.intent, created_at: wallNow }, bound.contextSource, options);
}

function finish(
  core: SingleOutcome,
  prepared: NormalizedIntent,
  contextSource: string,
  options: EvaluateOptions,
  killSwitch?: KillSwitchDecision,
): GateOutcome {
  return gateOutcome(core, gateResult(core, prepared.created_at, options), prepared, undefined, contextSource, killSwitch);
}

/** A script's outcome keeps its ScriptOutcome members too (stepCount, stepVerdicts, ...). */
function finishScript(
  core: SingleOutcome,
  prepared: NormalizedIntent,
  contextSource: string,
  options: EvaluateOptions,
  killSwitch?: KillSwitchDecision,
): GateOutcome {
  return {
    ...core,
    result: gateResult(core, prepared.created_at, options),
    preparedIntent: prepared,
    intentError: undefined,
    contextSource,
    killSwitch,
    script: undefined,
  };
}

/**
 * `{ ...core, result, preparedIntent, intentError, contextSource, killSwitch, script: undefined }`
 * for a SingleOutcome, every member named in that order. A literal that starts with a spread and
 * then adds members costs about 1 µs per added member on Node 20 (V8 makes a new map for each):
 * ~8 µs of every decision here (`npm run bench -- gate`).
 */
function gateOutcome(
  core: SingleOutcome,
  result: GateResult,
  preparedIntent: NormalizedIntent | undefined,
  intentError: WardError | undefined,
  contextSource: string,
  killSwitch: KillSwitchDecision | undefined,
): GateOutcome {
  return {
    verdict: core.verdict,
    reasonCodes: core.reasonCodes,
    violations: core.violations,
    matchedRule: core.matchedRule,
    matchedRules: core.matchedRules,
    minApprovals: core.minApprovals,
    requireDistinctApprovers: core.requireDistinctApprovers,
    requireBrokerCredential: core.requireBrokerCredential,
    brokerReference: core.brokerReference,
    brokerScopes: core.brokerScopes,
    requireDelegation: core.requireDelegation,
    delegationScopes: core.delegationScopes,
    rateLimit: core.rateLimit,
    destructiveBudget: core.destructiveBudget,
    freezeWindow: core.freezeWindow,
    sandbox: core.sandbox,
    result,
    preparedIntent,
    intentError,
    contextSource,
    killSwitch,
    script: undefined,
  } satisfies Record<keyof GateOutcome, unknown>; // a new GateOutcome member must be named here too
}

function gateResult(core: SingleOutcome, createdAt: GoTime, options: EvaluateOptions): GateResult {
  return {
    schema_id: GATE_RESULT_SCHEMA_ID,
    schema_version: GATE_RESULT_SCHEMA_VERSION,
    created_at: formatRFC3339Nano(isZeroTime(createdAt) ? EPOCH_1980 : createdAt),
    producer_version: options.producerVersion ?? WARD_VERSION,
    verdict: core.verdict,
    reason_codes: core.reasonCodes,
    violations: core.violations,
  };
}

function blockedOutcome(reasons: string[], violations: string[]): SingleOutcome {
  return { ...defaultOutcome('block'), reasonCodes: reasons, violations };
}

/** Ward decision 3: an unevaluable intent under a fail-closed risk class is a block, not an error. */
function notEvaluable(err: WardError, intent: NormalizedIntent | undefined, createdAt: GoTime, options: EvaluateOptions): GateOutcome {
  const core = blockedOutcome(['fail_closed_intent_invalid'], ['intent_not_evaluable']);
  return gateOutcome(core, gateResult(core, createdAt, options), intent, err, '', undefined);
}

/** The raw request's `context.risk_class`, trimmed and lowercased: fail-closed decisions need it even when the intent does not normalize. */
export function rawRiskClass(raw: unknown): string {
  if (!isJsonObject(raw)) return '';
  const ctx = raw['context'];
  const risk = isJsonObject(ctx) ? ctx['risk_class'] : undefined;
  return typeof risk === 'string' ? goLower(goTrim(risk)) : '';
}

/** The raw created_at, when it parses, so even an unevaluable intent keeps its decision time. */
function rawCreatedAt(raw: unknown): GoTime {
  const text = isJsonObject(raw) ? raw['created_at'] : undefined;
  if (typeof text !== 'string') return EPOCH_1980;
  try {
    return toUTC(parseRFC3339(text));
  } catch {
    return EPOCH_1980;
  }
}
