import { isVerifyKeyConfigured, loadVerifyKeys, type SigningKey, type VerifyKey, type VerifyKeySources } from '../../keys/index.js';
import type { ApprovalTokenReuse, DelegationStep, TokenContext } from '../../decision/gate-run.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { approvalStep as runtimeApprovalStep, delegationStep as runtimeDelegationStep } from '../../decision/token-steps.js';
import { readTokenFiles, type ParsedToken } from '../../tokens/index.js';
import type { CliContext } from '../context.js';

export interface TokenFlags {
  approvalToken?: string;
  approvalTokenChain?: string;
  approvalTokenRef?: string;
  /** `--approval-token-reuse once|ttl` (default once). */
  approvalTokenReuse?: string;
  approvalAuditOut?: string;
  approvalPublicKey?: string;
  /** `--approval-jwks`: several approvers' verify keys (distinct approvers need distinct keys). */
  approvalJwks?: string;
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

/**
 * Verify keys from the first configured source in `chain`, else the signing key's public half
 * (§3.6 steps 1, 7, 8: each token kind falls back to the approval key flags, then the signing
 * key). With `--key-mode dev` that key is ephemeral, so tokens can never verify there: fail closed.
 */
export function verifyKeysFor(ctx: CliContext, chain: readonly VerifyKeySources[], fallback: VerifyKey): VerifyKey[] {
  const configured = chain.find(isVerifyKeyConfigured);
  return configured ? loadVerifyKeys(configured, ctx.env, ctx.cwd) : [fallback];
}

/** `--approval-token-reuse`: `once` (one-use tokens, the default) or `ttl` (reusable until expiry, opt-in). */
export function approvalTokenReuse(mode: string | undefined): ApprovalTokenReuse {
  if (mode === undefined || mode === 'once') return 'once';
  if (mode === 'ttl') return 'ttl';
  throw new WardError(ERROR_CODES.USAGE, `invalid --approval-token-reuse ${JSON.stringify(mode)}: use once or ttl`);
}

export function approvalSources(f: TokenFlags): VerifyKeySources {
  return {
    publicKeyPath: f.approvalPublicKey,
    publicKeyEnv: f.approvalPublicKeyEnv,
    jwksPath: f.approvalJwks,
    privateKeyPath: f.approvalPrivateKey,
    privateKeyEnv: f.approvalPrivateKeyEnv,
  };
}

/**
 * A token file that cannot be read counts as an invalid token (the reference's reason code), but
 * the code alone does not say that the file is missing or not JSON: the person retrying needs that.
 */
function warnUnreadable(ctx: CliContext, kind: string, tokens: ParsedToken[]): ParsedToken[] {
  for (const token of tokens) if ('error' in token) ctx.stderr(`warning: ${kind} token ${token.source}: ${token.error}\n`);
  return tokens;
}

export function approvalStep(ctx: CliContext, flags: TokenFlags, signingKey: SigningKey, auditDir: string): ReturnType<typeof runtimeApprovalStep> {
  return runtimeApprovalStep({
    tokens: () => warnUnreadable(ctx, 'approval', readTokenFiles(flags.approvalToken, flags.approvalTokenChain, ctx.cwd)),
    verifyKeys: () => verifyKeysFor(ctx, [approvalSources(flags)], signingKey),
    audit: { dir: auditDir, path: flags.approvalAuditOut, cwd: ctx.cwd },
  });
}

export function delegationStep(ctx: CliContext, flags: TokenFlags, signingKey: SigningKey, auditDir: string): (t: TokenContext) => DelegationStep {
  const own: VerifyKeySources = {
    publicKeyPath: flags.delegationPublicKey,
    publicKeyEnv: flags.delegationPublicKeyEnv,
    privateKeyPath: flags.delegationPrivateKey,
    privateKeyEnv: flags.delegationPrivateKeyEnv,
  };
  return runtimeDelegationStep({
    tokens: () => warnUnreadable(ctx, 'delegation', readTokenFiles(flags.delegationToken, flags.delegationTokenChain, ctx.cwd)),
    verifyKeys: () => verifyKeysFor(ctx, [own, approvalSources(flags)], signingKey),
    audit: { dir: auditDir, path: flags.delegationAuditOut, cwd: ctx.cwd },
  });
}
