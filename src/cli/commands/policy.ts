import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { checkProfile, formatPolicyYaml, parsePolicyYaml, type LoadedPolicy, type PolicyProfile } from '../../policy/index.js';
import { parsePolicySource } from '../../policy/load.js';
import type { CliContext } from '../context.js';
import { correlationId, goJsonLine } from '../output.js';
import { signingKeyFromKeyFlags } from '../../keys/index.js';
import { awaitPublicationUptake, listPublications, publishPolicy, readVersions, type PublicationUptake } from '../../cluster/control.js';
import { signPublication } from '../../cluster/control-policy.js';
import { openControlStore, operatorName, withStoreFlags, type StoreFlags } from './cluster.js';
import { rewriteFileAtomic } from '../../state/atomic-file.js';

interface ValidateOptions {
  json?: boolean;
  profile: string;
}

interface PublishOptions extends StoreFlags {
  policy: string;
  privateKey?: string;
  privateKeyEnv?: string;
  profile: string;
  waitMs: string;
}

interface FmtOptions {
  json?: boolean;
  write?: boolean;
}

/**
 * `ward policy validate <file>` and `ward policy fmt <file> [--write]`. Invalid policies exit 6
 * with the loader's message (positions, reference wording); `policy test` lives in its own module
 * and shares the `policy` group.
 */
export function register(program: Command, ctx: CliContext): void {
  const group = policyGroup(program);

  group
    .command('validate')
    .description('load a policy strictly, apply every default and validation, and print its policy_digest')
    .argument('<file>', 'policy YAML file ("-" for stdin)')
    .option('--profile <profile>', 'also check a profile\'s policy requirements: standard or oss-prod', 'standard')
    .option('--json', 'print one JSON object')
    .action(async (file: string, options: ValidateOptions) => {
      const profile = parseProfile(options.profile);
      const loaded = parsePolicySource(await readPolicy(ctx, file), file);
      checkProfile(loaded.policy, profile);
      const summary = {
        policy_digest: loaded.digest,
        rule_count: loaded.policy.rules.length,
        default_verdict: loaded.policy.default_verdict,
        schema_id: loaded.policy.schema_id,
        schema_version: loaded.policy.schema_version,
      };
      if (options.json) {
        ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), ...summary }) + '\n');
      } else {
        ctx.stdout(`policy ok: ${file}\n${Object.entries(summary).map(([k, v]) => `${k}=${v}`).join('\n')}\n`);
      }
      ctx.exitCode = EXIT.OK;
    });

  group
    .command('fmt')
    .description('print the normalized policy as YAML (stable key order, rules sorted; comments are not kept)')
    .argument('<file>', 'policy YAML file ("-" for stdin, without --write)')
    .option('--write', 'rewrite the file in place when formatting changes it')
    .option('--json', 'print one JSON object')
    .action(async (file: string, options: FmtOptions) => {
      if (options.write && file === '-') throw new WardError(ERROR_CODES.USAGE, 'policy fmt --write needs a file, not stdin');
      const original = await readPolicy(ctx, file);
      const loaded = parsePolicySource(original, file);
      const formatted = formatPolicyYaml(loaded.policy);
      assertSameDigest(loaded, formatted);
      const changed = formatted !== original;
      const written = Boolean(options.write) && changed;
      if (written) rewriteFileAtomic(resolve(ctx.cwd, file), formatted);
      if (options.json) {
        ctx.stdout(
          goJsonLine({
            ok: true,
            correlation_id: correlationId(ctx.argv),
            path: file,
            policy_digest: loaded.digest,
            changed,
            written,
            ...(options.write ? {} : { formatted }),
          }) + '\n',
        );
      } else if (options.write) {
        ctx.stdout(written ? `formatted ${file}\n` : `${file} is already formatted\n`);
      } else {
        ctx.stdout(formatted);
      }
      ctx.exitCode = EXIT.OK;
    });

  registerPublish(group, ctx);
}

/**
 * `ward policy publish` and `ward policy published`: the cluster's policy distribution
 * (docs/kill-switch.md "In a cluster"). A publication is the policy text, its policy_digest and an
 * Ed25519 signature over that digest; every replica verifies all three against the keys it trusts
 * for publications before it activates one, and keeps its current policy otherwise.
 */
