import { writeFileAtomic } from '../../state/atomic-file.js';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, isWardError, WardError } from '../../errors.js';
import type { VerifyKey } from '../../keys/index.js';
import {
  buildAuthorizationPack,
  buildRunPack,
  diffPacks,
  inspectPack,
  packVerified,
  PACK_OUTPUT_SCHEMA,
  upgradePack,
  verifyPack,
  type BuiltPack,
} from '../../pack/index.js';
import { locateArtifact, spoolBytes, type EntryKind, type EvidenceStore, type StoreInput } from '../../store/index.js';
import { storeOpener, type StoreLocationFlags } from '../store-access.js';
import { WARD_VERSION } from '../../version.js';
import { openZip } from '../../zip/index.js';
import { STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';
import { daemonUrl, isLocalArtifact, packDiffOverDaemon, packInspectOverDaemon } from '../daemon-client.js';
import { correlationId, goJsonLine } from '../output.js';
import { addSigningKeyOptions, addVerifyKeyOptions, signingKeyFromFlags, verifyKeysFromFlags, type SigningKeyFlags, type VerifyKeyFlags } from './keys.js';
import { displayPath } from './run.js';
import { PROGRESS_HELP, progressOf } from '../progress.js';

interface BuildFlags extends SigningKeyFlags, StoreLocationFlags {
  type: 'run' | 'authorization';
  from: string;
  evidence?: string[];
  out?: string;
  json?: boolean;
  progress?: boolean;
}

export interface VerifyFlags extends VerifyKeyFlags {
  profile: 'standard' | 'strict';
  requireSignature?: boolean;
  json?: boolean;
  progress?: boolean;
}

interface ReadFlags extends StoreLocationFlags {
  stateDir?: string;
  json?: boolean;
}

const PACK_KINDS: readonly EntryKind[] = ['pack', 'runpack'];

/** `ward pack build|verify|inspect|diff` (packs-regress.md §1–§3). */
export function register(program: Command, ctx: CliContext): void {
  const pack = program.command('pack').description('PackSpec v1 evidence packs: build, verify, inspect, diff');

  addSigningKeyOptions(
    pack
      .command('build')
      .description('build a pack from a runpack (--type run) or from a decision trace and its audit files (--type authorization)'),
  )
    .addOption(new Option('--type <type>', 'pack type').choices(['run', 'authorization']).default('run'))
    .requiredOption('--from <ref>', 'run: runpack path, run id or store id; authorization: the trace file')
    .option('--evidence <files...>', 'authorization: audit files (default: *_<trace_id>.json next to the trace)')
    .option('--out <file>', 'output path (default pack_<pack_id>.zip next to the runpack, or in the state directory)')
    .option('--json', 'one line of JSON on stdout')
    .option('--progress', PROGRESS_HELP)
    .option('--store <url>', 'read the runpack from, and store the pack in, a PostgreSQL store (also WARD_STORE_URL; no password here)')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .action(async (flags: BuildFlags) => {
      const progress = progressOf(ctx, flags, 'pack build');
      progress.stage(`reading ${flags.from}`);
      let built: BuiltPack;
      let out: string;
      let key: ReturnType<typeof signingKeyFromFlags>;
      try {
        const state = stateDir(ctx, flags.stateDir);
        const openStore = storeOpener(ctx, flags, state);
        key = signingKeyFromFlags(ctx, flags);
        let defaultDir: string;
        if (flags.type === 'run') {
          const source = await locateArtifact(flags.from, { cwd: ctx.cwd, stateDir: state, kinds: ['runpack'], fileName: (id) => `runpack_${id}.zip`, ...(openStore ? { openStore } : {}) });
          progress.stage(`building from ${source.bytes.length.toLocaleString('en-US')} bytes`);
          built = buildRunPack(source.bytes, { producerVersion: WARD_VERSION, signingKey: key.key });
          defaultDir = source.path.startsWith('store:') ? state : dirname(source.path);
        } else {
          const tracePath = resolve(ctx.cwd, flags.from);
          const trace = { name: basename(tracePath), bytes: readInput(tracePath) };
          const evidence = (flags.evidence ?? defaultEvidence(tracePath)).map((p) => {
            const path = resolve(ctx.cwd, p);
            return { name: basename(path), bytes: readInput(path) };
          });
          progress.stage(`building from ${1 + evidence.length} files`);
          built = buildAuthorizationPack(trace, evidence, { producerVersion: WARD_VERSION, signingKey: key.key });
          defaultDir = state;
        }
        out = flags.out ? resolve(ctx.cwd, flags.out) : join(defaultDir, `pack_${built.manifest.pack_id}.zip`);
        progress.stage(`writing ${built.bytes.length.toLocaleString('en-US')} bytes`);
        writeFileAtomic(out, built.bytes);
        // The local store takes it from the spool when it is next opened; a PostgreSQL store at once.
        if (openStore) await putAndClose(await openStore(), { kind: 'pack', bytes: built.bytes });
        else spoolBytes(state, 'pack', built.bytes);
      } finally {
        progress.end();
      }
      const { manifest } = built;
      const output = {
        ok: true,
        operation: 'build',
        path: displayPath(ctx.cwd, out),
        pack_id: manifest.pack_id,
        pack_type: manifest.pack_type,
        source_ref: manifest.source_ref,
        signature_key_id: key.key.keyId,
        warnings: key.warnings.length > 0 ? key.warnings : undefined,
        ...PACK_SCHEMA,
      };
      print(ctx, flags.json, output, `pack build ok: ${output.path} (${manifest.pack_id})`);
    });

  addVerifyKeyOptions(pack.command('verify').description('verify a pack (or a bare runpack): exit 0 ok, 2 failed, 6 usage').argument('<pack>', 'pack path or store id'))
    .addOption(new Option('--profile <profile>', 'strict requires a verified signature and a key source').choices(['standard', 'strict']).default('standard'))
    .option('--require-signature', 'a verified manifest signature (and signed proof records) is required')
    .option('--json', 'one line of JSON on stdout')
    .option('--progress', PROGRESS_HELP)
    .option('--store <url>', STORE_HELP)
    .option('--store-password-file <file>', STORE_PASSWORD_HELP)
    .action(async (ref: string, flags: VerifyFlags & StoreLocationFlags) => {
      const require = requireSignature(flags);
      const progress = progressOf(ctx, flags, 'pack verify');
      let source: Awaited<ReturnType<typeof locateArtifact>>;
      let path: string;
      let result;
      try {
        progress.stage(`reading ${ref}`);
        source = await locateArtifact(ref, storeLookup(ctx, flags, PACK_KINDS));
        const keys = verifyKeys(ctx, flags, signatureKeyIds(source.bytes));
        path = shownPath(ctx, ref, source.path);
        progress.stage(`verifying ${source.bytes.length.toLocaleString('en-US')} bytes`);
        try {
          result = verifyPack(source.bytes, { keys, requireSignature: require });
        } catch (err) {
          throw failedVerification(err, path, source.bytes);
        }
      } finally {
        progress.end();
      }
      const ok = packVerified(result, require);
      // Ward addition: a pack whose proof chain an older Ward built verifies, and says how to get a copy the reference reads.
      const legacy = result.legacy_proof_records ? { warnings: [LEGACY_PROOF_WARNING], next_commands: [`ward pack upgrade ${ref}`] } : {};
      const output = { ok, operation: 'verify', path, pack_id: result.pack_id, pack_type: result.pack_type, source_ref: result.source_ref, verify: result, ...legacy, ...PACK_SCHEMA };
      const text = [
        ok ? `pack verify ok: ${result.pack_id} (${result.pack_type}, signature ${result.signature_status})` : `pack verify failed: ${result.pack_id}\n${problems(result).join('\n')}`,
        ...(legacy.warnings ?? []).map((w) => `warning: ${w}; run: ${legacy.next_commands![0]}`),
      ].join('\n');
      print(ctx, flags.json, output, text);
      ctx.exitCode = ok ? EXIT.OK : EXIT.VERIFY_FAILED;
    });

  addSigningKeyOptions(
    pack
      .command('upgrade')
      .description('write a reference-compatible copy of a pack (e.g. one whose proof chain an older Ward built): exit 0 written, 2 not verified, 6 usage')
      .argument('<pack>', 'pack path or store id'),
  )
    .option('--public-key <file>', 'verify the original signature with this key (default: Ward\'s key ring)')
    .option('--public-key-env <var>', 'environment variable holding that verify key')
    .option('--jwks <file>', 'verify the original signature with the Ed25519 keys of a JWKS')
    .option('--out <file>', 'output path (default pack_<new pack_id>.zip next to the original, or in the state directory)')
    .option('--json', 'one line of JSON on stdout')
    .option('--store <url>', STORE_HELP)
    .option('--store-password-file <file>', STORE_PASSWORD_HELP)
    .action(async (ref: string, flags: SigningKeyFlags & VerifyKeyFlags & StoreLocationFlags & { out?: string; json?: boolean }) => {
      const state = stateDir(ctx, flags.stateDir);
      const openStore = storeOpener(ctx, flags, state);
      const source = await locateArtifact(ref, { cwd: ctx.cwd, stateDir: state, kinds: ['pack'], ...(openStore ? { openStore } : {}) });
      const keys = verifyKeys(ctx, flags, signatureKeyIds(source.bytes));
      const key = signingKeyFromFlags(ctx, flags);
      const upgraded = upgradePack(source.bytes, { keys, signingKey: key.key });
      const defaultDir = source.path.startsWith('store:') ? state : dirname(source.path);
      const out = flags.out ? resolve(ctx.cwd, flags.out) : join(defaultDir, `pack_${upgraded.manifest.pack_id}.zip`);
      writeFileAtomic(out, upgraded.bytes);
      if (openStore) await putAndClose(await openStore(), { kind: 'pack', bytes: upgraded.bytes });
      else spoolBytes(state, 'pack', upgraded.bytes);
      const { manifest, original } = upgraded;
      const output = {
        ok: true,
        operation: 'upgrade',
        path: displayPath(ctx.cwd, out),
        pack_id: manifest.pack_id,
        pack_type: manifest.pack_type,
        source_ref: manifest.source_ref,
        upgrade: {
          from_pack_id: original.pack_id,
          from_legacy_proof_records: original.legacy_proof_records === true,
          signature_status: manifest.signatures ? 'signed' : 'missing',
        },
        warnings: key.warnings.length > 0 ? key.warnings : undefined,
        ...PACK_SCHEMA,
      };
      print(ctx, flags.json, output, `pack upgrade ok: ${output.path} (${manifest.pack_id}, from ${String(original.pack_id)})`);
    });

  pack
    .command('inspect')
    .description('show what a pack declares, with its context summary (no verification)')
    .argument('<pack>', 'pack path or store id')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'one line of JSON on stdout')
    .option('--daemon <url>', 'read store ids from a running ward serve (default $WARD_DAEMON_URL)')
    .option('--store <url>', STORE_HELP)
    .option('--store-password-file <file>', STORE_PASSWORD_HELP)
    .action(async (ref: string, flags: ReadFlags & { daemon?: string }) => {
      const daemon = daemonUrl(ctx, flags.daemon);
      if (daemon && !isLocalArtifact(ctx, ref)) {
        const reply = await packInspectOverDaemon(ctx, daemon, ref);
        const inspect = reply.json['inspect'] as { pack_id?: string; pack_type?: string };
        print(ctx, flags.json, reply.json, `pack inspect ok: ${String(inspect.pack_id)} (${String(inspect.pack_type)})`);
        return;
      }
      const source = await locateArtifact(ref, storeLookup(ctx, flags, PACK_KINDS));
      const result = inspectPack(source.bytes);
      const output = { ok: true, operation: 'inspect', path: shownPath(ctx, ref, source.path), pack_id: result.pack_id, pack_type: result.pack_type, source_ref: result.source_ref, inspect: result, ...PACK_SCHEMA };
      const summary = result.run_payload
        ? `\ncontext: digest=${result.run_payload.context_set_digest ?? '-'} refs=${result.run_payload.context_ref_count ?? 0} mode=${result.run_payload.context_evidence_mode ?? '-'} privacy=${result.run_payload.context_privacy_mode ?? '-'}`
        : '';
      print(ctx, flags.json, output, `pack inspect ok: ${result.pack_id} (${result.pack_type})${summary}`);
    });

  pack
    .command('diff')
    .description('compare two packs and classify context drift: exit 0 unchanged, 2 changed')
    .argument('<left>', 'pack path or store id')
    .argument('<right>', 'pack path or store id')
    .option('--output <file>', 'also write the diff JSON here')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'one line of JSON on stdout')
    .option('--daemon <url>', 'read store ids from a running ward serve (default $WARD_DAEMON_URL)')
    .option('--store <url>', STORE_HELP)
    .option('--store-password-file <file>', STORE_PASSWORD_HELP)
    .action(async (leftRef: string, rightRef: string, flags: ReadFlags & { output?: string; daemon?: string }) => {
      const daemon = daemonUrl(ctx, flags.daemon);
      if (daemon && !isLocalArtifact(ctx, leftRef) && !isLocalArtifact(ctx, rightRef)) {
        const reply = await packDiffOverDaemon(ctx, daemon, leftRef, rightRef, flags.output);
        const summary = ((reply.json['diff'] as { result: { summary: { changed: boolean; context_drift_classification: string } } }).result).summary;
        print(ctx, flags.json, { ...reply.json, path: flags.output }, `pack diff: ${summary.changed ? 'changed' : 'unchanged'} (context drift: ${summary.context_drift_classification})`);
        ctx.exitCode = reply.exitCode;
        return;
      }
      const left = await locateArtifact(leftRef, storeLookup(ctx, flags, PACK_KINDS));
      const right = await locateArtifact(rightRef, storeLookup(ctx, flags, PACK_KINDS));
      const diff = diffPacks(left.bytes, right.bytes);
      if (flags.output) writeFileAtomic(resolve(ctx.cwd, flags.output), JSON.stringify(diff), 0o600);
      const { summary } = diff;
      const output = { ok: !summary.changed, operation: 'diff', path: flags.output, diff: { result: diff }, ...PACK_SCHEMA };
      const files = [...(summary.added_files ?? []).map((f) => `+ ${f}`), ...(summary.removed_files ?? []).map((f) => `- ${f}`), ...(summary.changed_files ?? []).map((f) => `~ ${f}`)];
      print(ctx, flags.json, output, [`pack diff: ${summary.changed ? 'changed' : 'unchanged'} (context drift: ${summary.context_drift_classification})`, ...files].join('\n'));
      ctx.exitCode = summary.changed ? EXIT.VERIFY_FAILED : EXIT.OK;
    });
}

