import { nowUTC, type GoTime, type JsonObject } from '../canon/index.js';
import type { ContextEnvelope } from '../context/index.js';
import type { ExitCode } from '../contract/exit-codes.js';
import type { GateOutcome } from '../gate/evaluate.js';
import type { KillSwitchState } from '../gate/kill-switch.js';
import { exitCodeForVerdict } from '../gate/post-process.js';
import type { WrkrInventory } from '../gate/wrkr.js';
import type { ResolvedHosts } from '../intent/address.js';
import { normalizeIntent } from '../intent/normalize.js';
import type { ApprovedScriptEntry } from '../tokens/index.js';
import { buildDecisionCapture, writeCapture, writeTrace, type SignedTrace } from '../trace/index.js';
import { gateEvalOutput } from './gate-output.js';
import { decide, decideAsync, type Decided, type PipelineRequest } from './pipeline.js';
import { gateEvalSteps, type DecisionStepDef } from './steps.js';
import type { GateRuntime } from './types.js';

export type { ApprovalStep, ApprovalTokenReuse, DelegationStep, GateRuntime, TokenContext } from './types.js';

/** One gate decision request: the intent, its per-call inputs, and the steps it runs. */
export interface GateRequest {
  /** Parsed intent JSON. */
  intent: unknown;
  /**
   * Other readings of the same call that carry untrusted claims (the MCP proxy's tool
   * annotations): each is evaluated too and the strictest verdict wins, so a claim can tighten a
   * decision but never loosen it.
   */
  claimedReadings?: readonly unknown[];
  /** `--evaluation-time`; the wall clock otherwise. */
  evaluationTime?: GoTime;
  contextEnvelope?: ContextEnvelope;
  /** The envelope JSON as given, kept in decision captures so replay can bind it again. */
  contextEnvelopeJson?: JsonObject;
  wrkr?: { inventory: WrkrInventory; source: string };
  killSwitch?: { state: KillSwitchState } | { unavailable: true };
  /** The targets' host names resolved (host-resolution.ts `resolveIntentHosts`); undefined: judged by name. */
  resolvedHosts?: ResolvedHosts | undefined;
  correlationId?: string;
  traceOut?: string;
  approvalTokenRef?: string;
  /** Verified approved-script registry entries (§3.6 step 1); undefined when the fast path is off. */
  approvedScripts?: readonly ApprovedScriptEntry[];
  /**
   * The steps after evaluation, in order (steps.ts: `gateEvalSteps(rt, tokens, { simulate })` for
   * a gate eval with its token sources). Default: the gate eval steps with no tokens, so an
   * approval or delegation the policy requires is missing.
   */
  steps?: readonly DecisionStepDef[];
  /**
   * Members merged into the trace's `relationship` (the MCP proxy's witness: `related_record_ids`,
   * the traces of the earlier calls whose results an argument came from).
   */
  relationshipExtras?: JsonObject | undefined;
  /** `context_source` recorded for a bound envelope instead of `context_envelope` (pipeline.ts). */
  contextSourceLabel?: string | undefined;
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
  /** The reading of the call that was decided: the request's intent, or a stricter claimed reading. */
  decidedIntent: unknown;
  /** The `gate eval --json` object, once the trace is durable at `location`. */
  finish(location: string): GateResultOutput;
}

/** Everything `runGate` does except writing the trace: evaluate, post-process, sign. */
export function decideGate(rt: GateRuntime, req: GateRequest): PendingDecision {
  const { pipelineRequest, now } = pipelineRequestOf(rt, req);
  return pendingOf(rt, req, decide(rt, pipelineRequest), now);
}

/**
 * `decideGate` for a runtime whose counters and token ledger are shared through the cluster
 * database (`rt.sharedState`): the steps' round trips are awaited (pipeline.ts `decideAsync`).
 */
export async function decideGateAsync(rt: GateRuntime, req: GateRequest): Promise<PendingDecision> {
  const { pipelineRequest, now } = pipelineRequestOf(rt, req);
  return pendingOf(rt, req, await decideAsync(rt, pipelineRequest), now);
}

function pipelineRequestOf(rt: GateRuntime, req: GateRequest): { pipelineRequest: PipelineRequest; now: GoTime } {
  const wallNow = nowUTC();
  const now = req.evaluationTime ?? wallNow;
  const steps = req.steps ?? gateEvalSteps(rt, {});
  const pipelineRequest: PipelineRequest = {
    intent: req.intent,
    claimedReadings: req.claimedReadings,
    approvedScripts: req.approvedScripts,
    now,
    wallNow,
    contextEnvelope: req.contextEnvelope,
    wrkr: req.wrkr,
    killSwitch: req.killSwitch,
    resolvedHosts: req.resolvedHosts,
    steps,
    correlationId: req.correlationId,
    approvalTokenRef: req.approvalTokenRef,
    relationshipExtras: req.relationshipExtras,
    contextSourceLabel: req.contextSourceLabel,
  };
  return { pipelineRequest, now };
}

function pendingOf(rt: GateRuntime, req: GateRequest, d: Decided, now: GoTime): PendingDecision {
  const exitCode = d.records.simulated ? 0 : exitCodeForVerdict(d.decision.verdict);
  const capture = rt.captureIntents ? captureOf(d, now, req.contextEnvelopeJson, req.resolvedHosts) : undefined;
  const finish = (tracePath: string): GateResultOutput => ({
    output: gateEvalOutput(d, tracePath, rt.profile, rt.warnings),
    exitCode,
    trace: d.trace,
    tracePath,
    outcome: d.outcome,
    intentDigest: d.subject.intentDigest,
  });
  return { trace: d.trace, ...(capture ? { capture } : {}), exitCode, decidedIntent: d.intent, finish };
}

/** The decision capture keeps the normalized intent as given (before claims are bound), for replay. */
function captureOf(d: Decided, evaluationTime: GoTime, envelopeJson: JsonObject | undefined, resolvedHosts: ResolvedHosts | undefined): JsonObject {
  return buildDecisionCapture({
    trace: d.trace,
    evaluationTime,
    intent: d.evaluable ? (d.fastPath?.intent ?? normalizeIntent(d.intent)) : undefined,
    intentError: d.outcome.intentError?.message,
    contextEnvelope: envelopeJson,
    resolvedHosts,
  });
}
