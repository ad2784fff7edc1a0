import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { syncDir } from '../state/atomic-file.js';
import { describeArtifact } from './describe.js';
import { listSpool, spoolDir } from './spool.js';
import type { IngestReport, PutResult, StoreEntry, StoreInput } from './types.js';

/**
 * Ingestion of a state directory's spool and `<state>/traces`, shared by every backend: the walk
 * over files, what is rejected and when a file may be removed is the same; only how a described
 * chunk is stored (and how trace files already read are remembered) is the backend's.
 */

export const INGEST_CHUNK = 512;

export interface DescribedInput {
  input: StoreInput;
  entry: StoreEntry;
}

/** A trace file of `<state>/traces` and its size:mtime mark. */
export interface TraceFileMark {
  name: string;
  mark: string;
}

export interface IngestTarget {
  /** Store one described chunk durably (and, in the same write, remember `marks`). */
  putDescribed(items: readonly DescribedInput[], marks: readonly TraceFileMark[]): Promise<PutResult>;
  /** The remembered mark of each named trace file (undefined: never read). */
  traceFileMarks(names: readonly string[]): Promise<(string | undefined)[]>;
}

/**
 * Ingest the spool: each chunk of files is described, stored with one durable write, and only
 * then removed. A crash anywhere leaves each file either still spooled or stored (or both, which
 * re-ingestion recognizes by digest): nothing acknowledged is lost, nothing is duplicated.
 */
export async function ingestStateDir(stateDir: string, target: IngestTarget): Promise<IngestReport> {
  const report: IngestReport = { files: 0, stored: [], duplicates: 0, conflicts: [], rejected: [] };
  const files = listSpool(stateDir);
  for (let i = 0; i < files.length; i += INGEST_CHUNK) {
    const chunk = files.slice(i, i + INGEST_CHUNK);
    const now = new Date().toISOString();
    const items: DescribedInput[] = [];
    const done: string[] = [];
    for (const file of chunk) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file.path);
      } catch {
        continue; // removed by a concurrent ingester
      }
      report.files++;
      try {
        const input = { kind: file.kind, bytes };
        items.push({ input, entry: describeArtifact(input, now) });
        done.push(file.path);
      } catch (err) {
        report.rejected.push({ file: file.name, error: (err as Error).message });
        mkdirSync(join(spoolDir(stateDir), 'rejected'), { recursive: true, mode: 0o750 });
        unlessGone(() => renameSync(file.path, join(spoolDir(stateDir), 'rejected', file.name)));
      }
    }
    const put = await target.putDescribed(items, []);
    addPut(report, put);
    for (const path of done) unlessGone(() => unlinkSync(path));
    syncDir(spoolDir(stateDir));
  }
  await ingestTraceDirectory(stateDir, target, report);
  return report;
}

/**
 * Traces `gate eval` wrote to `<state>/traces/` (atomic, never overwritten) are ingested in
 * place: each file is remembered by name, size and mtime, so it is read once, not on every open.
 * Files there that are not traces (audit records) are remembered and skipped.
 */
async function ingestTraceDirectory(stateDir: string, target: IngestTarget, report: IngestReport): Promise<void> {
  const dir = join(stateDir, 'traces');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
  } catch {
    return;
  }
  const marks = names.map((name) => {
    const stat = statSync(join(dir, name), { throwIfNoEntry: false });
    return { name, mark: stat ? `${stat.size}:${stat.mtimeMs}` : '' };
  });
  const seen = await target.traceFileMarks(marks.map((m) => m.name));
  const fresh = marks.filter((m, i) => m.mark !== '' && seen[i] !== m.mark);
  for (let i = 0; i < fresh.length; i += INGEST_CHUNK) {
    const now = new Date().toISOString();
    const items: DescribedInput[] = [];
    const chunk = fresh.slice(i, i + INGEST_CHUNK);
    for (const { name } of chunk) {
      report.files++;
      try {
        const input: StoreInput = { kind: name.startsWith('capture_') ? 'capture' : 'trace', bytes: readFileSync(join(dir, name)) };
        items.push({ input, entry: describeArtifact(input, now) });
      } catch (err) {
        report.rejected.push({ file: `traces/${name}`, error: (err as Error).message });
      }
    }
    addPut(report, await target.putDescribed(items, chunk));
  }
}

function addPut(report: IngestReport, put: PutResult): void {
  report.stored.push(...put.stored);
  report.duplicates += put.duplicates;
  report.conflicts.push(...put.conflicts);
}

/**
 * A spool file another ingester removed (or set aside) first is done, not an error: the LevelDB
 * store has one owner, but several processes may drain one state directory into a shared
 * PostgreSQL store (a replica and a CLI command), and ingestion is keyed by digest anyway.
 */
function unlessGone(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