const STORE_HELP = 'look store ids up in a PostgreSQL store (postgres://user@host:5432/db; also WARD_STORE_URL; no password here)';
const STORE_PASSWORD_HELP = 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)';

/** `locateArtifact` options: the state directory, and the PostgreSQL store when one is named. */
function storeLookup(ctx: CliContext, flags: StoreLocationFlags & { stateDir?: string }, kinds: readonly EntryKind[]) {
  const state = stateDir(ctx, flags.stateDir);
  const openStore = storeOpener(ctx, flags, state);
  return { cwd: ctx.cwd, stateDir: state, kinds, ...(openStore ? { openStore } : {}) };
}

async function putAndClose(store: EvidenceStore, input: StoreInput): Promise<void> {
  try {
    await store.put([input]);
  } finally {
    await store.close();
  }
}

/**
 * `path` in verify and inspect output: the argument as given when it named the file (as the
 * reference prints it), else where Ward found the artifact (a run id's runpack, `store:<id>`).
 */
export function shownPath(ctx: CliContext, ref: string, found: string): string {
  const given = ref.trim();
  return !found.startsWith('store:') && resolve(ctx.cwd, given) === found ? given : displayPath(ctx.cwd, found);
}

const LEGACY_PROOF_WARNING =
  'proof_records.jsonl is in the legacy form older Ward builds wrote (first record hashed with integrity {}); it verifies in Ward but not in the reference';

