import { nowUTC, type JsonObject } from '../../canon/index.js';
import { contextEnvelopeJson, type ContextEnvelope } from '../../context/index.js';
import type { KillSwitchState } from '../../gate/kill-switch.js';
import type { VerifyKey } from '../../keys/index.js';
import type { NormalizedPolicy } from '../../policy/types.js';
import type { NormalizedIntent } from '../../intent/types.js';
import type { GateRequest, GateRuntime } from '../../decision/gate-run.js';
import { decideGate } from '../../decision/gate-run.js';
import { steps, type ApprovalTokens, type DecisionState } from '../../decision/steps.js';
import { approvalStep } from '../../decision/token-steps.js';
import { approvalTokensInDir } from '../../decision/approval-dir.js';
import type { TokenContext } from '../../decision/types.js';
import { approvalCallOf, requiredApprovalScope, type ParsedToken } from '../../tokens/index.js';
import type { SignedTrace } from '../../trace/index.js';
import { intentForCall, type CallInput, type MappingOptions } from './intent.js';

/**
 * One `tools/call` decided by policy, up to the signed trace: the synchronous, side-effect-free
 * half of `Gatekeeper.decide` (it reads approval tokens and the rate-limit state file, and hands
 * nothing to a sink). The gatekeeper runs it inline; the decision thread (decision-thread.ts) runs
 * the same function off the event loop for a large call, so both decide a call the same way.
 */

/** What deciding a call needs besides the call: everything here can be copied to a worker thread. */
export interface CallDecisionConfig {
  runtime: GateRuntime;
  mapping: MappingOptions;
  envelope?: { envelope: ContextEnvelope; json: JsonObject } | undefined;
  /** `--approval-dir`: approval tokens dropped here are used for calls that need approval. */
  approvalDir: string;
  /** Keys approval tokens must verify with (default: the signing key). */
  approvalKeys: readonly VerifyKey[];
}

/** Per-decision inputs besides the call. */
export interface DecideOptions {
  /**
   * A person denied this exact call in a daemon's approvals inbox (`--approval inbox`): a call
   * still needing approval is blocked with `approval_denied`, as the daemon's own gate does; an
   * approval token does not override the denial.
   */
  denied?: boolean | undefined;
}

/** A decided call before its trace is handed to a sink. */
export interface SignedCallDecision {
  trace: SignedTrace;
  capture?: JsonObject | undefined;
  /**
   * The reading that was decided, as people read it. Not the reading itself: its arguments would
   * have to be copied back from the decision thread for nothing (the trace carries their digest).
   */
  decided: DescribedIntent;
  /** Scopes an approval token must hold, when the approval step ran. */
  scope?: string[] | undefined;
  /** Approvals the winning rule asks for (max(min_approvals, 1)); set when the approval step ran. */
  requiredApprovals?: number | undefined;
  approvalIntent?: NormalizedIntent | undefined;
  approvalSessionBound: boolean;
}

export type KillSwitchInput = { state: KillSwitchState } | { unavailable: true } | undefined;

/**
 * Decide one call: evaluate and sign. Throws when the call cannot be evaluated or its trace cannot
 * be signed (e.g. a non-finite number or nesting too deep for JCS in the arguments).
 */
