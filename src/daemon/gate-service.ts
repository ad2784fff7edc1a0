import { performance } from 'node:perf_hooks';
import type { JsonObject } from '../canon/index.js';
import type { ExitCode } from '../contract/exit-codes.js';
import { explainOutcome } from '../gate/explain.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import type { PgPool } from '../pg/index.js';
import type { LoadedPolicy } from '../policy/types.js';
import { PgTokenLedger } from '../cluster/ledger.js';
import { PgLimitCounter } from '../cluster/limits.js';
import { resolveIntentHosts } from '../decision/host-resolution.js';
import { decideGate, decideGateAsync, type ApprovalTokenReuse, type GateRequest, type GateRuntime } from '../decision/gate-run.js';
import { gateEvalSteps, steps, type DecisionStepDef } from '../decision/steps.js';
import type { NormalizedIntent } from '../intent/types.js';
import { approvalStep, delegationStep } from '../decision/token-steps.js';
import { approvalCallOf, type ParsedToken } from '../tokens/index.js';
import type { TraceFormat } from '../trace/index.js';
import type { SharedDecisionState } from '../decision/types.js';
import { omitEmpty } from '../edge/json-output.js';
import type { EvalBody } from './gate-body.js';
import type { DaemonMetrics } from './metrics.js';
import type { PolicyHolder } from './policy-holder.js';
import type { DaemonTraceSink } from './trace-sink.js';

export interface GateServiceOptions {
  signingKey: SigningKey;
  /** Keys that verify approval and delegation tokens (default: the signing key). */
  tokenVerifyKeys: readonly VerifyKey[];
  traceFormat: TraceFormat;
  profile: 'standard' | 'oss-prod';
  traceDir: string;
  auditDir: string;
  rateLimitStatePath: string;
  warnings: readonly string[];
  /** Keep each decision's normalized intent beside its trace (`ward.decision_capture`). */
  captureIntents: boolean;
  /**
   * The cluster database (`ward serve --store postgres://…`): one-use approval tokens and
   * rate-limit and destructive-budget counters are shared through it instead of local files.
   */
  clusterDb?: PgPool | undefined;
  /**
   * `once` (default): an approval token grants one decision, on any replica sharing the state.
   * `ttl` (`ward serve --approval-token-reuse ttl`): Gait's semantics, reusable until it expires;
   * no ledger is consulted, locally or in the cluster (docs/approvals.md).
   */
  approvalTokenReuse?: ApprovalTokenReuse | undefined;
}

/**
 * What the console (src/daemon/console) adds to the decision path: approvals given in the inbox
 * are found by the retry, a signed denial refuses it, and every answered decision is observed.
 */
export interface ConsoleHooks {
  /** Approved tokens waiting for this intent (or this call, from another session) under this policy (used only when the request brings none). */
  tokensFor(intentDigest: string, policyDigest: string, callDigest: string): ParsedToken[];
  /** A signed denial in force for this intent under this policy. */
  deniedFor(intentDigest: string, policyDigest: string, callDigest: string): { denial_id: string } | undefined;
  /** A grant consumed these console tokens (one use): their files go. */
  consumed(tokenIds: readonly string[]): void;
  /** Every answered decision, with the intent as normalized (undefined when it could not be). */
  observe(output: JsonObject, intent: NormalizedIntent | undefined, raw: unknown): void;
}

export interface DecisionReply {
  /** The `ward gate eval --json` object (or the explain object when asked). */
  json: JsonObject;
  exitCode: ExitCode;
  verdict: string;
  /** The `gate eval --json` object (also under explain), for telemetry. */
  output: JsonObject;
}

/**
 * The daemon's decision path: the same runtime as `ward gate eval` (`decideGate`: evaluate,
 * post-process, sign) with the daemon's long-lived inputs (policy, key); the trace goes through the
 * group-commit sink and the reply exists only once the trace is durable.
 */
export class GateService {
  private runtimeFor: { policy: LoadedPolicy; runtime: GateRuntime } | undefined;
  /**
   * The kill-switch state every decision is checked against, read per decision; undefined: none
   * (a single daemon has no kill switch of its own). The cluster sets it (docs/cluster.md).
   */
  killSwitchSource: (() => GateRequest['killSwitch']) | undefined;
  /** Counters and token ledger in the cluster database; undefined: the state directory's files. */
  private readonly sharedState: SharedDecisionState | undefined;
  /** Set by the console when it is attached. */
  console: ConsoleHooks | undefined;

  constructor(
    private readonly policies: PolicyHolder,
    private readonly sink: DaemonTraceSink,
    private readonly metrics: DaemonMetrics,
    private readonly options: GateServiceOptions,
  ) {
    const db = options.clusterDb;
    this.sharedState = db ? { limits: new PgLimitCounter(db), tokens: new PgTokenLedger(db) } : undefined;
  }

