import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseJsonText } from '../../canon/json.js';
import { compareUtf8 } from '../../canon/sort.js';
import { isVerifyKeyConfigured, loadVerifyKeys, type SigningKey, type VerifyKey, type VerifyKeySources } from '../../keys/index.js';
import type { ApprovalStep, DelegationStep, TokenContext } from '../../runtime/gate-run.js';
import { approvalOpCount, approvalTargetCount, requiredApprovalScope } from '../../tokens/approval.js';
import { evaluateApprovals, evaluateDelegations, type ParsedToken } from '../../tokens/rollup.js';
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

/** Token files from `--x-token` and `--x-token-chain` (csv), deduped and sorted like the reference. */
function tokenPaths(single: string | undefined, chain: string | undefined): string[] {
  const all = [single ?? '', ...(chain ?? '').split(',')].map((p) => p.trim()).filter((p) => p !== '');
  return [...new Set(all)].sort(compareUtf8);
}

function readTokens(ctx: CliContext, paths: readonly string[]): ParsedToken[] {
  return paths.map((path) => {
    try {
      return { source: path, value: parseJsonText(readFileSync(resolve(ctx.cwd, path), 'utf8')) };
    } catch (err) {
      return { source: path, error: (err as Error).message };
    }
  });
}

/**
 * The approval verify key: the approval key flags, else the signing key's public half (§3.6 step
 * 8). With `--key-mode dev` that key is ephemeral, so tokens can never verify there: fail closed.
 */
function verifyKeys(ctx: CliContext, sources: VerifyKeySources, fallback: VerifyKey): VerifyKey[] {
  return isVerifyKeyConfigured(sources) ? loadVerifyKeys(sources, ctx.env, ctx.cwd) : [fallback];
}

function approvalSources(f: TokenFlags): VerifyKeySources {
  return {
    publicKeyPath: f.approvalPublicKey,
    publicKeyEnv: f.approvalPublicKeyEnv,
    privateKeyPath: f.approvalPrivateKey,
    privateKeyEnv: f.approvalPrivateKeyEnv,
  };
}

export function approvalStep(ctx: CliContext, flags: TokenFlags, signingKey: SigningKey) {
  return (t: TokenContext): ApprovalStep => {
    const paths = tokenPaths(flags.approvalToken, flags.approvalTokenChain);
    const required = Math.max(t.outcome.minApprovals, 1);
    if (paths.length === 0) {
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
      tokens: readTokens(ctx, paths),
      verifyKeys: verifyKeys(ctx, approvalSources(flags), signingKey),
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
    };
  };
}

export function delegationStep(ctx: CliContext, flags: TokenFlags, signingKey: SigningKey) {
  return (t: TokenContext): DelegationStep => {
    const paths = tokenPaths(flags.delegationToken, flags.delegationTokenChain);
    if (paths.length === 0) return { granted: false, reasonCodes: ['delegation_token_missing'], validDelegations: 0, delegationRef: '' };
    const own: VerifyKeySources = {
      publicKeyPath: flags.delegationPublicKey,
      publicKeyEnv: flags.delegationPublicKeyEnv,
      privateKeyPath: flags.delegationPrivateKey,
      privateKeyEnv: flags.delegationPrivateKeyEnv,
    };
    const keys = isVerifyKeyConfigured(own) ? loadVerifyKeys(own, ctx.env, ctx.cwd) : verifyKeys(ctx, approvalSources(flags), signingKey);
    const r = evaluateDelegations({
      tokens: readTokens(ctx, paths),
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
    };
  };
}
