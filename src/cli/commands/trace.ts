import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { loadKeyRing, type VerifyKey } from '../../keys/index.js';
import { writeFileAtomic } from '../../state/atomic-file.js';
import { exportDsse, exportJws, verifyTracePath, verifyTraceRecord, verifyTraceText, type JwsAlg, type TraceFileVerification, type TraceVerification } from '../../trace/index.js';
import { isJsonObject, parseStrictJson } from '../../canon/index.js';
import { stateDir, type CliContext } from '../context.js';
import type { StoreLocationFlags } from '../store-access.js';
import { daemonUrl, traceVerifyOverDaemon } from '../daemon-client.js';
import { readInputText } from '../input.js';
import { correlationId, errorEnvelope, goJsonLine } from '../output.js';
import { addSigningKeyOptions, addVerifyKeyOptions, signingKeyFromFlags, verifyKeysFromFlags, type SigningKeyFlags, type VerifyKeyFlags } from './keys.js';

interface VerifyFlags extends VerifyKeyFlags, StoreLocationFlags {
  json?: boolean;
}

interface ExportFlags extends SigningKeyFlags {
  format: 'jws' | 'dsse';
  jwsAlg: JwsAlg;
  out?: string;
  publicKey?: string;
  publicKeyEnv?: string;
  jwks?: string;
  json?: boolean;
}

