import { performance } from 'node:perf_hooks';
import type { GoTime } from '../canon/gotime.js';
import type { JsonObject, JsonValue } from '../canon/json.js';
import { nowUTC, parseRFC3339 } from '../canon/gotime.js';
import type { ContextEnvelope } from '../context/index.js';
import type { ExitCode } from '../contract/exit-codes.js';
import { approvedScriptOutcome, evaluate, evaluateNormalized, type GateOutcome } from '../gate/evaluate.js';
import { normalizeIntent } from '../intent/normalize.js';
import { matchApprovedScript, type ApprovedScriptEntry } from '../tokens/approved-scripts.js';
import type { StepVerdict } from '../gate/script.js';
import { freezeDecisionJson, sandboxDecisionJson } from '../gate/decisions.js';
import { killSwitchDecisionJson, type KillSwitchState } from '../gate/kill-switch.js';
import type { WrkrInventory } from '../gate/wrkr.js';
import {
  applyApproval,
  applyBrokerUnavailable,
  applyDelegation,
  applyLimitExceeded,
  applySimulate,
  exitCodeForVerdict,
  type ApprovalRollup,
  type Decision,
  type DelegationRollup,
} from '../gate/post-process.js';
import { argsDigest, delegationDigest, intentDigest } from '../intent/digest.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { SigningKey } from '../keys/index.js';
import type { LoadedPolicy } from '../policy/types.js';
import { consumeRateLimit, type RateLimitUse } from '../state/rate-limit.js';
import { FileTokenLedger, type TokenLedger } from '../state/token-ledger.js';
import { dirname, join } from 'node:path';
import { buildTraceRecord, signTrace, type SignedTrace, type TraceFormat, type TraceInput } from '../trace/record.js';
import { writeTrace } from '../trace/write.js';
import { WARD_VERSION } from '../version.js';
import { buildDecisionCapture, writeCapture } from './capture.js';
import { unevaluableIntent } from './unevaluable.js';

/** What one gate decision needs besides the intent; load it once and reuse it (daemon, proxy). */
export interface GateRuntime {
  policy: LoadedPolicy;
  signingKey: SigningKey;
  traceFormat: TraceFormat;
  /** Where traces go when no explicit path is given (`.ward/traces`). */
  traceDir: string;
  /** Rate-limit and destructive-budget counters (`.ward/gate_rate_limits.json`). */
  rateLimitStatePath: string;
  profile: 'standard' | 'oss-prod';
  /**
   * The consumed-token ledger directory shared by every process deciding with this state
   * (docs/approvals.md "One use"). Default: `token_ledger` beside `traceDir`, i.e.
   * `.ward/token_ledger` for every host that keeps traces in `<state>/traces`.
   */
  tokenLedgerDir?: string;
  /**
   * `once` (the default): an approval token grants one decision, then is refused with
   * `approval_token_consumed`. `ttl`: the reference behaviour, a token may be reused until it
   * expires — an explicit opt-in (`ward gate eval --approval-token-reuse ttl`).
   */
  approvalTokenReuse?: ApprovalTokenReuse;
  /** Keep the normalized intent of each decision next to its trace (for replay); off by default for privacy. */
  captureIntents?: boolean;
  producerVersion?: string;
  warnings?: string[];
}

export interface GateRequest {
  /** Parsed intent JSON. */
  intent: unknown;
  /** `--evaluation-time`; the wall clock otherwise. */
  evaluationTime?: GoTime;
  contextEnvelope?: ContextEnvelope;
  /** The envelope JSON as given, kept in decision captures so replay can bind it again. */
  contextEnvelopeJson?: JsonObject;
  wrkr?: { inventory: WrkrInventory; source: string };
  killSwitch?: { state: KillSwitchState } | { unavailable: true };
  simulate?: boolean;
  correlationId?: string;
  traceOut?: string;
  /** Approval and delegation steps (§3.6 steps 7–8), evaluated against the prepared intent. */
  approvals?: (ctx: TokenContext) => ApprovalStep;
  delegations?: (ctx: TokenContext) => DelegationStep;
  approvalTokenRef?: string;
  /**
   * The caller's own evaluation of `intent` with exactly this request's options (evaluation time,
   * envelope, kill switch, the runtime's producer version), reused instead of evaluating again:
   * the MCP proxy evaluates before it forwards a call and signs afterwards.
   */
  evaluated?: { outcome: GateOutcome; latencyMs: number };
  /** Verified approved-script registry entries (§3.6 step 1); undefined when the fast path is off. */
  approvedScripts?: readonly ApprovedScriptEntry[];
}

