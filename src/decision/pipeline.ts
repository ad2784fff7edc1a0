import { nowUTC, parseRFC3339, type GoTime, type JsonObject } from '../canon/index.js';
import { CONTEXT_SOURCE_ENVELOPE } from '../context/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { freezeDecisionJson, sandboxDecisionJson } from '../gate/decisions.js';
import { evaluate, type GateOutcome } from '../gate/evaluate.js';
import { killSwitchDecisionJson } from '../gate/kill-switch.js';
import type { Decision } from '../gate/post-process.js';
import { argsDigest, intentDigest, subjectDigests } from '../intent/digest.js';
import type { SignedTrace, TraceInput } from '../trace/index.js';
import { evaluateRequest, evaluationOptions, type Evaluated, type EvaluationInputs, type EvaluationPlan, type FastPath } from './evaluation.js';
import type { DecisionState, DecisionStepDef, StepRecords } from './steps.js';
import { assembleTrace, beforePolicyTraceFacts, outcomeTraceFields, type TraceFacts } from './trace-assembler.js';
import type { DecisionBasis, DecisionSubject } from './types.js';
import { unevaluableIntent } from './unevaluable.js';

/**
 * The decision pipeline: a request is evaluated once, refined by the steps its host chose, and
 * signed by the one trace assembler. Every host (gate eval, SDK, daemon, MCP proxy, MCP decision
 * service) decides through `decide`; blocks made before policy go through `blockBeforePolicy`.
 * Nothing here writes the trace: hosts persist it (file, journal, sink) and only then answer.
 */

/** Decision objects the trace records from the outcome. */
export type OutcomeObject = 'freeze_window' | 'sandbox' | 'kill_switch';

/** One request through the pipeline (the MCP decision service's own `DecisionRequest` is its protocol request). */
export interface PipelineRequest extends EvaluationPlan, EvaluationInputs {
  /** The steps after evaluation, in order (steps.ts lists each host's). */
  steps: readonly DecisionStepDef[];
  /** The wall clock of this decision (limits, token expiry, registry expiry). */
  wallNow: GoTime;
  correlationId?: string | undefined;
  /** Recorded in the trace as `approval_token_ref` when no approval step granted a ref (`--approval-token-ref`). */
  approvalTokenRef?: string | undefined;
  /** Default: all three (`gate eval`); the decision service records only the kill switch. */
  outcomeObjects?: readonly OutcomeObject[] | undefined;
  relationshipExtras?: JsonObject | undefined;
  /**
   * What the trace records as `context_source` for a bound envelope, instead of `context_envelope`
   * (the MCP proxy's witnessed envelope: `witnessed`).
   */
  contextSourceLabel?: string | undefined;
}

/** A signed decision (trace not yet written) with everything hosts shape their outputs from. */
export interface Decided {
  trace: SignedTrace;
  subject: DecisionSubject;
  outcome: GateOutcome;
  evaluable: boolean;
  decision: Decision;
  records: StepRecords;
  /** The reading of the call that was decided (the request's intent, or a stricter claimed reading). */
  intent: unknown;
  fastPath?: FastPath | undefined;
}

export function decide(basis: DecisionBasis, req: PipelineRequest): Decided {
  const run = startDecision(basis, req);
  for (const step of req.steps) {
    const pending = step.apply(run.state);
    if (pending) refuseAsyncStep(step, pending);
  }
  return finishDecision(basis, req, run);
}

/**
 * `decide` for steps that consult state shared through the cluster database (steps.ts): each step
 * that returns a promise is awaited before the next runs. Used only by the daemon in a cluster;
 * over local state its steps return nothing and the decision is the same as `decide`'s.
 */
export async function decideAsync(basis: DecisionBasis, req: PipelineRequest): Promise<Decided> {
  const run = startDecision(basis, req);
  for (const step of req.steps) {
    const pending = step.apply(run.state);
    if (pending) await pending;
  }
  return finishDecision(basis, req, run);
}

interface DecisionRun {
  evaluated: Evaluated;
  state: DecisionState;
}

function startDecision(basis: DecisionBasis, req: PipelineRequest): DecisionRun {
  const evaluated = evaluateRequest(basis, req, evaluationOptions(basis, req), req.wallNow);
  const { outcome } = evaluated;
  const state: DecisionState = {
    policy: basis.policy,
    subject: subjectOf(outcome, evaluated.intent),
    outcome,
    evaluable: outcome.intentError === undefined,
    now: req.now,
    wallNow: req.wallNow,
    stepNames: new Set(req.steps.map((s) => s.name)),
    decision: { verdict: outcome.verdict, reasonCodes: outcome.reasonCodes, violations: outcome.violations },
    records: { limits: [] },
  };
  return { evaluated, state };
}

function finishDecision(basis: DecisionBasis, req: PipelineRequest, { evaluated, state }: DecisionRun): Decided {
  const { outcome, fastPath } = evaluated;
  const trace = assembleTrace(basis, decidedTraceFacts(state, req, evaluated.latencyMs, fastPath));
  return {
    trace,
    subject: state.subject,
    outcome,
    evaluable: state.evaluable,
    decision: state.decision,
    records: state.records,
    intent: evaluated.intent,
    fastPath,
  };
}

/**
 * A synchronous decision met a step over shared state: a host wiring error. The decision fails
 * (nothing is allowed); the step's promise is observed so its outcome cannot crash the process.
 */
function refuseAsyncStep(step: DecisionStepDef, pending: Promise<void>): never {
  pending.catch(() => undefined);
  throw new WardError(ERROR_CODES.INTERNAL, `decision step ${step.name} consults shared state asynchronously; this host must decide with decideAsync`);
}