  /** The runtime of the active policy and key; rebuilt only when a reload swapped either. */
  private runtime(): GateRuntime {
    const policy = this.policies.current;
    if (this.runtimeFor?.policy !== policy || this.runtimeFor.runtime.signingKey !== this.options.signingKey) {
      this.runtimeFor = {
        policy,
        runtime: {
          policy,
          signingKey: this.options.signingKey,
          traceFormat: this.options.traceFormat,
          traceDir: this.options.traceDir,
          rateLimitStatePath: this.options.rateLimitStatePath,
          profile: this.options.profile,
          warnings: [...this.options.warnings],
          captureIntents: this.options.captureIntents,
          ...(this.options.approvalTokenReuse ? { approvalTokenReuse: this.options.approvalTokenReuse } : {}),
          ...(this.sharedState ? { sharedState: this.sharedState } : {}),
        },
      };
    }
    return this.runtimeFor.runtime;
  }

  /** Decide one request whose slot in the trace queue is already reserved (`sink.admit()`). */
  async decide(body: EvalBody, correlationId: string): Promise<DecisionReply> {
    const request: GateRequest = { intent: body.intent, correlationId };
    if (body.evaluationTime) request.evaluationTime = body.evaluationTime;
    if (body.contextEnvelope) request.contextEnvelope = body.contextEnvelope;
    if (body.contextEnvelopeJson) request.contextEnvelopeJson = body.contextEnvelopeJson;
    const killSwitch = this.killSwitchSource?.();
    if (killSwitch) request.killSwitch = killSwitch;
    const tokenStep = (tokens: readonly ParsedToken[]) => ({
      tokens: () => tokens,
      verifyKeys: this.options.tokenVerifyKeys,
      audit: { dir: this.options.auditDir },
    });
    const hooks = this.console;
    let seen: NormalizedIntent | undefined;
    // Tokens in the request are the only ones used; without any, approvals given in the console.
    const approvals = body.approvalTokens || !hooks ? approvalStep(tokenStep(body.approvalTokens ?? [])) : (t: Parameters<ReturnType<typeof approvalStep>>[0]) => approvalStep(tokenStep(hooks.tokensFor(t.intentDigest, t.policyDigest, approvalCallOf(t.intent).callDigest)))(t);
    request.steps = gateEvalSteps(this.runtime(), { approvals, delegations: delegationStep(tokenStep(body.delegationTokens ?? [])) }, { simulate: body.simulate }).map((step) =>
      step.name === 'approval' && hooks ? consoleApprovalStep(step, hooks, (intent) => (seen = intent)) : step,
    );
    const started = performance.now();
    let pending;
    try {
      // The daemon resolves names too when it decides for another machine: its network view is the closest Ward has.
      request.resolvedHosts = await resolveIntentHosts(this.runtime().policy.policy, [request.intent]);
      // Shared state answers with round trips to the database (decideGateAsync awaits them); the
      // state directory's files answer at once, as for `ward gate eval`.
      pending = this.sharedState ? await decideGateAsync(this.runtime(), request) : decideGate(this.runtime(), request);
    } catch (err) {
      this.sink.release(); // no trace will come for this reservation
      throw err;
    }
    this.metrics.evalLatency.observe((performance.now() - started) / 1000);
    // The answer exists only once its trace is durable (group commit).
    const result = pending.finish(await this.sink.write(pending.trace, pending.capture));
    const verdict = String(result.output['verdict']);
    this.metrics.decisions.inc({ verdict });
    const reasons = result.output['reason_codes'];
    if (Array.isArray(reasons)) for (const reason of reasons) if (typeof reason === 'string') this.metrics.decisionReasons.inc({ verdict, reason });
    if (hooks) {
      const ref = result.output['approval_ref'];
      if (!body.approvalTokens && verdict === 'allow' && this.options.approvalTokenReuse !== 'ttl' && typeof ref === 'string' && ref) hooks.consumed(ref.split(','));
      hooks.observe({ ...result.output, correlation_id: correlationId }, seen, body.intent);
    }
    if (body.explain) {
      const explained = explainOutcome(result.outcome, {
        traceId: String(result.output['trace_id']),
        tracePath: result.tracePath,
        ...(typeof result.output['approval_audit_path'] === 'string' ? { approvalAuditPath: result.output['approval_audit_path'] } : {}),
        ...(typeof result.output['delegation_audit_path'] === 'string' ? { delegationAuditPath: result.output['delegation_audit_path'] } : {}),
      });
      return { json: { ...explained, correlation_id: correlationId }, exitCode: result.exitCode, verdict, output: result.output };
    }
    return { json: { ...(omitEmpty(result.output) as JsonObject), correlation_id: correlationId }, exitCode: result.exitCode, verdict, output: result.output };
  }
}

/**
 * The approval step with the console's denial in front: a call a person denied (a signed denial
 * for this intent under this policy, not expired) is blocked with `approval_denied` instead of
 * asking again; tokens do not override a denial. The step also hands the normalized intent to the
 * console (it runs for every evaluable decision).
 */
function consoleApprovalStep(step: DecisionStepDef, hooks: ConsoleHooks, seen: (intent: NormalizedIntent) => void): DecisionStepDef {
  const guarded = steps.deniedApproval(step, (s) => hooks.deniedFor(s.subject.intentDigest, s.policy.digest, approvalCallOf(s.subject.intent).callDigest) !== undefined);
  return {
    name: step.name,
    apply(s) {
      seen(s.subject.intent);
      return guarded.apply(s);
    },
  };
}