const PACK_SCHEMA = { schema_id: PACK_OUTPUT_SCHEMA.id, schema_version: PACK_OUTPUT_SCHEMA.version };

export function print(ctx: CliContext, json: boolean | undefined, output: Record<string, unknown>, text: string): void {
  if (json) ctx.stdout(goJsonLine({ ...output, correlation_id: correlationId(ctx.argv) }) + '\n');
  else ctx.stdout(text + '\n');
}

/** `--profile strict` forces a required signature and needs an explicit key source (else exit 6). */
export function requireSignature(flags: VerifyFlags): boolean {
  if (flags.profile !== 'strict') return flags.requireSignature === true;
  if (![flags.publicKey, flags.publicKeyEnv, flags.privateKey, flags.privateKeyEnv, flags.jwks].some((v) => v)) {
    throw new WardError(ERROR_CODES.USAGE, '--profile strict requires --public-key, --public-key-env, --jwks, --private-key or --private-key-env');
  }
  return true;
}

/**
 * Verify keys: explicit key flags always apply. Without them Ward's own key ring is used, but
 * only for signatures it made (matching key ids): another producer's signature is then `skipped`
 * as without a key, instead of `failed` against an unrelated key.
 */
export function verifyKeys(ctx: CliContext, flags: VerifyKeyFlags, signatureKeyIds: readonly string[]): VerifyKey[] | undefined {
  const explicit = [flags.publicKey, flags.publicKeyEnv, flags.privateKey, flags.privateKeyEnv, flags.jwks].some((v) => v);
  if (explicit) return verifyKeysFromFlags(ctx, flags);
  let ring: VerifyKey[];
  try {
    ring = verifyKeysFromFlags(ctx, flags);
  } catch (err) {
    if (isWardError(err) && err.code === ERROR_CODES.KEY_MISSING) return undefined;
    throw err;
  }
  return signatureKeyIds.some((id) => ring.some((k) => k.keyId === id.toLowerCase())) ? ring : undefined;
}

