import { nowUTC } from '../../canon/gotime.js';
import type { JsonObject } from '../../canon/json.js';
import { isVerifyKeyConfigured, loadVerifyKeys, type SigningKey, type VerifyKey, type VerifyKeySources } from '../../keys/index.js';
import type { ApprovalStep, DelegationStep, TokenContext } from '../../runtime/gate-run.js';
import { approvalOpCount, approvalTargetCount, requiredApprovalScope } from '../../tokens/approval.js';
import { evaluateApprovals, evaluateDelegations } from '../../tokens/rollup.js';
import { buildApprovalAuditRecord, buildDelegationAuditRecord, type AuditContext } from '../../tokens/audit.js';
import { readTokenFiles, writeAuditRecord } from '../../tokens/files.js';
import type { SignedTrace } from '../../trace/record.js';
import { WARD_VERSION } from '../../version.js';
import type { CliContext } from '../context.js';

export interface TokenFlags {
  approvalToken?: string;
  approvalTokenChain?: string;
  approvalTokenRef?: string;
  approvalAuditOut?: string;
  approvalPublicKey?: string;
  approvalPublicKeyEnv?: string;
  approvalPrivateKey?: string;
  approvalPrivateKeyEnv?: string;
  delegationToken?: string;
  delegationTokenChain?: string;
  delegationAuditOut?: string;
  delegationPublicKey?: string;
  delegationPublicKeyEnv?: string;
  delegationPrivateKey?: string;
  delegationPrivateKeyEnv?: string;
}

/** Where audit records go: next to the traces, one directory per kind of evidence. */
function auditWriter(auditDir: string, path: string | undefined, cwd: string, record: (ctx: AuditContext) => JsonObject) {
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
      { path, dir: auditDir, cwd, eventId: String(trace['event_id']) },
    );
}

/**
 * Verify keys from the first configured source in `chain`, else the signing key's public half
 * (§3.6 steps 1, 7, 8: each token kind falls back to the approval key flags, then the signing
 * key). With `--key-mode dev` that key is ephemeral, so tokens can never verify there: fail closed.
 */
export function verifyKeysFor(ctx: CliContext, chain: readonly VerifyKeySources[], fallback: VerifyKey): VerifyKey[] {
  const configured = chain.find(isVerifyKeyConfigured);
  return configured ? loadVerifyKeys(configured, ctx.env, ctx.cwd) : [fallback];
}

export function approvalSources(f: TokenFlags): VerifyKeySources {
  return {
    publicKeyPath: f.approvalPublicKey,
    publicKeyEnv: f.approvalPublicKeyEnv,
    privateKeyPath: f.approvalPrivateKey,
    privateKeyEnv: f.approvalPrivateKeyEnv,
  };
}

export function approvalStep(ctx: CliContext, flags: TokenFlags, signingKey: SigningKey, auditDir: string) {
  return (t: TokenContext): ApprovalStep => {
    const tokens = readTokenFiles(flags.approvalToken, flags.approvalTokenChain, ctx.cwd);
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
    const r = evaluateApprovals({
      tokens,
      verifyKeys: verifyKeysFor(ctx, [approvalSources(flags)], signingKey),
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
      writeAudit: auditWriter(auditDir, flags.approvalAuditOut, ctx.cwd, (a) => buildApprovalAuditRecord(a, r)),
    };
  };
}

export function delegationStep(ctx: CliContext, flags: TokenFlags, signingKey: SigningKey, auditDir: string) {
  return (t: TokenContext): DelegationStep => {
    const tokens = readTokenFiles(flags.delegationToken, flags.delegationTokenChain, ctx.cwd);
    if (tokens.length === 0) return { granted: false, reasonCodes: ['delegation_token_missing'], validDelegations: 0, delegationRef: '' };
    const own: VerifyKeySources = {
      publicKeyPath: flags.delegationPublicKey,
      publicKeyEnv: flags.delegationPublicKeyEnv,
      privateKeyPath: flags.delegationPrivateKey,
      privateKeyEnv: flags.delegationPrivateKeyEnv,
    };
    const keys = verifyKeysFor(ctx, [own, approvalSources(flags)], signingKey);
    const r = evaluateDelegations({
      tokens,
      intent: t.intent,
      verifyKeys: keys,
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
      writeAudit: auditWriter(auditDir, flags.delegationAuditOut, ctx.cwd, (a) => buildDelegationAuditRecord(a, r)),
    };
  };
}