export type ApprovalTokenReuse = 'once' | 'ttl';

/** The digests and requirements tokens must bind to. */
export interface TokenContext {
  intent: NormalizedIntent;
  intentDigest: string;
  policyDigest: string;
  delegationDigest: string;
  outcome: GateOutcome;
  traceId: string;
  wallNow: GoTime;
  /** The consumed-token ledger; undefined when tokens may be reused until they expire. */
  approvalLedger?: TokenLedger | undefined;
  /**
   * Whether a grant consumes its tokens: only when the approval decides the call (not under
   * `simulate`, and not when a broker requirement will block the call anyway).
   */
  consumeApprovals: boolean;
  /** Who may root a delegation chain (the matched rules' `allowed_delegator_identities`, intersected). */
  allowedRootDelegators?: readonly string[] | undefined;
}

/** The ledger a runtime's approval steps consult, or undefined with `approvalTokenReuse: 'ttl'`. */
export function approvalLedgerOf(rt: GateRuntime): TokenLedger | undefined {
  if (rt.approvalTokenReuse === 'ttl') return undefined;
  return new FileTokenLedger(rt.tokenLedgerDir ?? join(dirname(rt.traceDir), 'token_ledger'));
}

export interface ApprovalStep extends ApprovalRollup {
  requiredApprovals: number;
  validApprovals: number;
  approvalRef: string;
  /** Written after the trace, which the audit references; returns the path. */
  writeAudit?: (trace: SignedTrace) => string;
}

export interface DelegationStep extends DelegationRollup {
  validDelegations: number;
  delegationRef: string;
  writeAudit?: (trace: SignedTrace) => string;
}

export interface GateResultOutput {
  /** The `gate eval --json` object (§5.2) without correlation_id. */
  output: JsonObject;
  exitCode: ExitCode;
  trace: SignedTrace;
  tracePath: string;
  outcome: GateOutcome;
  intentDigest: string;
}

/**
 * One full gate decision (§3.6): evaluate, post-process, sign and durably write the trace, and
 * shape the output. A returned decision always has a written trace (Ward decision 6).
 */
export function runGate(rt: GateRuntime, req: GateRequest): GateResultOutput {
  const pending = decideGate(rt, req);
  const tracePath = writeTrace(pending.trace, { dir: rt.traceDir, ...(req.traceOut ? { path: req.traceOut } : {}) });
  if (pending.capture) writeCapture(rt.traceDir, pending.capture);
  return pending.finish(tracePath);
}

/**
 * A decision with its signed trace, waiting for the trace to be stored. Callers that batch trace
 * writes (the daemon's group commit, the MCP proxy) persist `trace` (and `capture`) durably, then
 * call `finish` with where it went; nothing may be returned to a client before that.
 */
export interface PendingDecision {
  trace: SignedTrace;
  /** The decision capture (`ward.decision_capture`) when the runtime captures intents. */
  capture?: JsonObject;
  exitCode: ExitCode;
  /** The `gate eval --json` object, once the trace is durable at `location`. */
  finish(location: string): GateResultOutput;
}