/**
 * A verification that stopped (broken proof chain, pack_id mismatch, a payload breaking its
 * contract) still reports what the pack claims to be, as a `verify` object beside the error, so a
 * pipeline reading `pack_id` or `verify` sees the same shape whether the pack failed softly or hard.
 */
function failedVerification(err: unknown, path: string, bytes: Buffer): unknown {
  if (!isWardError(err) || err.exitCode !== EXIT.VERIFY_FAILED) return err;
  const claimed = claimedIdentity(bytes);
  return new WardError(err.code, err.message, {
    cause: err,
    ...(err.hint ? { hint: err.hint } : {}),
    details: { ...err.details, operation: 'verify', path, ...claimed, verify: { ...claimed, files_checked: claimedFileCount(bytes) }, ...PACK_SCHEMA },
  });
}

/** What the manifest says the pack is (unverified; best effort, empty when unreadable). */
function claimedIdentity(bytes: Buffer): { pack_id?: string; pack_type?: string; source_ref?: string } {
  const manifest = looseManifest(bytes);
  const out: { pack_id?: string; pack_type?: string; source_ref?: string } = {};
  for (const key of ['pack_id', 'pack_type', 'source_ref'] as const) {
    if (typeof manifest?.[key] === 'string' && manifest[key] !== '') out[key] = manifest[key] as string;
  }
  return out;
}

