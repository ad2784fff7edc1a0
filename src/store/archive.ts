import { compareUtf8 } from '../canon/index.js';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import { describeArtifact } from './describe.js';
import { openZipFile, writeDeterministicZipFile, DEFAULT_ZIP_LIMITS, type ZipLimits } from '../zip/index.js';
import { idProblem, quoteId } from './ids.js';
import { isJsonKind, type EntryKind, type EvidenceStore, type ListFilter, type PutResult, type StoreEntry, type StoreInput } from './types.js';

/**
 * `ward store export` / `import`: one deterministic zip (`traces/<id>.json`, `captures/<id>.json`,
 * `runpacks/<id>.zip`, `packs/<id>.zip`), ZIP64 when it holds 65,535 entries or more, written and
 * read entry by entry so neither side holds the whole archive in memory.
 *
 * What export writes, import accepts: both use `STORE_ARCHIVE_LIMITS`. Export leaves out (and
 * reports) entries import would refuse: ids that are not valid (stored before ids were checked)
 * and bodies larger than the per-entry limit.
 */
export const STORE_ARCHIVE_LIMITS: Readonly<ZipLimits> = Object.freeze({
  /** The per-entry limit of every Ward zip reader: a larger runpack or pack is unreadable anyway. */
  maxEntryBytes: DEFAULT_ZIP_LIMITS.maxEntryBytes,
  /**
   * No total: import inflates one bounded batch at a time (below), so the total only costs the disk
   * space of evidence that was valid enough to store. Zip bombs are bounded per entry instead:
   * declared size at most 100 MiB, inflation capped at the declared size, no overlapping entries.
   */
  maxTotalBytes: Number.MAX_SAFE_INTEGER,
  /** 46+ bytes of central directory each: 50 million entries is a 2.3 GB directory. */
  maxEntries: 50_000_000,
});

/** Import stores a batch when it reaches this many entries or bytes (one synced write each). */
export const IMPORT_BATCH_ENTRIES = 1_000;
export const IMPORT_BATCH_BYTES = 64 * 1024 * 1024;

/** Export reads this many bodies ahead of the writer. */
const EXPORT_READ_AHEAD = 256;

export const EXPORT_DIRS: Readonly<Record<EntryKind, string>> = Object.freeze({ trace: 'traces', capture: 'captures', runpack: 'runpacks', pack: 'packs' });

export function exportPath(entry: Pick<StoreEntry, 'kind' | 'id'>): string {
  return `${EXPORT_DIRS[entry.kind]}/${entry.id}.${isJsonKind(entry.kind) ? 'json' : 'zip'}`;
}

/** The kind and id an export entry name stands for; anything else is not a Ward store export. */
export function parseExportPath(name: string): { kind: EntryKind; id: string } {
  const slash = name.indexOf('/');
  const dir = slash < 0 ? '' : name.slice(0, slash);
  const kind = (Object.keys(EXPORT_DIRS) as EntryKind[]).find((k) => EXPORT_DIRS[k] === dir);
  const ext = kind && isJsonKind(kind) ? '.json' : '.zip';
  if (!kind || !name.endsWith(ext)) throw notExport(`unexpected entry ${quoteId(name)}`);
  const id = name.slice(slash + 1, name.length - ext.length);
  const problem = idProblem(id);
  if (problem) throw notExport(`entry ${quoteId(name)}: id ${quoteId(id)} is not a valid id: ${problem}`);
  return { kind, id };
}

export interface ExportReport {
  path: string;
  count: number;
  bytes: number;
  /** Entries left out because import would refuse them, with the reason. */
  skipped: { kind: EntryKind; id: string; reason: string }[];
}

/** How far an export or import is: `done` of `total` entries. */
export type ArchiveProgress = (done: number, total: number) => void;