/** Everything `runGate` does except writing the trace: evaluate, post-process, sign. */
export function decideGate(rt: GateRuntime, req: GateRequest): PendingDecision {
  const wallNow = nowUTC();
  const now = req.evaluationTime ?? wallNow;
  const started = performance.now();
  const options = {
    now,
    contextNow: now,
    ...(req.contextEnvelope ? { contextEnvelope: req.contextEnvelope } : {}),
    ...(req.wrkr ? { wrkr: req.wrkr } : {}),
    ...(req.killSwitch ? { killSwitch: req.killSwitch } : {}),
    producerVersion: rt.producerVersion ?? WARD_VERSION,
  };
  const fastPath = req.approvedScripts ? approvedScriptMatch(req.approvedScripts, req.intent, rt.policy.digest, wallNow) : undefined;
  const outcome =
    fastPath?.matched === true
      ? approvedScriptOutcome(fastPath.intent, options, wallNow)
      : fastPath?.intent
        ? evaluateNormalized(rt.policy.policy, fastPath.intent, options)
        : (req.evaluated?.outcome ?? evaluate(rt.policy, req.intent, options));
  const latencyMs = req.evaluated && !fastPath ? req.evaluated.latencyMs : performance.now() - started;

  const subject = outcome.preparedIntent
    ? {
        intent: outcome.preparedIntent,
        intentDigest: intentDigest(outcome.preparedIntent),
        argsDigest: argsDigest(outcome.preparedIntent),
      }
    : unevaluableIntent(req.intent);
  const intent = subject.intent;
  const policyDigest = rt.policy.digest;
  const chainDigest = intent.delegation ? delegationDigest(intent.delegation) : '';

  let d: Decision = { verdict: outcome.verdict, reasonCodes: outcome.reasonCodes, violations: outcome.violations };
  const out: JsonObject = {};
  const evaluable = outcome.intentError === undefined;

  if (evaluable && outcome.rateLimit) {
    const use = consumeRateLimit(rt.rateLimitStatePath, outcome.rateLimit, subjectOf(intent), wallNow);
    recordLimit(out, 'rate_limit', use);
    if (use.exceeded) d = applyLimitExceeded(d, 'rate_limit_exceeded');
  }
  if (evaluable && outcome.destructiveBudget && hasDestructiveTarget(intent)) {
    const toolName = `destructive_budget|${intent.tool_name}`;
    const use = consumeRateLimit(rt.rateLimitStatePath, outcome.destructiveBudget, { ...subjectOf(intent), toolName }, wallNow);
    recordLimit(out, 'destructive_budget', use);
    if (use.exceeded) d = applyLimitExceeded(d, 'destructive_budget_exceeded');
  }

  const tokenCtx = (traceId: string): TokenContext => ({
    intent,
    intentDigest: subject.intentDigest,
    policyDigest,
    delegationDigest: chainDigest,
    outcome,
    traceId,
    wallNow,
    approvalLedger: approvalLedgerOf(rt),
    consumeApprovals: !req.simulate && !outcome.requireBrokerCredential,
    allowedRootDelegators: allowedRootDelegators(rt.policy, outcome),
  });
  // Token steps bind to digests only, so the trace id they may reference is the provisional one.
  let delegation: DelegationStep | undefined;
  if (evaluable && outcome.requireDelegation) {
    delegation = req.delegations?.(tokenCtx('')) ?? {
      granted: false,
      reasonCodes: ['delegation_token_missing'],
      validDelegations: 0,
      delegationRef: '',
    };
    d = applyDelegation(d, delegation);
  }
  let approval: ApprovalStep | undefined;
  if (evaluable && d.verdict === 'require_approval') {
    approval = req.approvals?.(tokenCtx('')) ?? {
      granted: false,
      reasonCodes: ['approval_token_missing'],
      violations: ['approval_not_granted'],
      requiredApprovals: Math.max(outcome.minApprovals, 1),
      validApprovals: 0,
      approvalRef: '',
    };
    d = applyApproval(d, approval);
  }
  if (evaluable && outcome.requireBrokerCredential && d.verdict === 'allow') d = applyBrokerUnavailable(d);
  if (req.simulate) d = applySimulate(d);
  const exitCode = req.simulate ? 0 : exitCodeForVerdict(d.verdict);

  const unsigned = buildTraceRecord(
    {
      intent,
      argsDigest: subject.argsDigest,
      intentDigest: subject.intentDigest,
      policyDigest,
      policyId: rt.policy.policy.schema_id,
      policyVersion: rt.policy.policy.schema_version,
      verdict: d.verdict,
      reasonCodes: d.reasonCodes,
      violations: d.violations,
      matchedRule: outcome.matchedRule,
      createdAt: parseCreatedAt(outcome),
      observedAt: nowUTC(),
      producerVersion: rt.producerVersion ?? WARD_VERSION,
      ...(req.correlationId ? { correlationId: req.correlationId } : {}),
      latencyMs,
      ...outcomeTraceFields(intent, outcome),
      ...(fastPath
        ? {
            approvedScript: {
              preApproved: fastPath.matched,
              patternId: fastPath.matched ? fastPath.patternId : '',
              registryReason: fastPath.matched ? '' : fastPath.reason,
            },
          }
        : {}),
      ...(approval?.approvalRef || req.approvalTokenRef ? { approvalTokenRef: approval?.approvalRef || req.approvalTokenRef! } : {}),
      ...(delegation?.delegationRef ? { delegationTokenRef: delegation.delegationRef } : {}),
      ...(chainDigest ? { delegationDigest: chainDigest } : {}),
      ...(outcome.freezeWindow ? { freezeWindow: freezeDecisionJson(outcome.freezeWindow) } : {}),
      ...(outcome.sandbox ? { sandbox: sandboxDecisionJson(outcome.sandbox) } : {}),
      ...(outcome.killSwitch ? { killSwitch: killSwitchDecisionJson(outcome.killSwitch) } : {}),
    },
    rt.traceFormat,
  );
  const trace = signTrace(unsigned, rt.signingKey);
  const traceId = trace['trace_id'] as string;
  const capture = rt.captureIntents
    ? buildDecisionCapture({
        trace,
        evaluationTime: now,
        intent: evaluable ? (fastPath?.intent ?? normalizeIntent(req.intent)) : undefined,
        intentError: outcome.intentError?.message,
        contextEnvelope: req.contextEnvelopeJson,
      })
    : undefined;
  const finish = (tracePath: string): GateResultOutput => {

    Object.assign(out, {
      ok: true,
      profile: rt.profile,
      verdict: d.verdict,
      reason_codes: d.reasonCodes,
      violations: d.violations,
      matched_rule: outcome.matchedRule,
      phase: intent.context.phase,
      intent_digest: subject.intentDigest,
      policy_digest: policyDigest,
      trace_id: traceId,
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
    if (approval) {
      out['approval_ref'] = approval.approvalRef;
      out['required_approvals'] = approval.requiredApprovals;
      out['valid_approvals'] = approval.validApprovals;
      if (approval.writeAudit) out['approval_audit_path'] = approval.writeAudit(trace);
    }
    if (delegation) {
      out['delegation_ref'] = delegation.delegationRef;
      out['delegation_required'] = true;
      out['valid_delegations'] = delegation.validDelegations;
      if (delegation.writeAudit) out['delegation_audit_path'] = delegation.writeAudit(trace);
    }
    if (fastPath?.matched) {
      out['pre_approved'] = true;
      out['pattern_id'] = fastPath.patternId;
    } else if (fastPath) out['registry_reason'] = fastPath.reason;
    if (outcome.freezeWindow) out['freeze_window'] = freezeDecisionJson(outcome.freezeWindow);
    if (outcome.sandbox) out['sandbox'] = sandboxDecisionJson(outcome.sandbox);
    if (outcome.killSwitch) out['kill_switch'] = killSwitchDecisionJson(outcome.killSwitch);
    if (req.simulate) {
      out['simulate_mode'] = true;
      out['would_have_blocked'] = d.wouldHaveBlocked ?? false;
      out['simulated_verdict'] = d.simulatedVerdict ?? '';
      out['simulated_reason_codes'] = d.simulatedReasonCodes ?? [];
    }
    if (rt.warnings?.length) out['warnings'] = [...rt.warnings];
    if (outcome.intentError) out['warnings'] = [...((out['warnings'] as string[]) ?? []), `intent not evaluable: ${outcome.intentError.message}`];
    return { output: out, exitCode, trace, tracePath, outcome, intentDigest: subject.intentDigest };
  };
  return { trace, ...(capture ? { capture } : {}), exitCode, finish };
}

/** The trace fields every host derives the same way from an evaluated intent: context evidence and script summary. */
export function outcomeTraceFields(intent: NormalizedIntent, outcome: GateOutcome): Pick<TraceInput, 'context' | 'script'> {
  return {
    context: {
      contextSetDigest: intent.context.context_set_digest,
      contextEvidenceMode: intent.context.context_evidence_mode,
      contextRefCount: intent.context.context_refs.length,
      contextSource: outcome.contextSource,
    },
    ...(outcome.script
      ? {
          script: {
            stepCount: outcome.script.stepCount,
            scriptHash: outcome.script.scriptHash,
            compositeRiskClass: outcome.script.compositeRiskClass,
            stepVerdicts: outcome.script.stepVerdicts,
          },
        }
      : {}),
  };
}

/** The registry match; `intent` is the normalized intent whenever it normalized, so it is not normalized twice. */
type FastPath =
  | { matched: true; patternId: string; intent: NormalizedIntent }
  | { matched: false; reason: string; intent: NormalizedIntent | undefined };

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

function recordLimit(out: JsonObject, prefix: string, use: RateLimitUse): void {
  out[`${prefix}_scope`] = use.scope;
  out[`${prefix}_key`] = use.key;
  out[`${prefix}_used`] = use.used;
  out[`${prefix}_remaining`] = use.remaining;
}

function stepVerdictJson(s: StepVerdict): JsonValue {
  const o: JsonObject = { index: s.index, tool_name: s.tool_name, verdict: s.verdict };
  if (s.reason_codes.length) o['reason_codes'] = s.reason_codes;
  if (s.violations.length) o['violations'] = s.violations;
  if (s.matched_rule) o['matched_rule'] = s.matched_rule;
  return o;
}

function parseCreatedAt(outcome: GateOutcome): GoTime {
  return parseRFC3339(outcome.result.created_at);
}