function claimedFileCount(bytes: Buffer): number {
  const contents = looseManifest(bytes)?.['contents'];
  return Array.isArray(contents) ? contents.length : 0;
}

/** The first of `names` in the archive, parsed without checks (undefined when anything is wrong). */
function looseManifest(bytes: Buffer, names: readonly string[] = ['pack_manifest.json']): Record<string, unknown> | undefined {
  try {
    const zip = openZip(bytes, { rejectDuplicates: false });
    const entry = names.map((n) => zip.get(n)).find((e) => e !== undefined);
    const value: unknown = entry ? JSON.parse(zip.read(entry).toString('utf8')) : undefined;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Key ids named by the manifest signatures of a pack or runpack (best effort; verify judges them). */
export function signatureKeyIds(bytes: Buffer): string[] {
  const signatures = looseManifest(bytes, ['pack_manifest.json', 'manifest.json'])?.['signatures'];
  if (!Array.isArray(signatures)) return []; // verification reports the real problem
  return signatures.map((s: { key_id?: unknown } | null) => (typeof s?.key_id === 'string' ? s.key_id : ''));
}

function problems(result: { missing_files?: string[]; hash_mismatches?: { path: string }[]; undeclared_files?: string[]; signature_errors?: string[]; signature_status?: string }): string[] {
  return [
    ...(result.missing_files ?? []).map((f) => `missing: ${f}`),
    ...(result.hash_mismatches ?? []).map((m) => `hash mismatch: ${m.path}`),
    ...(result.undeclared_files ?? []).map((f) => `undeclared: ${f}`),
    ...(result.signature_errors ?? []).map((e) => `signature: ${e}`),
    `signature status: ${result.signature_status}`,
  ];
}

function readInput(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `read ${path}: ${(err as Error).message}`);
  }
}

/** Audit files the gate writes next to a trace: `<kind>_<trace_id>.json`. */
function defaultEvidence(tracePath: string): string[] {
  let traceId: unknown;
  try {
    traceId = (JSON.parse(readFileSync(tracePath, 'utf8')) as { trace_id?: unknown }).trace_id;
  } catch {
    return [];
  }
  if (typeof traceId !== 'string' || traceId === '') return [];
  const dir = dirname(tracePath);
  return ['approval_audit', 'delegation_audit', 'credential_evidence']
    .map((kind) => join(dir, `${kind}_${traceId}.json`))
    .filter((path) => existsSync(path));
}
