import type { Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { nowUTC, parseGoDuration, type JsonObject } from '../../canon/index.js';
import { TokenInvalidError, mintApprovalToken, writeTokenFile } from '../../tokens/index.js';
import { WARD_VERSION } from '../../version.js';
import type { CliContext } from '../context.js';
import { correlationId, goJsonLine } from '../output.js';
import { registerApproveVerify } from './approve-verify.js';
import { addSigningKeyOptions, signingKeyFromFlags, type SigningKeyFlags } from './keys.js';

interface ApproveFlags extends SigningKeyFlags {
  intentDigest: string;
  policyDigest: string;
  delegationBindingDigest?: string;
  callDigest?: string;
  ttl: string;
  scope: string;
  approver: string;
  reasonCode: string;
  maxTargets?: string;
  maxOps?: string;
  out?: string;
  json?: boolean;
}

/** `ward approve`: mint a signed `gait.gate.approval_token` (`gate.md` §7.1). */
export function register(program: Command, ctx: CliContext): void {
  const approve = addSigningKeyOptions(
    program
      .command('approve')
      .description('mint a signed approval token bound to an intent digest and a policy digest')
      .option('--intent-digest <sha256>', 'the intent_digest gate eval reported')
      .option('--policy-digest <sha256>', 'the policy_digest gate eval reported')
      .option('--delegation-binding-digest <sha256>', 'required when the intent carries delegation')
      .option('--call-digest <sha256>', 'also grant the same call from another session (Ward; the call digest gate eval prints; docs/approvals.md "Call or session")')
      .option('--ttl <duration>', 'lifetime as a Go duration, e.g. 30m or 1h (at most 24h; the token grants one decision)')
      .option('--scope <csv>', 'comma-separated scopes, e.g. tool:tool.write,phase:apply,destructive:apply')
      .option('--approver <identity>', 'who approves')
      .option('--reason-code <code>', 'why')
      .option('--max-targets <n>', 'most targets the approval covers (0 = no limit)')
      .option('--max-ops <n>', 'most operations the approval covers (0 = no limit)')
      .option('--out <file>', 'token file (default approval_<token_id>.json)'),
  )
    .option('--json', 'one line of JSON on stdout')
    .addHelpText('after', `\nExample (gate eval prints this command, digests filled in, when a call needs approval):\n  ${APPROVE_EXAMPLE}\n`)
    .action((flags: ApproveFlags) => {
      requireAll(flags);
      const signing = signingKeyFromFlags(ctx, flags);
      const token = mintOrUsage(() =>
        mintApprovalToken({
          intentDigest: flags.intentDigest,
          policyDigest: flags.policyDigest,
          delegationBindingDigest: flags.delegationBindingDigest,
          callDigest: flags.callDigest,
          ttlNs: parseGoDuration(flags.ttl),
          scope: parseScope(flags.scope),
          approver: flags.approver,
          reasonCode: flags.reasonCode,
          maxTargets: parseCount(flags.maxTargets, '--max-targets'),
          maxOps: parseCount(flags.maxOps, '--max-ops'),
          now: nowUTC(),
          producerVersion: WARD_VERSION,
          key: signing.key,
        }),
      );
      printMinted(ctx, flags, token, 'approval', signing.warnings);
    });
  registerApproveVerify(approve, ctx);
}

const APPROVE_EXAMPLE =
  'ward approve --intent-digest <sha256> --policy-digest <sha256> --scope tool:fs.write_file --ttl 1h --approver you@example.com --reason-code CHG-123';

/**
 * Scope entries are `kind:value` (`tool:fs.write_file`, `phase:apply`, `destructive:apply`) or `*`.
 * A bare tool name (as the reference's runbook writes it) can never match, so the token would be
 * useless: it is refused with the spelling that works.
 */
function parseScope(csv: string): string[] {
  const scope = csv.split(',').map((entry) => entry.trim());
  const bare = scope.filter((entry) => entry !== '*' && !entry.includes(':'));
  if (bare.length > 0) {
    throw new WardError(ERROR_CODES.USAGE, `--scope ${bare.map((e) => JSON.stringify(e)).join(', ')} can never match: scope entries are tool:<tool_name>, phase:apply, destructive:apply or *`, {
      hint: `did you mean --scope ${scope.map((e) => (bare.includes(e) ? `tool:${e}` : e)).join(',')}?`,
    });
  }
  return scope;
}

const REQUIRED: readonly (keyof ApproveFlags)[] = ['intentDigest', 'policyDigest', 'ttl', 'scope', 'approver', 'reasonCode'];

/** Every missing option at once, with a complete example, rather than one per attempt. */
function requireAll(flags: ApproveFlags): void {
  const missing = REQUIRED.filter((key) => flags[key] === undefined || flags[key] === '');
  if (missing.length === 0) return;
  const names = missing.map((key) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  throw new WardError(ERROR_CODES.USAGE, `missing required option${names.length > 1 ? 's' : ''}: ${names.join(', ')}`, {
    hint: `for example: ${APPROVE_EXAMPLE}`,
  });
}

/** Mint-time validation failures are usage errors (exit 6). */
export function mintOrUsage(mint: () => JsonObject): JsonObject {
  try {
    return mint();
  } catch (err) {
    if (err instanceof TokenInvalidError) throw new WardError(ERROR_CODES.USAGE, err.message);
    throw err;
  }
}

export function parseCount(value: string | undefined, flag: string): number {
  if (value === undefined) return 0;
  if (!/^\d+$/.test(value.trim())) throw new WardError(ERROR_CODES.USAGE, `${flag} must be a non-negative integer`);
  return Number(value.trim());
}

/** Write a minted token (default `<kind>_<token_id>.json`) and report it. */
export function printMinted(
  ctx: CliContext,
  flags: { out?: string; json?: boolean },
  token: JsonObject,
  kind: 'approval' | 'delegation',
  warnings: readonly string[],
): void {
  const tokenId = String(token['token_id']);
  const path = writeTokenFile(token, flags.out ?? `${kind}_${tokenId}.json`, ctx.cwd);
  const signature = token['signature'] as JsonObject;
  if (flags.json) {
    ctx.stdout(
      goJsonLine({
        ok: true,
        correlation_id: correlationId(ctx.argv),
        token_id: tokenId,
        token_path: path,
        expires_at: token['expires_at'],
        key_id: signature['key_id'],
        warnings,
      }) + '\n',
    );
  } else {
    for (const warning of warnings) ctx.stderr(`warning: ${warning}\n`);
    ctx.stdout(`${kind} token ${tokenId} written to ${path} (expires ${String(token['expires_at'])}, key ${String(signature['key_id'])})\n`);
  }
  ctx.exitCode = EXIT.OK;
}

