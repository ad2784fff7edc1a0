import type { Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { formatRFC3339Nano, nowUTC, parseGoDuration, uniqueSortedLower } from '../../canon/index.js';
import { mintDelegationToken, readTokenFile, validateDelegationToken } from '../../tokens/index.js';
import { WARD_VERSION } from '../../version.js';
import type { CliContext } from '../context.js';
import { correlationId, goJsonLine } from '../output.js';
import { mintOrUsage, printMinted } from './approve.js';
import { addSigningKeyOptions, addVerifyKeyOptions, signingKeyFromFlags, verifyKeysFromFlags, type SigningKeyFlags, type VerifyKeyFlags } from './keys.js';

interface MintFlags extends SigningKeyFlags {
  delegator: string;
  delegate: string;
  scope: string;
  ttl: string;
  scopeClass?: string;
  intentDigest?: string;
  policyDigest?: string;
  out?: string;
  json?: boolean;
}

interface VerifyFlags extends VerifyKeyFlags {
  delegator?: string;
  delegate?: string;
  scope?: string;
  intentDigest?: string;
  policyDigest?: string;
  json?: boolean;
}

/** `ward delegate mint|verify`: signed `gait.gate.delegation_token`s (`gate.md` §7.2). */
export function register(program: Command, ctx: CliContext): void {
  const delegate = program.command('delegate').description('signed delegation tokens: one agent lets another act for it');

  addSigningKeyOptions(
    delegate
      .command('mint')
      .description('mint a signed delegation token')
      .requiredOption('--delegator <identity>', 'who delegates')
      .requiredOption('--delegate <identity>', 'who receives the delegation')
      .requiredOption('--scope <csv>', 'comma-separated scopes (the policy needs any one of its delegation_scopes)')
      .requiredOption('--ttl <duration>', 'lifetime as a Go duration, e.g. 30m or 1h')
      .option('--scope-class <class>', 'scope class, also matched against delegation_scopes')
      .option('--intent-digest <sha256>', 'bind the token to one intent')
      .option('--policy-digest <sha256>', 'bind the token to one policy')
      .option('--out <file>', 'token file (default delegation_<token_id>.json)'),
  )
    .option('--json', 'one line of JSON on stdout')
    .action((flags: MintFlags) => {
      const signing = signingKeyFromFlags(ctx, flags);
      const token = mintOrUsage(() =>
        mintDelegationToken({
          delegator: flags.delegator,
          delegate: flags.delegate,
          scope: flags.scope.split(','),
          scopeClass: flags.scopeClass,
          intentDigest: flags.intentDigest,
          policyDigest: flags.policyDigest,
          ttlNs: parseGoDuration(flags.ttl),
          now: nowUTC(),
          producerVersion: WARD_VERSION,
          key: signing.key,
        }),
      );
      printMinted(ctx, flags, token, 'delegation', signing.warnings);
    });

  addVerifyKeyOptions(
    delegate
      .command('verify')
      .description('verify a delegation token: signature and expiry, plus any link, scope or digest given. Exit 0 valid, 2 invalid')
      .argument('<file>', 'delegation token file')
      .option('--delegator <identity>', 'expected delegator')
      .option('--delegate <identity>', 'expected delegate')
      .option('--scope <csv>', 'required scopes (any one)')
      .option('--intent-digest <sha256>', 'intent digest a bound token must match')
      .option('--policy-digest <sha256>', 'policy digest a bound token must match'),
  )
    .option('--json', 'one line of JSON on stdout')
    .action((file: string, flags: VerifyFlags) => {
      const keys = verifyKeysFromFlags(ctx, flags);
      const parsed = readTokenFile(file, ctx.cwd);
      const now = nowUTC();
      const result =
        'error' in parsed
          ? { ok: false as const, code: 'delegation_token_invalid' as const, message: parsed.error, token: undefined }
          : validateDelegationToken(
              parsed.value,
              {
                delegator_identity: flags.delegator ?? '',
                // Without --delegate the token's own delegate is the expected one.
                delegate_identity: flags.delegate ?? stringField(parsed.value, 'delegate_identity'),
                scope_class: '',
              },
              {
                verifyKeys: keys,
                intentDigest: (flags.intentDigest ?? stringField(parsed.value, 'intent_digest')).toLowerCase(),
                policyDigest: (flags.policyDigest ?? stringField(parsed.value, 'policy_digest')).toLowerCase(),
                requiredScopes: uniqueSortedLower((flags.scope ?? '').split(',')),
                now,
              },
            );
      const token = result.token;
      const fields = {
        ok: result.ok,
        path: file,
        token_id: token?.token_id,
        delegator_identity: token?.delegator_identity,
        delegate_identity: token?.delegate_identity,
        expires_at: token ? formatRFC3339Nano(token.expires_at) : undefined,
        error_code: result.ok ? undefined : result.code,
        error: result.ok ? undefined : result.message,
      };
      if (flags.json) ctx.stdout(goJsonLine({ correlation_id: correlationId(ctx.argv), ...fields }) + '\n');
      else if (result.ok) ctx.stdout(`delegation token ${token?.token_id} valid: ${token?.delegator_identity} -> ${token?.delegate_identity}\n`);
      else ctx.stderr(`delegation token invalid: ${result.code}: ${result.message}\n`);
      ctx.exitCode = result.ok ? EXIT.OK : EXIT.VERIFY_FAILED;
    });
}

function stringField(value: unknown, key: string): string {
  const field = (value as Record<string, unknown> | null)?.[key];
  return typeof field === 'string' ? field.trim() : '';
}
