import { performance } from 'node:perf_hooks';
import { nowUTC } from '../canon/gotime.js';
import type { JsonObject } from '../canon/json.js';
import type { ExitCode } from '../contract/exit-codes.js';
import { explainOutcome } from '../gate/explain.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import type { LoadedPolicy } from '../policy/types.js';
import { decideGate, type ApprovalStep, type DelegationStep, type GateRequest, type GateRuntime, type TokenContext } from '../runtime/gate-run.js';
import { approvalOpCount, approvalTargetCount, requiredApprovalScope } from '../tokens/approval.js';
import { buildApprovalAuditRecord, buildDelegationAuditRecord, type AuditContext } from '../tokens/audit.js';
import { writeAuditRecord } from '../tokens/files.js';
import { evaluateApprovals, evaluateDelegations, type ParsedToken } from '../tokens/rollup.js';
import type { SignedTrace, TraceFormat } from '../trace/record.js';
import { omitEmpty } from '../cli/output.js';
import { WARD_VERSION } from '../version.js';
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
}

export interface DecisionReply {
  /** The `ward gate eval --json` object (or the explain object when asked). */
  json: JsonObject;
  exitCode: ExitCode;
  verdict: string;
}

/**
 * The daemon's decision path: the same runtime as `ward gate eval` (`decideGate`: evaluate,
 * post-process, sign) with the daemon's long-lived inputs (policy, key); the trace goes through the
 * group-commit sink and the reply exists only once the trace is durable.
 */
export class GateService {
  private runtimeFor: { policy: LoadedPolicy; runtime: GateRuntime } | undefined;

  constructor(
    private readonly policies: PolicyHolder,
    private readonly sink: DaemonTraceSink,
    private readonly metrics: DaemonMetrics,
    private readonly options: GateServiceOptions,
  ) {}

  /** The runtime of the active policy; rebuilt only when a reload swapped the policy. */
  private runtime(): GateRuntime {
    const policy = this.policies.current;
    if (this.runtimeFor?.policy !== policy) {
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
        },
      };
    }
    return this.runtimeFor.runtime;
  }

  /** Decide one request whose slot in the trace queue is already reserved (`sink.admit()`). */
  async decide(body: EvalBody, correlationId: string): Promise<DecisionReply> {
    const request: GateRequest = { intent: body.intent, correlationId, simulate: body.simulate };
    if (body.evaluationTime) request.evaluationTime = body.evaluationTime;
    if (body.contextEnvelope) request.contextEnvelope = body.contextEnvelope;
    if (body.contextEnvelopeJson) request.contextEnvelopeJson = body.contextEnvelopeJson;
    request.approvals = this.approvalStep(body.approvalTokens ?? []);
    request.delegations = this.delegationStep(body.delegationTokens ?? []);
    const started = performance.now();
    let pending;
    try {
      pending = decideGate(this.runtime(), request);
    } catch (err) {
      this.sink.release(); // no trace will come for this reservation
      throw err;
    }
    this.metrics.evalLatency.observe((performance.now() - started) / 1000);
    // The answer exists only once its trace is durable (group commit).
    const result = pending.finish(await this.sink.write(pending.trace, pending.capture));
    const verdict = String(result.output['verdict']);
    this.metrics.decisions.inc({ verdict });
    if (body.explain) {
      const explained = explainOutcome(result.outcome, {
        traceId: String(result.output['trace_id']),
        tracePath: result.tracePath,
        ...(typeof result.output['approval_audit_path'] === 'string' ? { approvalAuditPath: result.output['approval_audit_path'] } : {}),
        ...(typeof result.output['delegation_audit_path'] === 'string' ? { delegationAuditPath: result.output['delegation_audit_path'] } : {}),
      });
      return { json: { ...explained, correlation_id: correlationId }, exitCode: result.exitCode, verdict };
    }
    return { json: { ...(omitEmpty(result.output) as JsonObject), correlation_id: correlationId }, exitCode: result.exitCode, verdict };
  }

  private auditWriter(record: (ctx: AuditContext) => JsonObject) {
    return (trace: SignedTrace): string =>
      writeAuditRecord(
        record({
          traceId: String(trace['trace_id']),
          toolName: String(trace['tool_name']),
          intentDigest: String(trace['intent_digest']),
          policyDigest: String(trace['policy_digest']),
          relationship: trace['relationship'] as JsonObject,
          createdAt: nowUTC(),
          producerVersion: WARD_VERSION,
        }),
        { dir: this.options.auditDir, eventId: String(trace['event_id']) },
      );
  }

  private approvalStep(tokens: readonly ParsedToken[]) {
    return (t: TokenContext): ApprovalStep => {
      const required = Math.max(t.outcome.minApprovals, 1);
      if (tokens.length === 0) {
        return { granted: false, reasonCodes: ['approval_token_missing'], violations: ['approval_not_granted'], requiredApprovals: required, validApprovals: 0, approvalRef: '' };
      }
      const r = evaluateApprovals({
        tokens,
        verifyKeys: this.options.tokenVerifyKeys,
        intentDigest: t.intentDigest,
        policyDigest: t.policyDigest,
        delegationDigest: t.intent.delegation ? t.delegationDigest : undefined,
        requiredScope: requiredApprovalScope(t.intent),
        targetCount: approvalTargetCount(t.intent),
        opCount: approvalOpCount(t.intent),
        requiredApprovals: required,
        requireDistinct: t.outcome.requireDistinctApprovers,
        now: t.wallNow,
      });
      return {
        granted: r.granted,
        reasonCodes: r.reasonCodes.filter((c) => c !== 'approval_granted'),
        violations: r.violations,
        requiredApprovals: r.requiredApprovals,
        validApprovals: r.validCount,
        approvalRef: r.validTokenIds.join(','),
        writeAudit: this.auditWriter((a) => buildApprovalAuditRecord(a, r)),
      };
    };
  }

  private delegationStep(tokens: readonly ParsedToken[]) {
    return (t: TokenContext): DelegationStep => {
      if (tokens.length === 0) return { granted: false, reasonCodes: ['delegation_token_missing'], validDelegations: 0, delegationRef: '' };
      const r = evaluateDelegations({
        tokens,
        intent: t.intent,
        verifyKeys: this.options.tokenVerifyKeys,
        intentDigest: t.intentDigest,
        policyDigest: t.policyDigest,
        requiredScopes: t.outcome.delegationScopes,
        now: t.wallNow,
      });
      return {
        granted: r.granted,
        reasonCodes: r.reasonCodes.filter((c) => c !== 'delegation_granted'),
        validDelegations: r.validCount,
        delegationRef: r.validTokenIds.join(','),
        writeAudit: this.auditWriter((a) => buildDelegationAuditRecord(a, r)),
      };
    };
  }
}