/** `ward trace verify` and `ward trace export`. */
export function register(program: Command, ctx: CliContext): void {
  const trace = program.command('trace').description('verify and export signed decision records (gait.gate.trace)');

  addVerifyKeyOptions(
    trace
      .command('verify')
      .description('verify a trace file, every trace in a directory, - (stdin), or the store (store, store:<id>); also JWS and DSSE exports. Exit 0 verified, 2 failed, 6 usage')
      .argument('<path>', 'trace file, directory, -, "store" (every stored trace) or store:<id> (one, by id, prefix or trace id)'),
  )
    .option('--json', 'one line of JSON on stdout')
    .option('--store <url>', 'with store / store:<id>: a PostgreSQL store (postgres://user@host:5432/db; also WARD_STORE_URL; no password here)')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .option('--daemon <url>', "verify with a running ward serve's key set (default $WARD_DAEMON_URL)")
    .action(async (path: string, flags: VerifyFlags & { daemon?: string }) => {
      // `store` and `store:<id>` name the store, unless a file of that name is there.
      if ((path === 'store' || path.startsWith('store:')) && !existsSync(resolve(ctx.cwd, path))) {
        await verifyStoredTraces(ctx, flags, path === 'store' ? undefined : path.slice('store:'.length));
        return;
      }
      const daemon = daemonUrl(ctx, flags.daemon);
      if (daemon && !flags.publicKey && !flags.publicKeyEnv && !flags.jwks && !flags.privateKey && !flags.privateKeyEnv) {
        const { single, results, dir } = await traceVerifyOverDaemon(ctx, daemon, path);
        if (single) {
          printSingle(ctx, flags, results[0] as unknown as TraceFileVerification);
          return;
        }
        const failed = results.filter((r) => r['ok'] !== true).length;
        const summary = { total: results.length, verified: results.length - failed, failed };
        const ok = summary.total > 0 && failed === 0;
        const error = summary.total === 0 ? `no trace files found in ${dir}` : undefined;
        if (flags.json) ctx.stdout(goJsonLine({ ok, correlation_id: correlationId(ctx.argv), path: dir, results, summary, error }) + '\n');
        else {
          for (const r of results) ctx.stdout(resultLine(r as unknown as TraceFileVerification) + '\n');
          ctx.stdout((error ?? `${summary.verified}/${summary.total} verified, ${summary.failed} failed`) + '\n');
        }
        ctx.exitCode = ok ? EXIT.OK : EXIT.VERIFY_FAILED;
        return;
      }
      const keys = verifyKeysFromFlags(ctx, flags);
      if (path === '-') {
        const result = { path: '-', ...verifyTraceText(await readInputText(ctx, '-', 'trace'), keys) };
        printSingle(ctx, flags, result);
        hintForeignKeys(ctx, flags, [result], keys);
        return;
      }
      const full = resolve(ctx.cwd, path);
      const { results, summary } = verifyTracePath(full, keys);
      if (results.length === 1 && results[0]!.path === full) {
        printSingle(ctx, flags, { ...results[0]!, path });
        hintForeignKeys(ctx, flags, results, keys);
        return;
      }
      const ok = summary.total > 0 && summary.failed === 0;
      const error = summary.total === 0 ? `no trace files found in ${full}` : undefined;
      if (flags.json) {
        ctx.stdout(goJsonLine({ ok, correlation_id: correlationId(ctx.argv), path: full, results: results.map(resultJson), summary, error }) + '\n');
      } else {
        for (const result of results) ctx.stdout(resultLine(result) + '\n');
        ctx.stdout((error ?? `${summary.verified}/${summary.total} verified, ${summary.failed} failed`) + '\n');
        hintForeignKeys(ctx, flags, results, keys);
      }
      ctx.exitCode = ok ? EXIT.OK : EXIT.VERIFY_FAILED;
    });

  addSigningKeyOptions(
    trace
      .command('export')
      .description('wrap a verified trace as a compact JWS (EdDSA) or a DSSE envelope for JOSE / in-toto tooling')
      .argument('<file>', 'trace file'),
  )
    .addOption(new Option('--format <format>', 'wrapper format').choices(['jws', 'dsse']).makeOptionMandatory())
    .addOption(new Option('--jws-alg <alg>', 'JWS alg header: EdDSA (RFC 8037, most tooling) or Ed25519 (RFC 9864, fully specified)').choices(['EdDSA', 'Ed25519']).default('EdDSA'))
    .option('--out <file>', 'write the export here instead of stdout (mode 0600, like traces)')
    .option('--public-key <file>', 'verify the trace with this key before wrapping (default: the key ring and the signing key)')
    .option('--public-key-env <var>', 'verify the trace with the key in this environment variable')
    .option('--jwks <file>', 'verify the trace with the keys of a JWKS')
    .option('--json', 'print a JSON summary instead of the export when --out is given')
    .action(async (file: string, flags: ExportFlags) => {
      const text = await readInputText(ctx, file, 'trace');
      let record;
      try {
        record = parseStrictJson(text);
      } catch (err) {
        throw new WardError(ERROR_CODES.SIGNATURE_INVALID, `parse trace: ${(err as Error).message}`);
      }
      const signing = signingKeyFromFlags(ctx, flags);
      // Only a trace that verifies is wrapped: an export must never launder a tampered record.
      const explicit = flags.publicKey || flags.publicKeyEnv || flags.jwks;
      const keys = explicit
        ? verifyKeysFromFlags(ctx, { publicKey: flags.publicKey, publicKeyEnv: flags.publicKeyEnv, jwks: flags.jwks })
        : [...loadKeyRing(stateDir(ctx, flags.stateDir)), signing.key];
      const check = verifyTraceRecord(record, keys);
      if (!check.ok || !isJsonObject(record)) {
        throw new WardError(ERROR_CODES.SIGNATURE_INVALID, `trace does not verify, not exporting: ${check.error ?? 'not an object'}`);
      }
      const output = flags.format === 'jws' ? exportJws(record, signing.key, flags.jwsAlg) + '\n' : JSON.stringify(exportDsse(record, signing.key), null, 2) + '\n';
      for (const warning of signing.warnings) ctx.stderr(`warning: ${warning}\n`);
      if (flags.out) {
        const target = resolve(ctx.cwd, flags.out);
        writeFileAtomic(target, output, 0o600);
        if (flags.json) {
          ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), format: flags.format, path: target, trace_id: check.trace_id, key_id: signing.key.keyId, warnings: signing.warnings }) + '\n');
        } else {
          ctx.stdout(`${flags.format} export of trace ${check.trace_id} written to ${target}\n`);
        }
      } else {
        ctx.stdout(output);
      }
      ctx.exitCode = EXIT.OK;
    });
}

/**
 * `ward trace verify store` / `store:<id>`: the traces of the evidence store (the local one, or
 * PostgreSQL with --store), after ingesting the local spool, oldest first; printed as a directory
 * verify (or a single one for `store:<id>`), each path `store:trace/<id>`.
 */
