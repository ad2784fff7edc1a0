import { compareTime, nowUTC, parseRFC3339, type GoTime, type JsonObject } from '../canon/index.js';
import type { VerifyKey } from '../keys/index.js';
import { approvalCallOf, approvalOpCount, approvalTargetCount, buildApprovalAuditRecord, buildDelegationAuditRecord, evaluateApprovals, evaluateDelegations, requiredApprovalScope, writeAuditRecord, type ApprovalEvaluation, type AuditContext, type ParsedToken } from '../tokens/index.js';
import type { SharedTokenLedger } from '../state/token-ledger.js';
import type { SignedTrace } from '../trace/index.js';
import { WARD_VERSION } from '../version.js';
import { andThen, type MaybePromise } from './maybe-async.js';
import type { ApprovalStep, DelegationStep, TokenContext } from './types.js';

/**
 * The approval and delegation steps of a decision (§3.6 steps 7–8), shared by every host: the
 * CLI reads tokens from flags, the daemon from the request body, the MCP proxy from its approval
 * directory. Each host supplies the tokens, the keys that verify them, and (optionally) where the
 * audit record goes.
 */
export interface TokenStepOptions {
  /** Read lazily: only decisions that need the step pay for it. */
  tokens: () => readonly ParsedToken[];
  verifyKeys: readonly VerifyKey[] | (() => readonly VerifyKey[]);
  /** Writes the audit record after the trace; omitted when the host keeps no audit files. */
  audit?: AuditDestination;
}

export interface AuditDestination {
  dir: string;
  /** An exact path (`--approval-audit-out`); the default name otherwise. */
  path?: string | undefined;
  cwd?: string;
}

/**
 * The approval step. Over the file ledger it is synchronous; over the cluster's ledger every ledger
 * call is a round trip and the step returns a promise (maybe-async.ts): one step, both kinds of state.
 */
export function approvalStep(options: TokenStepOptions): (t: TokenContext) => MaybePromise<ApprovalStep> {
  return (t) => {
    const tokens = options.tokens();
    const required = Math.max(t.outcome.minApprovals, 1);
    if (tokens.length === 0) {
      return {
        granted: false,
        reasonCodes: ['approval_token_missing'],
        violations: ['approval_not_granted'],
        requiredApprovals: required,
        validApprovals: 0,
        approvalRef: '',
      };
    }
    const ledger = t.approvalLedger;
    const hint = ledger && 'isConsumed' in ledger ? ledger : undefined;
    const lost = new Set<string>();
    // What a token may name about the call (tool, canonical targets, argument digest, call digest).
    const call = approvalCallOf(t.intent);
    const evaluateOnce = () =>
      evaluateApprovals({
        tokens,
        verifyKeys: keysOf(options),
        intentDigest: t.intentDigest,
        policyDigest: t.policyDigest,
        delegationDigest: t.intent.delegation ? t.delegationDigest : undefined,
        requiredScope: requiredApprovalScope(t.intent),
        targetCount: approvalTargetCount(t.intent),
        opCount: approvalOpCount(t.intent),
        call,
        sessionBound: t.approvalSessionBound === true,
        requiredApprovals: required,
        requireDistinct: t.outcome.requireDistinctApprovers,
        now: t.wallNow,
        ...(ledger ? { isConsumed: (id: string) => lost.has(id) || (hint?.isConsumed('approval', id) ?? false) } : {}),
      });
    // Tokens that turned out to be used are evaluated again without them; each round loses at
    // least one token, so this ends.
    const settle = (r: ApprovalEvaluation): MaybePromise<ApprovalEvaluation> => {
      if (!ledger) return r;
      if (t.consumeApprovals && r.granted) {
        // One use: a grant consumes every valid token it saw, atomically against every other
        // process (or replica) sharing the ledger. A token another decision consumed in the
        // meantime now counts as used.
        const consumed = ledger.consume('approval', r.validTokenIds, {
          intentDigest: t.intentDigest,
          policyDigest: t.policyDigest,
          expiresAt: latestExpiry(r.entries),
          consumedAt: nowUTC(),
        });
        return andThen(consumed, (c) => (c.ok ? r : retry(c.conflicts)));
      }
      // A decision that consumes nothing still names a used token (approval_token_consumed): the
      // file ledger answered during evaluation; the cluster's ledger is asked here.
      if (hint || r.validTokenIds.length === 0) return r;
      return andThen((ledger as SharedTokenLedger).consumedAmong('approval', r.validTokenIds), (used) => (used.length ? retry(used) : r));
    };
    const retry = (used: readonly string[]): MaybePromise<ApprovalEvaluation> => {
      for (const id of used) lost.add(id);
      return settle(evaluateOnce());
    };
    return andThen(settle(evaluateOnce()), (r) => ({
      granted: r.granted,
      reasonCodes: r.reasonCodes.filter((c) => c !== 'approval_granted'),
      violations: r.violations,
      requiredApprovals: r.requiredApprovals,
      validApprovals: r.validCount,
      approvalRef: r.validTokenIds.join(','),
      ...(options.audit ? { writeAudit: auditWriter(options.audit, (a) => buildApprovalAuditRecord(a, r)) } : {}),
    }));
  };
}

export function delegationStep(options: TokenStepOptions): (t: TokenContext) => DelegationStep {
  return (t) => {
    const tokens = options.tokens();
    if (tokens.length === 0) return { granted: false, reasonCodes: ['delegation_token_missing'], validDelegations: 0, delegationRef: '' };
    const r = evaluateDelegations({
      tokens,
      intent: t.intent,
      verifyKeys: keysOf(options),
      intentDigest: t.intentDigest,
      policyDigest: t.policyDigest,
      requiredScopes: t.outcome.delegationScopes,
      allowedRootDelegators: t.allowedRootDelegators,
      now: t.wallNow,
    });
    return {
      granted: r.granted,
      reasonCodes: r.reasonCodes.filter((c) => c !== 'delegation_granted'),
      validDelegations: r.validCount,
      delegationRef: r.validTokenIds.join(','),
      ...(options.audit ? { writeAudit: auditWriter(options.audit, (a) => buildDelegationAuditRecord(a, r)) } : {}),
    };
  };
}

function latestExpiry(entries: readonly { valid: boolean; expires_at: string }[]): GoTime | undefined {
  let latest: GoTime | undefined;
  for (const entry of entries) {
    if (!entry.valid || !entry.expires_at) continue;
    const t = parseRFC3339(entry.expires_at);
    if (!latest || compareTime(t, latest) > 0) latest = t;
  }
  return latest;
}

function keysOf(options: TokenStepOptions): readonly VerifyKey[] {
  return typeof options.verifyKeys === 'function' ? options.verifyKeys() : options.verifyKeys;
}

/** Audit records join the trace they follow (same trace id, relationship and digests). */
function auditWriter(dest: AuditDestination, record: (ctx: AuditContext) => JsonObject) {
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
      { path: dest.path, dir: dest.dir, ...(dest.cwd ? { cwd: dest.cwd } : {}), eventId: String(trace['event_id']) },
    );
}
