import type { Command } from 'commander';
import { goLower, goTrim, isSha256Hex, nowUTC, parseStrictJson, type JsonValue } from '../../canon/index.js';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { FileTokenLedger } from '../../state/token-ledger.js';
import { normalizeApprovalToken, TokenInvalidError, validateApprovalToken } from '../../tokens/index.js';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stateDir, type CliContext } from '../context.js';
import { goJsonLine } from '../output.js';
import { addVerifyKeyOptions, verifyKeysFromFlags, type VerifyKeyFlags } from './keys.js';

interface ApproveVerifyFlags extends VerifyKeyFlags {
  intentDigest?: string;
  policyDigest?: string;
  callDigest?: string;
  json?: boolean;
}

/**
 * `ward approve verify <token.json>`: check an approval token offline — its signature against the
 * given keys (an approvers JWKS, a public key, or the state directory's ring), its expiry and
 * lifetime, and optionally that it is bound to an intent and policy digest. It also says whether
 * the state directory's ledger has recorded it as used. Approvals signed in the console
 * (docs/console.md) are checked the same way.
 */
export function registerApproveVerify(approve: Command, ctx: CliContext): void {
  addVerifyKeyOptions(
    approve
      .command('verify')
      .description('verify an approval token offline: signature, expiry, optional binding; exit 0 valid, 2 not valid, 6 usage')
      .argument('<token>', 'approval token file (JSON)'),
  )
    .option('--intent-digest <sha256>', 'the token must be bound to this intent digest')
    .option('--policy-digest <sha256>', 'the token must be bound to this policy digest')
    .option('--call-digest <sha256>', 'with --intent-digest: a token bound to this call (call_digest) also passes from another session')
    .option('--json', 'one line of JSON on stdout')
    .addHelpText('after', '\nExample (a token approved in the console, checked with the approvers\' keys):\n  ward approve verify approval_9c1e4b7d2a0f3e61.json --jwks approvers.jwks --intent-digest <sha256> --policy-digest <sha256>\n')
    // `ward approve` declares --json, --state-dir and the key flags too: read them from either level.
    .action((file: string, _flags: ApproveVerifyFlags, cmd: Command) => verify(ctx, file, cmd.optsWithGlobals<ApproveVerifyFlags>()));
}

function verify(ctx: CliContext, file: string, flags: ApproveVerifyFlags): void {
  let value: JsonValue;
  const path = resolve(ctx.cwd, file);
  try {
    value = parseStrictJson(readFileSync(path, 'utf8')) as JsonValue;
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `approval token ${file}: ${(err as Error).message}`);
  }
  for (const [flag, v] of [['--intent-digest', flags.intentDigest], ['--policy-digest', flags.policyDigest], ['--call-digest', flags.callDigest]] as const) {
    if (v !== undefined && !isSha256Hex(goLower(goTrim(v)))) throw new WardError(ERROR_CODES.USAGE, `${flag} must be sha256 hex`);
  }
  let claimed;
  try {
    claimed = normalizeApprovalToken(value);
  } catch (err) {
    if (!(err instanceof TokenInvalidError)) throw err;
    return report(ctx, flags, { ok: false, path, error_code: 'approval_token_invalid', error: err.message });
  }
  const keys = verifyKeysFromFlags(ctx, flags);
  const r = validateApprovalToken(value, {
    verifyKeys: keys,
    intentDigest: flags.intentDigest ? goLower(goTrim(flags.intentDigest)) : claimed.intent_digest,
    policyDigest: flags.policyDigest ? goLower(goTrim(flags.policyDigest)) : claimed.policy_digest,
    requiredScope: [],
    targetCount: 0,
    opCount: 0,
    ...(flags.callDigest ? { callDigest: goLower(goTrim(flags.callDigest)) } : {}),
    now: nowUTC(),
  });
  const used = new FileTokenLedger(join(stateDir(ctx, flags.stateDir), 'token_ledger')).isConsumed('approval', claimed.token_id);
  const facts = {
    path,
    token_id: claimed.token_id,
    approver_identity: claimed.approver_identity,
    intent_digest: claimed.intent_digest,
    policy_digest: claimed.policy_digest,
    scope: claimed.scope,
    expires_at: value && typeof value === 'object' && !Array.isArray(value) ? String(value['expires_at']) : '',
    consumed: used,
  };
  if (!r.ok) return report(ctx, flags, { ok: false, ...facts, error_code: r.code, error: r.message });
  report(ctx, flags, { ok: true, ...facts, key_id: r.keyId });
}

function report(ctx: CliContext, flags: ApproveVerifyFlags, result: Record<string, unknown>): void {
  if (flags.json) ctx.stdout(goJsonLine(result) + '\n');
  else if (result['ok']) {
    ctx.stdout(`approval token ${String(result['token_id'])} valid: signed by key ${String(result['key_id'])}, approver ${String(result['approver_identity'])}, expires ${String(result['expires_at'])}${result['consumed'] ? ' (already used: the ledger of this state directory records it)' : ''}\n`);
  } else ctx.stdout(`approval token not valid: ${String(result['error_code'])}: ${String(result['error'])}\n`);
  ctx.exitCode = result['ok'] ? EXIT.OK : EXIT.VERIFY_FAILED;
}