/** Write every entry matching `filter` to `out` (atomically, 0600). */
export async function exportStore(store: EvidenceStore, filter: ListFilter, out: string, onProgress?: ArchiveProgress): Promise<ExportReport> {
  const entries = await store.list({ ...filter, limit: undefined });
  const skipped: ExportReport['skipped'] = [];
  const byPath = new Map<string, StoreEntry>();
  for (const entry of entries) {
    const problem = idProblem(entry.id);
    if (problem) skipped.push({ kind: entry.kind, id: entry.id, reason: `not a valid id: ${problem}` });
    else if (entry.size > STORE_ARCHIVE_LIMITS.maxEntryBytes) skipped.push({ kind: entry.kind, id: entry.id, reason: `larger than ${STORE_ARCHIVE_LIMITS.maxEntryBytes} bytes` });
    else byPath.set(exportPath(entry), entry);
  }
  // The writer asks for entries one by one in name order; bodies are fetched ahead in parallel
  // windows (LevelDB reads run on its thread pool), never more than one window in memory.
  const order = [...byPath.keys()].sort(compareUtf8);
  const ahead = new Map<string, Promise<Buffer>>();
  let next = 0;
  let done = 0;
  onProgress?.(0, order.length);
  const written = await writeDeterministicZipFile(out, order, async (path) => {
    if (!ahead.has(path)) {
      for (const p of order.slice(next, next + EXPORT_READ_AHEAD)) ahead.set(p, store.read(byPath.get(p)!));
      next = Math.min(order.length, next + EXPORT_READ_AHEAD);
    }
    const data = await ahead.get(path)!;
    ahead.delete(path);
    onProgress?.(++done, order.length);
    return { data };
  });
  skipped.sort((a, b) => compareUtf8(`${a.kind}/${a.id}`, `${b.kind}/${b.id}`));
  return { path: out, count: written.entries, bytes: written.bytes, skipped };
}

/** What an import did, in counts (an import may hold millions of entries). */
export interface ImportReport {
  stored: number;
  /** Already present with the same bytes. */
  duplicates: number;
  /** Same id, different bytes: refused, the stored evidence kept. */
  conflicts: PutResult['conflicts'];
}

/**
 * Store every entry of an export zip, in batches (each one synced put). The archive is checked as a
 * whole first (structure, names, sizes, no overlaps), then entries are inflated batch by batch.
 * Import is idempotent: entries already stored count as duplicates, so re-running after a failure
 * is safe.
 */
export async function importStore(store: EvidenceStore, path: string, onProgress?: ArchiveProgress): Promise<ImportReport> {
  const zip = openZipFile(path, { limits: STORE_ARCHIVE_LIMITS });
  try {
    const plan = zip.entries.map((entry) => ({ entry, ...parseExportPath(entry.name) }));
    let done = 0;
    onProgress?.(0, plan.length);
    const result: ImportReport = { stored: 0, duplicates: 0, conflicts: [] };
    let batch: StoreInput[] = [];
    let names: string[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      let put: PutResult;
      try {
        put = await store.put(batch);
      } catch (err) {
        throw nameCulprit(err, batch, names);
      }
      result.stored += put.stored.length;
      result.duplicates += put.duplicates;
      result.conflicts.push(...put.conflicts);
      done += batch.length;
      onProgress?.(done, plan.length);
      batch = [];
      names = [];
      bytes = 0;
    };
    for (const item of plan) {
      const data = zip.read(item.entry);
      batch.push({ kind: item.kind, bytes: data });
      names.push(item.entry.name);
      bytes += data.length;
      if (batch.length >= IMPORT_BATCH_ENTRIES || bytes >= IMPORT_BATCH_BYTES) await flush();
    }
    await flush();
    return result;
  } finally {
    zip.close();
  }
}

/** A batch failed: find the entry that fails on its own and name it in the error. */
function nameCulprit(err: unknown, batch: readonly StoreInput[], names: readonly string[]): unknown {
  if (!isWardError(err)) return err;
  const now = new Date().toISOString();
  for (let i = 0; i < batch.length; i++) {
    try {
      describeArtifact(batch[i]!, now);
    } catch (inner) {
      if (isWardError(inner)) return new WardError(inner.code, `${names[i]}: ${inner.message}`, { exitCode: inner.exitCode, cause: inner });
    }
  }
  return err;
}

function notExport(message: string): WardError {
  return new WardError(ERROR_CODES.STORE_INVALID, `not a ward store export: ${message}`, { exitCode: 2 });
}