async function verifyStoredTraces(ctx: CliContext, flags: VerifyFlags, ref: string | undefined): Promise<void> {
  // Loaded here: verifying trace files does not load the store.
  const [{ openStoreAt, storeLocationOf }, { resolveOneEntry }] = await Promise.all([import('../store-access.js'), import('../../store/locate.js')]);
  const keys = verifyKeysFromFlags(ctx, flags);
  const store = await openStoreAt(storeLocationOf(ctx, flags), stateDir(ctx, flags.stateDir));
  const results: TraceFileVerification[] = [];
  try {
    await store.ingest();
    const entries = ref === undefined ? await store.list({ kind: 'trace', order: 'asc' }) : [await resolveOneEntry(store, ref, 'trace')];
    for (const entry of entries) results.push({ path: `store:trace/${entry.id}`, ...verifyTraceText((await store.read(entry)).toString('utf8'), keys) });
  } finally {
    await store.close();
  }
  if (ref !== undefined) {
    printSingle(ctx, flags, results[0]!);
    hintForeignKeys(ctx, flags, results, keys);
    return;
  }
  const failed = results.filter((r) => !r.ok).length;
  const summary = { total: results.length, verified: results.length - failed, failed };
  const ok = summary.total > 0 && failed === 0;
  const error = summary.total === 0 ? 'no traces in the store' : undefined;
  if (flags.json) {
    ctx.stdout(goJsonLine({ ok, correlation_id: correlationId(ctx.argv), path: 'store', results: results.map(resultJson), summary, error }) + '\n');
  } else {
    for (const result of results) ctx.stdout(resultLine(result) + '\n');
    ctx.stdout((error ?? `${summary.verified}/${summary.total} verified, ${summary.failed} failed`) + '\n');
    hintForeignKeys(ctx, flags, results, keys);
  }
  ctx.exitCode = ok ? EXIT.OK : EXIT.VERIFY_FAILED;
}

/**
 * Traces signed by a key the verifier does not have fail with `key id mismatch`; say whose key
 * signed them and how to pass it (a new local key can never verify someone else's traces).
 */
function hintForeignKeys(ctx: CliContext, flags: VerifyFlags, results: readonly TraceVerification[], keys: readonly VerifyKey[]): void {
  if (flags.json) return;
  const foreign = [...new Set(results.filter((r) => !r.ok && /key id mismatch/.test(r.error ?? '')).map((r) => r.key_id))];
  if (foreign.length === 0) return;
  ctx.stderr(
    `hint: signed by key ${foreign.join(', ')}; this verify used ${keys.map((k) => k.keyId).join(', ')}. ` +
      'Verify with the signer\'s public key: --public-key <file>, --jwks <file>, or --state-dir <the signer\'s state directory>\n',
  );
}

function printSingle(ctx: CliContext, flags: VerifyFlags, result: TraceFileVerification): void {
  // A failure carries the error envelope (error_code, error_category, hint, retryable), as every reference output with an error does.
  const envelope = result.ok ? {} : errorEnvelope(EXIT.VERIFY_FAILED);
  if (flags.json) ctx.stdout(goJsonLine({ correlation_id: correlationId(ctx.argv), ...resultJson(result), ...envelope }) + '\n');
  else if (result.ok) ctx.stdout(resultLine(result) + '\n');
  else ctx.stderr(resultLine(result) + '\n');
  ctx.exitCode = result.ok ? EXIT.OK : EXIT.VERIFY_FAILED;
}

/** The reference output shape: `{ok, path, trace_id, verdict, signature_status, key_id, error?}`, plus `format`. */
function resultJson(result: TraceFileVerification): Record<string, unknown> {
  return {
    ok: result.ok,
    path: result.path,
    format: result.format,
    trace_id: result.trace_id,
    verdict: result.verdict,
    signature_status: result.signature_status,
    key_id: result.key_id,
    error: result.error,
  };
}

function resultLine(result: TraceFileVerification): string {
  const what = result.format === 'trace' ? 'trace' : `${result.format} trace`;
  return result.ok
    ? `verified  ${result.path}: ${what} ${result.trace_id} (${result.verdict}), key ${result.key_id}`
    : `FAILED    ${result.path}: ${result.error}`;
}