export function decideSignedCall(cfg: CallDecisionConfig, call: CallInput, correlationId: string, opts: DecideOptions, ks: KillSwitchInput): SignedCallDecision {
  const [intent, ...claimedReadings] = callReadings(cfg, call);
  let scope: string[] | undefined;
  let required: number | undefined;
  let approvalIntent: NormalizedIntent | undefined;
  let approvalSessionBound = false;
  const rt = cfg.runtime;
  const approvals: ApprovalTokens = (t) => {
    scope = requiredApprovalScope(t.intent);
    approvalIntent = t.intent;
    approvalSessionBound = t.approvalSessionBound === true;
    return approvalStep({ tokens: () => tokensFor(cfg.approvalDir, t), verifyKeys: cfg.approvalKeys })(t);
  };
  const approval = steps.approval(rt, approvals);
  const decideApproval = opts.denied ? steps.deniedApproval(approval, () => true) : approval;
  const req: GateRequest = {
    intent,
    claimedReadings,
    evaluationTime: nowUTC(),
    correlationId,
    steps: [
      steps.rateLimit(rt.rateLimitStatePath),
      steps.destructiveBudget(rt.rateLimitStatePath),
      steps.delegation(rt, undefined),
      {
        name: approval.name,
        apply: (st: DecisionState) => {
          if (st.outcome.verdict === 'require_approval') required = Math.max(required ?? 1, st.outcome.minApprovals, 1);
          return decideApproval.apply(st);
        },
      },
      steps.broker,
    ],
  };
  const witnessedCodes = [...(call.witnessed?.size ? ['arg_provenance_witnessed'] : []), ...(call.witnessedContext ? ['context_evidence_witnessed'] : [])];
  if (witnessedCodes.length) req.steps = [...req.steps!, steps.witnessed(witnessedCodes)];
  if (call.witnessedContext) {
    // Ward's own records come before any envelope the operator pinned: what it saw, not what it was told.
    req.contextEnvelope = call.witnessedContext;
    req.contextSourceLabel = 'witnessed';
    if (rt.captureIntents) req.contextEnvelopeJson = contextEnvelopeJson(call.witnessedContext);
  } else if (cfg.envelope) {
    req.contextEnvelope = cfg.envelope.envelope;
    if (rt.captureIntents) req.contextEnvelopeJson = cfg.envelope.json;
  }
  if (ks) req.killSwitch = ks;
  if (call.resolvedHosts) req.resolvedHosts = call.resolvedHosts;
  const related = witnessedRecords(call);
  if (related) req.relationshipExtras = { related_record_ids: related };
  const pending = decideGate(rt, req);
  return {
    trace: pending.trace,
    capture: pending.capture,
    decided: describeIntent(pending.decidedIntent as JsonObject),
    scope,
    requiredApprovals: required,
    approvalIntent,
    approvalSessionBound,
  };
}

/** An intent's tool name and targets as people read them ("path /x/notes.txt (delete)"). */
export interface DescribedIntent {
  toolName: string;
  targets: string[];
}

export function describeIntent(intent: JsonObject): DescribedIntent {
  const targets = intent['targets'];
  return {
    toolName: String(intent['tool_name']),
    targets: Array.isArray(targets)
      ? targets.map((t) => {
          const o = (typeof t === 'object' && t !== null ? t : {}) as Record<string, unknown>;
          const op = typeof o['operation'] === 'string' && o['operation'] ? ` (${o['operation']})` : '';
          return `${String(o['kind'] ?? 'other')} ${String(o['value'] ?? '')}${op}`;
        })
      : [],
  };
}

/**
 * The readings of a call the policy must see. Annotations are untrusted server claims: the call
 * is evaluated with and without them and the stricter verdict wins, so a claim can tighten a
 * decision but never loosen it. Hints that no rule can see (only annotation selectors read them;
 * destructiveHint also marks targets destructive) cannot change the verdict: one reading will do.
 */
export function callReadings(cfg: Pick<CallDecisionConfig, 'runtime' | 'mapping'>, call: CallInput): JsonObject[] {
  if (call.hints && !call.hints.destructiveHint && !readsAnnotations(cfg.runtime.policy.policy)) {
    return [intentForCall(call, cfg.mapping, true)];
  }
  const plain = intentForCall(call, cfg.mapping, false);
  return call.hints ? [plain, intentForCall(call, cfg.mapping, true)] : [plain];
}

/**
 * Approval tokens from `--approval-dir` for this call: its intent digest, or (a token bound to
 * the call, docs/approvals.md "Call or session") its call digest, so the same call from a new
 * session finds the approval. After `ward approve ... --out <dir>/...` the next identical call is
 * allowed (and traced with approval_granted).
 */
function tokensFor(approvalDir: string, t: TokenContext): ParsedToken[] {
  return approvalTokensInDir(approvalDir, t.intentDigest, approvalCallOf(t.intent).callDigest);
}

/** The traces of the calls whose results the witness found in this call's arguments (sorted, unique). */
function witnessedRecords(call: CallInput): string[] | undefined {
  if (!call.witnessed || call.witnessed.size === 0) return undefined;
  return [...new Set(call.witnessed.values())].sort();
}

const annotationReaders = new WeakMap<NormalizedPolicy, boolean>();

/** Does any rule select on tool annotations? (Cached per loaded policy.) */
function readsAnnotations(policy: NormalizedPolicy): boolean {
  let v = annotationReaders.get(policy);
  if (v === undefined) {
    v = policy.rules.some((r) => r.match.tool_annotations !== undefined);
    annotationReaders.set(policy, v);
  }
  return v;
}
