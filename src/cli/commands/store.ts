import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, isWardError, WardError } from '../../errors.js';
import {
  describeArtifact,
  ENTRY_KINDS,
  entryView,
  exportStore,
  importStore,
  quoteId,
  resolveOneEntry,
  type EntryKind,
  type EvidenceStore,
  type ImportReport,
  type ListFilter,
  type PutResult,
  type StoreEntry,
  type StoreInput,
} from '../../store/index.js';
import { openZip } from '../../zip/index.js';
import { STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';
import { addStoreLocationOptions, openStoreAt, storeLocationOf, type StoreLocationFlags } from '../store-access.js';
import { daemonUrl, storeEntryOverDaemon, storeListOverDaemon } from '../daemon-client.js';
import { print } from './pack.js';
import { PROGRESS_HELP, progressOf, QUIET_PROGRESS, type Progress, type ProgressFlags } from '../progress.js';

interface StoreFlags extends StoreLocationFlags {
  stateDir?: string;
  json?: boolean;
}

interface ListFlags extends StoreFlags {
  kind?: EntryKind;
  run?: string;
  session?: string;
  tool?: string;
  verdict?: string;
  reason?: string;
  ref?: string;
  since?: string;
  until?: string;
  limit: string;
  order: 'asc' | 'desc';
}

/** `ward store list|show|ingest|gc|export|import|migrate`: the local evidence store (.ward/store) or a PostgreSQL one (--store). */
export function register(program: Command, ctx: CliContext): void {
  const store = program
    .command('store')
    .description('the evidence store (local, or PostgreSQL with --store): traces, runpacks and packs indexed by id, time, run, session, tool, verdict and reason');

  withFilters(withCommon(store.command('list').description('list stored entries, newest first (the spool is ingested first)')))
    .option('--limit <n>', 'at most this many entries', '50')
    .option('--daemon <url>', 'ask a running ward serve instead of opening the store (default $WARD_DAEMON_URL)')
    .action(async (flags: ListFlags & { daemon?: string }) => {
      const daemon = daemonUrl(ctx, flags.daemon);
      if (daemon) {
        const entries = (await storeListOverDaemon(ctx, daemon, flags)) as unknown as StoreEntry[];
        print(ctx, flags.json, { ok: true, count: entries.length, entries }, entries.map(entryLine).join('\n') || 'no entries');
        return;
      }
      await withStore(ctx, flags, async (s) => {
        const entries = await s.list(filterOf(flags));
        print(ctx, flags.json, { ok: true, count: entries.length, entries }, entries.map(entryLine).join('\n') || 'no entries');
      });
    });

  withCommon(store.command('show').description('show one entry: the trace, or the pack or runpack summary').argument('<id>', 'id, unique id prefix, trace id or run id'))
    .addOption(new Option('--kind <kind>', 'only this kind').choices([...ENTRY_KINDS]))
    .option('--daemon <url>', 'ask a running ward serve instead of opening the store (default $WARD_DAEMON_URL)')
    .action(async (id: string, flags: StoreFlags & { kind?: EntryKind; daemon?: string }) => {
      const daemon = daemonUrl(ctx, flags.daemon);
      const show = (entry: StoreEntry, bytes: Buffer) => {
        const view = entryView(entry, bytes);
        print(ctx, flags.json, { ok: true, entry, [view.key]: view.body }, `${entryLine(entry)}\n${JSON.stringify(view.body, null, 2)}`);
      };
      if (daemon) {
        const { entry, bytes } = await storeEntryOverDaemon(ctx, daemon, id, flags.kind);
        show(entry, bytes);
        return;
      }
      await withStore(ctx, flags, async (s) => {
        const entry = await resolveOneEntry(s, id, flags.kind);
        show(entry, await s.read(entry));
      });
    });

  withCommon(store.command('ingest').description('ingest the spool, plus trace files, runpacks, packs or directories given').argument('[paths...]', 'files or directories'))
    .option('--progress', PROGRESS_HELP)
    .action(async (paths: string[], flags: StoreFlags & ProgressFlags) => {
      const progress = progressOf(ctx, flags, 'store ingest');
      progress.stage(`reading ${paths.length} path${paths.length === 1 ? '' : 's'}`);
      const collected = paths.flatMap((p) => collectInputs(resolve(ctx.cwd, p)));
      // Each file is checked on its own, as the spool's are: the valid ones are stored, the others
      // reported (exit 2), so one bad file does not keep the rest out.
      const now = new Date().toISOString();
      const rejected: { file: string; error: string }[] = [];
      const inputs: StoreInput[] = [];
      for (const item of collected) {
        try {
          if (item.error !== undefined) throw new WardError(ERROR_CODES.STORE_INVALID, item.error);
          describeArtifact(item.input!, now);
          inputs.push(item.input!);
        } catch (err) {
          if (!isWardError(err)) throw err;
          rejected.push({ file: item.file, error: err.message });
        }
      }
      await withStore(
        ctx,
        flags,
        async (s) => {
          progress.stage(`storing ${inputs.length} entries`);
          const put = await s.put(inputs);
          progress.end();
          reportPut(ctx, flags, put, 'stored', rejected);
        },
        progress,
      );
    });

  withCommon(store.command('gc').description('retention: remove entries older than --max-age and beyond --max-count per kind'))
    .option('--max-age <age>', 'e.g. 30d, 12h, 90m, 3600s')
    .option('--max-count <n>', 'keep at most this many entries per kind (newest)')
    .addOption(new Option('--kind <kind>', 'only this kind').choices([...ENTRY_KINDS]))
    .option('--progress', PROGRESS_HELP)
    .action(async (flags: StoreFlags & ProgressFlags & { maxAge?: string; maxCount?: string; kind?: EntryKind }) => {
      if (flags.maxAge === undefined && flags.maxCount === undefined) throw new WardError(ERROR_CODES.USAGE, 'store gc needs --max-age or --max-count');
      const maxAgeSeconds = flags.maxAge === undefined ? undefined : parseAge(flags.maxAge);
      const maxCount = flags.maxCount === undefined ? undefined : parseCount(flags.maxCount, '--max-count');
      const progress = progressOf(ctx, flags, 'store gc');
      await withStore(
        ctx,
        flags,
        async (s) => {
          progress.stage('removing expired entries');
          const report = await s.gc({ maxAgeSeconds, maxCount, kind: flags.kind, now: new Date() });
          progress.end();
          print(ctx, flags.json, { ok: true, ...report }, `removed ${report.removed}, remaining ${report.remaining}`);
        },
        progress,
      );
    });

  withFilters(withCommon(store.command('export').description('write matching entries to a deterministic zip (traces/, captures/, runpacks/, packs/; ZIP64 past 65,534 entries)')))
    .requiredOption('--out <file>', 'export zip')
    .option('--progress', PROGRESS_HELP)
    .action(async (flags: ListFlags & ProgressFlags & { out: string }) => {
      const progress = progressOf(ctx, flags, 'store export');
      await withStore(
        ctx,
        flags,
        async (s) => {
          const out = resolve(ctx.cwd, flags.out);
          progress.stage('listing entries');
          const report = await exportStore(s, filterOf(flags), out, (done, total) => progress.count(done, total, 'entries written'));
          progress.end();
          const skipped = report.skipped.map((e) => `skipped ${e.kind} ${quoteId(e.id)}: ${e.reason}`);
          print(
            ctx,
            flags.json,
            { ok: report.skipped.length === 0, path: out, count: report.count, bytes: report.bytes, ...(report.skipped.length > 0 ? { skipped: report.skipped } : {}) },
            [`exported ${report.count} entries to ${out}`, ...skipped].join('\n'),
          );
          // Evidence left out of an export is a failure the caller must see, even though the rest is written.
          if (report.skipped.length > 0) ctx.exitCode = EXIT.VERIFY_FAILED;
        },
        progress,
      );
    });

  withCommon(store.command('import').description('import an export zip made by ward store export').argument('<file>', 'export zip'))
    .option('--progress', PROGRESS_HELP)
    .action(async (file: string, flags: StoreFlags & ProgressFlags) => {
      const path = resolve(ctx.cwd, file);
      const progress = progressOf(ctx, flags, 'store import');
      await withStore(
        ctx,
        flags,
        async (s) => {
          progress.stage(`checking ${file}`);
          const report = await importStore(s, path, (done, total) => progress.count(done, total, 'entries stored'));
          progress.end();
          reportPut(ctx, flags, report, 'imported');
        },
        progress,
      );
    });

  addStoreLocationOptions(store.command('migrate').description('create or upgrade the schema of a PostgreSQL store (ward serve does it on start); --status only reports'))
    .option('--status', 'report the schema version, change nothing')
    .option('--json', 'one line of JSON on stdout')
    .action(async (flags: StoreLocationFlags & { status?: boolean; json?: boolean }) => {
      const location = storeLocationOf(ctx, flags);
      if (location.kind !== 'postgres') {
        throw new WardError(ERROR_CODES.USAGE, 'store migrate applies to a PostgreSQL store; the local store needs no migration', {
          hint: 'pass --store postgres://user@host:5432/db (or set WARD_STORE_URL)',
        });
      }
      const { PgPool, migrate, schemaStatus } = await import('../../pg/index.js');
      const db = new PgPool(location.config, { max: 2, applicationName: 'ward-cli' });
      try {
        const status = flags.status ? { ...(await schemaStatus(db)), ran: undefined } : await migrate(db);
        const current = status.version === status.latest;
        const ok = flags.status ? current : true;
        const text = [
          `store ${db.display}: schema version ${status.version} (this Ward: ${status.latest})${current ? '' : flags.status ? ', not current: run ward store migrate' : ''}`,
          ...(status.ran ? [status.ran.length ? `applied ${status.ran.join(', ')}` : 'nothing to apply'] : []),
        ].join('\n');
        print(
          ctx,
          flags.json,
          { ok, store: db.display, version: status.version, latest: status.latest, ...(status.ran ? { ran: status.ran } : {}), applied: status.applied },
          text,
        );
        ctx.exitCode = ok ? EXIT.OK : EXIT.VERIFY_FAILED;
      } finally {
        await db.close();
      }
    });
}

function withCommon(cmd: Command): Command {
  return addStoreLocationOptions(cmd.option('--state-dir <dir>', STATE_DIR_HELP).option('--json', 'one line of JSON on stdout'));
}

function withFilters(cmd: Command): Command {
  return cmd
    .addOption(new Option('--kind <kind>', 'trace, runpack or pack').choices([...ENTRY_KINDS]))
    .option('--run <run_id>', 'run id')
    .option('--session <id>', 'session id')
    .option('--tool <name>', 'tool name')
    .option('--verdict <verdict>', 'allow, block, require_approval, dry_run')
    .option('--reason <code>', 'reason code')
    .option('--ref <id>', 'trace id or pack source ref')
    .option('--since <time>', 'RFC 3339, inclusive')
    .option('--until <time>', 'RFC 3339, exclusive')
    .addOption(new Option('--order <order>', 'by time').choices(['asc', 'desc']).default('desc'));
}

function filterOf(flags: ListFlags): ListFilter {
  return {
    kind: flags.kind,
    run_id: flags.run,
    session_id: flags.session,
    tool_name: flags.tool,
    verdict: flags.verdict,
    reason_code: flags.reason,
    ref: flags.ref,
    since: flags.since,
    until: flags.until,
    limit: flags.limit === undefined ? undefined : parseCount(flags.limit, '--limit'),
    order: flags.order,
  };
}

/**
 * Open the store (the local one failing fast if another process owns it; a PostgreSQL one
 * refusing a schema that is not current), drain the local spool into it, run, close.
 */
async function withStore(ctx: CliContext, flags: StoreFlags, run: (store: EvidenceStore) => Promise<void>, shown: Progress = QUIET_PROGRESS): Promise<void> {
  const location = storeLocationOf(ctx, flags);
  shown.stage('opening the store');
  const store = await openStoreAt(location, stateDir(ctx, flags.stateDir));
  try {
    shown.stage('ingesting the spool');
    await store.ingest();
    ctx.exitCode = EXIT.OK;
    await run(store);
  } finally {
    shown.end();
    await store.close();
  }
}

/** A conflict (same id, different bytes) is evidence that does not match what is stored: exit 2. */
function reportPut(ctx: CliContext, flags: StoreFlags, result: PutResult | ImportReport, verb: string, rejected?: readonly { file: string; error: string }[]): void {
  const put = { ...result, stored: typeof result.stored === 'number' ? result.stored : result.stored.length };
  const failed = put.conflicts.length > 0 || (rejected?.length ?? 0) > 0;
  print(
    ctx,
    flags.json,
    { ok: !failed, stored: put.stored, duplicates: put.duplicates, conflicts: put.conflicts, ...(rejected ? { rejected } : {}) },
    [
      `${verb} ${put.stored}, already present ${put.duplicates}, conflicts ${put.conflicts.length}${rejected ? `, rejected ${rejected.length}` : ''}`,
      ...(rejected ?? []).map((r) => `rejected ${r.file}: ${r.error}`),
    ].join('\n'),
  );
  if (failed) ctx.exitCode = EXIT.VERIFY_FAILED;
}

function entryLine(e: StoreEntry): string {
  const facts = [e.run_id && `run=${e.run_id}`, e.tool_names && `tool=${e.tool_names.join(',')}`, e.verdict && `verdict=${e.verdict}`, e.pack_type && `type=${e.pack_type}`];
  return [e.time, e.kind, e.id, ...facts.filter(Boolean)].join('  ');
}

/**
 * Files named on `store ingest`: *.json as traces (captures when named capture_*), *.zip as packs
 * (or runpacks when they hold manifest.json). A zip that does not open is kept with its error.
 */
function collectInputs(path: string): { file: string; input?: StoreInput; error?: string }[] {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new WardError(ERROR_CODES.USAGE, `no such file or directory: ${path}`);
  }
  if (stat.isDirectory()) return readdirSync(path).sort().flatMap((name) => (name.endsWith('.json') || name.endsWith('.zip') ? collectInputs(join(path, name)) : []));
  const bytes = readFileSync(path);
  if (path.endsWith('.json')) return [{ file: path, input: { kind: basename(path).startsWith('capture_') ? 'capture' : 'trace', bytes } }];
  if (path.endsWith('.zip')) {
    try {
      return [{ file: path, input: { kind: openZip(bytes).get('pack_manifest.json') ? 'pack' : 'runpack', bytes } }];
    } catch (err) {
      if (!isWardError(err)) throw err;
      return [{ file: path, error: err.message }];
    }
  }
  throw new WardError(ERROR_CODES.USAGE, `unsupported file (expected .json or .zip): ${path}`);
}

const AGE_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

export function parseAge(text: string): number {
  const m = /^(\d+)([smhdw]?)$/.exec(text.trim());
  if (!m) throw new WardError(ERROR_CODES.USAGE, `invalid --max-age ${JSON.stringify(text)} (use e.g. 30d, 12h, 90m, 3600s)`);
  return Number(m[1]) * AGE_UNITS[m[2] || 's']!;
}

function parseCount(text: string, flag: string): number {
  if (!/^\d+$/.test(text.trim())) throw new WardError(ERROR_CODES.USAGE, `${flag} must be a non-negative integer`);
  return Number(text);
}