/** The prepared intent and its digests, or the stand-in of an intent that could not be evaluated. */
function subjectOf(outcome: GateOutcome, raw: unknown): DecisionSubject {
  const prepared = outcome.preparedIntent;
  if (!prepared) return unevaluableIntent(raw);
  const { intentDigest, argsDigest } = subjectDigests(prepared);
  return { intent: prepared, intentDigest, argsDigest };
}

function decidedTraceFacts(s: DecisionState, req: PipelineRequest, latencyMs: number, fastPath: FastPath | undefined): TraceFacts {
  const { outcome, records } = s;
  const recorded = (o: OutcomeObject) => req.outcomeObjects?.includes(o) ?? true; // default: all three
  const approvalRef = records.approval?.approvalRef || req.approvalTokenRef;
  return {
    subject: s.subject,
    decision: s.decision,
    matchedRule: outcome.matchedRule,
    createdAt: parseRFC3339(outcome.result.created_at),
    ...(req.correlationId ? { correlationId: req.correlationId } : {}),
    latencyMs,
    ...labelled(outcomeTraceFields(s.subject.intent, outcome), req.contextSourceLabel),
    ...(fastPath ? { approvedScript: approvedScriptFacts(fastPath) } : {}),
    ...(approvalRef ? { approvalTokenRef: approvalRef } : {}),
    ...(records.delegation?.delegationRef ? { delegationTokenRef: records.delegation.delegationRef } : {}),
    ...(outcome.freezeWindow && recorded('freeze_window') ? { freezeWindow: freezeDecisionJson(outcome.freezeWindow) } : {}),
    ...(outcome.sandbox && recorded('sandbox') ? { sandbox: sandboxDecisionJson(outcome.sandbox) } : {}),
    ...(outcome.killSwitch && recorded('kill_switch') ? { killSwitch: killSwitchDecisionJson(outcome.killSwitch) } : {}),
    ...(records.mcpTrust ? { mcpTrust: records.mcpTrust } : {}),
    relationshipExtras: req.relationshipExtras,
    resolvedHosts: req.resolvedHosts,
  };
}

/** The trace's context fields with a bound envelope's source relabelled (see `contextSourceLabel`). */
function labelled(fields: Pick<TraceInput, 'context' | 'script'>, label: string | undefined): Pick<TraceInput, 'context' | 'script'> {
  if (!label || !fields.context) return fields;
  const sources = fields.context.contextSource.split(',').map((s) => (s === CONTEXT_SOURCE_ENVELOPE ? label : s));
  return { ...fields, context: { ...fields.context, contextSource: sources.join(',') } };
}

function approvedScriptFacts(fastPath: FastPath): NonNullable<TraceInput['approvedScript']> {
  return {
    preApproved: fastPath.matched,
    patternId: fastPath.matched ? fastPath.patternId : '',
    registryReason: fastPath.matched ? '' : fastPath.reason,
  };
}

/**
 * A call blocked before policy (the MCP proxy's `mcp_tool_definition_changed`, or a call it refuses
 * with `fail_closed_intent_invalid`): signed like any decision, with no rule, step or latency.
 */
export type BeforePolicyBlock =
  | {
      /**
       * A tool whose definition changed since it was pinned, or one held because its definition is
       * suspicious (`codes`, default `mcp_tool_definition_changed`); the intent is prepared as the
       * policy would see it.
       */
      kind: 'tool_changed';
      codes?: readonly string[] | undefined;
      intent: unknown;
      inputs: EvaluationInputs;
      correlationId: string;
    }
  | {
      /** A call that cannot be evaluated or traced as given: traced by its stand-in subject. */
      kind: 'refused';
      intent: JsonObject;
      /** The call's own time (RFC 3339); the wall clock when it does not parse. */
      createdAt: string;
      correlationId: string;
    };

export interface BlockedBeforePolicy {
  trace: SignedTrace;
  subject: DecisionSubject;
}

/**
 * Sign a block made before policy. A changed tool whose intent cannot be prepared returns
 * undefined: the policy path decides it (and blocks or refuses it) instead.
 */
export function blockBeforePolicy(basis: DecisionBasis, block: BeforePolicyBlock): BlockedBeforePolicy | undefined {
  if (block.kind === 'refused') {
    const subject = refusedSubject(block.intent);
    const facts = beforePolicyTraceFacts(subject, ['fail_closed_intent_invalid'], ['intent_not_evaluable'], refusedAt(block.createdAt), NO_CONTEXT, block.correlationId);
    return { trace: assembleTrace(basis, facts), subject };
  }
  // Only the prepared intent is used: the kill switch's verdict (and its unavailability) cannot change it.
  const { killSwitch: _unused, ...inputs } = block.inputs;
  const outcome = evaluate(basis.policy, block.intent, evaluationOptions(basis, inputs));
  const prepared = outcome.preparedIntent;
  if (!prepared) return undefined;
  const subject = { intent: prepared, argsDigest: argsDigest(prepared), intentDigest: intentDigest(prepared) };
  const codes = block.codes?.length ? [...block.codes] : ['mcp_tool_definition_changed'];
  const context = outcomeTraceFields(prepared, outcome).context!;
  const facts = beforePolicyTraceFacts(subject, codes, codes, parseRFC3339(outcome.result.created_at), context, block.correlationId);
  return { trace: assembleTrace(basis, facts), subject };
}

const NO_CONTEXT = { contextSetDigest: '', contextEvidenceMode: '', contextRefCount: 0, contextSource: '' };

function refusedSubject(raw: JsonObject): DecisionSubject {
  try {
    return unevaluableIntent(raw);
  } catch {
    return unevaluableIntent({ ...raw, args: {} }); // arguments too deep even for JSON.stringify
  }
}

function refusedAt(createdAt: string): GoTime {
  try {
    return parseRFC3339(createdAt);
  } catch {
    return nowUTC();
  }
}