function registerPublish(group: Command, ctx: CliContext): void {
  withStoreFlags(
    group
      .command('publish')
      .description('validate a policy, sign its digest and publish it to every ward serve replica of a PostgreSQL store')
      .requiredOption('--policy <file>', 'policy YAML file ("-" for stdin)')
      .option('--private-key <file>', 'Ed25519 private key that signs the publication (a key the replicas trust)')
      .option('--private-key-env <var>', 'or: environment variable holding that key')
      .option('--profile <profile>', 'also check a profile\'s policy requirements: standard or oss-prod', 'standard')
      .option('--wait-ms <ms>', 'wait this long for the replicas to activate it; exit 1 (ERR_POLICY_NOT_ACCEPTED) if none did (0: do not wait)', '10000'),
  ).action(async (options: PublishOptions) => {
    if (!/^\d{1,7}$/.test(options.waitMs)) throw new WardError(ERROR_CODES.USAGE, '--wait-ms must be a whole number of milliseconds');
    const waitMs = Number(options.waitMs);
    const profile = parseProfile(options.profile);
    const text = await readPolicy(ctx, options.policy);
    // Validate before anything else: an invalid policy is never stored, let alone published.
    const key = signingKeyFromKeyFlags({ keyMode: 'prod', privateKey: options.privateKey, privateKeyEnv: options.privateKeyEnv }, { cwd: ctx.cwd, env: ctx.env, stateDir: ctx.cwd }).key;
    const signed = signPublication(text, key, profile);
    const db = await openControlStore(ctx, options);
    let pub;
    let uptake: PublicationUptake | undefined;
    try {
      pub = await publishPolicy(db, { digest: signed.loaded.digest, policy_yaml: text, signature: signed.signature, key_id: signed.key_id, published_by: operatorName() });
      // Stored is not enforced: each replica verifies the signature against the keys it trusts
      // (and the policy against its profile) before it activates it.
      if (waitMs > 0) uptake = await awaitPublicationUptake(db, pub.seq, (await readVersions(db)).policy, waitMs);
    } finally {
      await db.close();
    }
    const summary = { seq: pub.seq, policy_digest: pub.digest, key_id: pub.key_id, published_at: pub.published_at, published_by: pub.published_by, rule_count: signed.loaded.policy.rules.length };
    if (uptake && uptake.accepted.length === 0) throw notAccepted(pub.seq, pub.digest, waitMs, uptake);
    const accepted = uptake ? { accepted_by: uptake.accepted, rejected_by: uptake.rejected.map((r) => r.replica_id), pending: uptake.pending } : {};
    if (options.json) ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), ...summary, ...accepted }) + '\n');
    else {
      const lines = Object.entries(summary).map(([k, v]) => `${k}=${v}`);
      if (uptake) lines.push(`accepted by ${uptake.accepted.length} replica(s): ${uptake.accepted.join(', ')}`, ...(uptake.rejected.length ? [`REFUSED by ${uptake.rejected.map((r) => r.replica_id).join(', ')} (they kept their policy)`] : []), ...(uptake.pending.length ? [`not yet synced: ${uptake.pending.join(', ')}`] : []));
      else lines.push('not waited for (--wait-ms 0): see ward cluster status');
      ctx.stdout(`published ${options.policy} as publication ${pub.seq}\n${lines.join('\n')}\n`);
    }
    ctx.exitCode = EXIT.OK;
  });

  withStoreFlags(
    group
      .command('published')
      .description('policies published to a PostgreSQL store, newest first, and which one is active')
      .option('--limit <n>', 'at most this many (default 20)', '20'),
  ).action(async (options: StoreFlags & { limit: string }) => {
    if (!/^\d{1,4}$/.test(options.limit) || Number(options.limit) < 1) throw new WardError(ERROR_CODES.USAGE, '--limit must be an integer from 1 to 9999');
    const db = await openControlStore(ctx, options);
    let list;
    try {
      list = await listPublications(db, Number(options.limit));
    } finally {
      await db.close();
    }
    if (options.json) {
      ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), publications: list }) + '\n');
    } else if (list.length === 0) {
      ctx.stdout('no policy published (replicas enforce their --policy file)\n');
    } else {
      ctx.stdout(list.map((p) => `${p.active ? 'active ' : '       '} ${p.seq}  ${p.digest}  key ${p.key_id.slice(0, 16)}  by ${p.published_by} at ${p.published_at}`).join('\n') + '\n');
    }
    ctx.exitCode = EXIT.OK;
  });
}

/** No replica took the publication: why, as far as the replicas' reports tell. */
function notAccepted(seq: number, digest: string, waitMs: number, uptake: PublicationUptake): WardError {
  const none = uptake.rejected.length === 0 && uptake.pending.length === 0;
  const message = none
    ? `publication ${seq} (${digest}) is stored, but no ward serve replica reported within ${waitMs} ms: nothing enforces it yet`
    : uptake.rejected.length > 0
      ? `publication ${seq} (${digest}) was refused by every replica that synced it (${uptake.rejected.map((r) => r.replica_id).join(', ')}): they keep enforcing their current policy`
      : `publication ${seq} (${digest}) was not activated by any replica within ${waitMs} ms (not yet synced: ${uptake.pending.join(', ')})`;
  return new WardError(ERROR_CODES.POLICY_NOT_ACCEPTED, message, {
    details: { seq, policy_digest: digest, accepted_by: [], rejected_by: uptake.rejected as unknown as Record<string, unknown>[], pending: uptake.pending },
    hint: uptake.rejected.length > 0
      ? 'replicas activate only publications signed by a key they trust (--policy-public-key, WARD_POLICY_PUBLIC_KEY, else their own signing key) and valid for their --profile; their log says "published policy rejected" with the reason'
      : 'start the replicas (ward serve --store …) or wait longer (--wait-ms); ward cluster status shows what each replica enforces',
  });
}

/** `policy test` registers into the same group, whichever module runs first. */
function policyGroup(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'policy') ??
    program.command('policy').description('validate, format and test gate policies (gait.gate.policy)')
  );
}

function parseProfile(value: string): PolicyProfile {
  if (value === 'standard' || value === 'oss-prod') return value;
  throw new WardError(ERROR_CODES.USAGE, `unsupported --profile ${value}: use standard or oss-prod`);
}

async function readPolicy(ctx: CliContext, file: string): Promise<string> {
  if (file === '-') return ctx.readStdin();
  try {
    return readFileSync(resolve(ctx.cwd, file), 'utf8');
  } catch (err) {
    // Unreadable input is invalid input (exit 6), as in the reference.
    throw new WardError(ERROR_CODES.IO, `read policy file ${file}: ${(err as Error).message}`, { exitCode: EXIT.INVALID_INPUT });
  }
}

/**
 * Formatting must never change what the policy means. If it ever did, that is a Ward bug, and
 * the file is left alone.
 */
function assertSameDigest(loaded: LoadedPolicy, formatted: string): void {
  const reloaded = parsePolicyYaml(formatted);
  if (reloaded.digest !== loaded.digest) {
    throw new WardError(
      ERROR_CODES.INTERNAL,
      `policy fmt would change the policy_digest (${loaded.digest} -> ${reloaded.digest}); file left unchanged`,
    );
  }
}

