import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { link, open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonObject } from '../../canon/index.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { captureFileName, captureFileText, traceFileText, type SignedTrace } from '../../trace/index.js';
import type { TraceSink } from '../../decision/trace-sink.js';
import { linkNewUnsynced, sweepTempFiles, syncDir, syncDirAsync, writeFileAtomic, writeFileAtomicAsync, writeTempAsync } from '../../state/atomic-file.js';
import { storageFaultCode, storageFullError } from '../../state/storage-fault.js';
import { Journal, leftoverSegments, readSegment, removeSegment, type JournalRecord, type SegmentRef } from '../../state/journal.js';

/**
 * Journal record type of the proxy's and the SDK's journals: one file of the trace directory,
 * payload `<file name>\n<file text>` (UTF-8). A trace and its capture are two records of one append.
 */
const FILE_RECORD = 16;
/** The only names a journal may (re)create in the trace directory. */
const FILE_NAME = /^[a-z]+_[0-9a-f_]+\.json$/;
/** Background file workers, at most (the journal's writes share the thread pool). */
const WORKERS = 2;
/**
 * Written trace files left unsynced before the workers start syncing the oldest: a burst shorter
 * than this pays no file sync until its checkpoint; sustained traffic syncs its files this far
 * behind, spread out, instead of all at once when a segment is full (~3,000 traces).
 */
const SYNC_LAG = 1024;
/**
 * Trace files are written in a lull: once no trace has arrived for this long — or, under sustained
 * load, once `MATERIALIZE_BACKLOG` wait (their texts are held until the segment's checkpoint
 * anyway). Writing them while calls flow (several file operations each, whose completions run on
 * the event loop) competed with every call for the loop and the CPU: about 0.3 ms of each call's
 * added latency at p50 on a 2-core machine (bench/mcp.bench.js, MCP proxy at concurrency 1).
 */
const MATERIALIZE_LULL_MS = 200;
const MATERIALIZE_BACKLOG = 1024;

interface Entry {
  /** File name in the trace directory → its text. */
  files: [string, string][];
  /** Its files' background write (visible, not synced), once started. */
  written?: Promise<void>;
  /** Its files' sync (written first if missing), once started; `synced` when it succeeded. */
  syncing?: Promise<void>;
  synced: boolean;
}

/**
 * When `write` resolves — what an answered call's trace survives:
 * - `fsync`: the journal is on disk (group-committed O_DSYNC write): survives a power loss.
 * - `write`: the journal write reached the kernel (one synchronous write, no thread hop): survives a
 *   crash or kill -9 of Ward; the fdatasync follows in the background, so a power loss or kernel
 *   crash can lose the traces of the last fdatasync interval (about a millisecond).
 */
export type TraceSync = 'fsync' | 'write';

/**
 * A durably queued trace sink for hot paths (the MCP proxy, the SDK's `durability: 'fsync'`).
 * `write` appends the signed trace to Ward's journal (`state/journal.ts`, shared: several
 * processes may use one directory) and resolves once the append is acknowledged — one sequential
 * write shared by every trace that arrived meanwhile (group commit), instead of a file create,
 * fsync, link and directory fsync per trace. The trace files (`trace_<trace_id>_<event_id>.json`,
 * named as `gate eval`'s fallback names them) are then written in the background and fdatasynced
 * a few at a time, a thousand traces behind; a journal segment is deleted only after its files and the directory are synced
 * (its checkpoint). A journal left by a process that died is replayed by the next sink on the same
 * directory, so every acknowledged trace ends up as a file.
 */
export class JournalTraceSink implements TraceSink {
  private readonly journal: Journal;
  /** Entries per journal segment, for the checkpoint that retires it. */
  private readonly bySegment = new Map<number, Entry[]>();
  private toMaterialize: Entry[] = [];
  private materializeTimer: NodeJS.Timeout | undefined;
  /** When the last trace arrived (ms since the epoch), for the lull. */
  private lastEntered = 0;
  private readonly materializing = new Set<Promise<void>>();
  /** Entries whose files are written, oldest first, not yet synced. */
  private unsynced: Entry[] = [];
  private workers = 0;
  private closed = false;

  constructor(
    private readonly traceDir: string,
    private readonly journalDir: string,
    private readonly sync: TraceSync = 'fsync',
  ) {
    mkdirSync(traceDir, { recursive: true, mode: 0o700 });
    mkdirSync(journalDir, { recursive: true, mode: 0o700 });
    sweepTempFiles(traceDir); // temporary files a process that died (or a full disk) left behind
    recoverJournals(traceDir, journalDir);
    // One group in flight: callers arriving meanwhile share the next write (in the SDK's bench at 16
    // concurrent callers, larger groups beat overlapping ones).
    this.journal = new Journal(journalDir, { sync, shared: true, maxInFlight: 1, checkpoint: (seg) => this.checkpoint(seg) });
    // Preallocate the first segment now, off the first call's path; a failure resurfaces on write.
    this.journal.prepare();
  }

  locate(trace: SignedTrace): string {
    return join(this.traceDir, traceFileName(String(trace['trace_id'] ?? ''), String(trace['event_id'] ?? '')));
  }

  write(trace: SignedTrace, capture?: JsonObject): Promise<string> {
    if (this.closed) return Promise.reject(new WardError(ERROR_CODES.IO, 'trace sink is closed'));
    const traceId = String(trace['trace_id'] ?? '');
    const eventId = String(trace['event_id'] ?? '');
    if (!/^[0-9a-f]{24}$/.test(traceId) || !/^[0-9a-f]{24}$/.test(eventId)) {
      return Promise.reject(new WardError(ERROR_CODES.INTERNAL, 'trace sink: record has no valid trace_id/event_id'));
    }
    const name = traceFileName(traceId, eventId);
    const files: [string, string][] = [[name, traceFileText(trace)]];
    if (capture) files.push([captureFileName(capture), captureFileText(capture)]);
    const entry: Entry = { files, synced: false };
    const records: JournalRecord[] = files.map(([file, text]) => ({ type: FILE_RECORD, payload: Buffer.from(`${file}\n${text}`) }));
    const location = join(this.traceDir, name);
    if (this.sync === 'write') {
      // The fast path: one synchronous positional write into the preallocated journal.
      let seg: SegmentRef | undefined;
      try {
        seg = this.journal.appendNow(records);
      } catch (err) {
        return Promise.reject(this.journalError(err));
      }
      if (seg) {
        this.entered(seg, entry);
        return Promise.resolve(location);
      }
    }
    return this.journal.append(records).then(
      (seg) => {
        this.entered(seg, entry);
        return location;
      },
      (err: unknown) => {
        throw this.journalError(err);
      },
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.journal.close();
    this.materializeNow();
    await Promise.allSettled([...this.materializing]);
  }

  private journalError(err: unknown): WardError {
    // A full or failing disk is its own condition (ERR_STORAGE_FULL): the call is refused, and the
    // next append tries a fresh segment, so the proxy recovers by itself once space returns.
    const code = storageFaultCode(err);
    if (code) return storageFullError(`trace journal ${this.journalDir}`, code, err);
    return new WardError(ERROR_CODES.IO, `trace journal ${this.journalDir}: ${(err as Error).message}`, { cause: err });
  }

  private entered(seg: SegmentRef, entry: Entry): void {
    let list = this.bySegment.get(seg.seq);
    if (!list) this.bySegment.set(seg.seq, (list = []));
    list.push(entry);
    this.toMaterialize.push(entry);
    this.lastEntered = Date.now();
    if (this.toMaterialize.length >= MATERIALIZE_BACKLOG) this.materializeNow();
    else if (!this.materializeTimer) this.materializeAfter(MATERIALIZE_LULL_MS);
  }

  private materializeAfter(ms: number): void {
    this.materializeTimer = setTimeout(() => {
      this.materializeTimer = undefined;
      const quiet = Date.now() - this.lastEntered;
      if (quiet < MATERIALIZE_LULL_MS) this.materializeAfter(MATERIALIZE_LULL_MS - quiet);
      else this.materializeNow();
    }, ms);
    this.materializeTimer.unref();
  }

  /**
   * Write trace files in the background (they are already durable in the journal), batched in a
   * lull (`MATERIALIZE_LULL_MS`) so file creation does not compete with the calls. Each is
   * written under a temporary name and linked into place, so a reader never sees a partial trace;
   * a file already there (the SDK writes its own before `evaluate` resolves) is left as it is. The
   * same workers sync written files `SYNC_LAG` behind (`syncEntry`).
   */
  private materializeNow(): void {
    if (this.materializeTimer) clearTimeout(this.materializeTimer);
    this.materializeTimer = undefined;
    while (this.workers < WORKERS && (this.toMaterialize.length > 0 || this.unsynced.length > SYNC_LAG)) {
      this.workers++;
      const work = (async () => {
        for (;;) {
          // Failures are retried at the checkpoint, which does not drop the journal without the files.
          const next = this.toMaterialize.shift();
          if (next) {
            await (next.written ??= writeEntry(this.traceDir, next)).catch(() => undefined);
            this.unsynced.push(next);
            continue;
          }
          if (this.unsynced.length <= SYNC_LAG) break;
          const old = this.unsynced.shift()!;
          if (!old.synced) await (old.syncing ??= syncEntry(this.traceDir, old)).catch(() => undefined);
        }
      })().finally(() => {
        this.workers--;
        if (this.toMaterialize.length > 0 || this.unsynced.length > SYNC_LAG) this.materializeNow();
      });
      this.materializing.add(work);
      void work.finally(() => this.materializing.delete(work));
    }
  }

  /** Checkpoint: every file of the segment exists and is synced, the directory too; then the journal drops it. */
  private async checkpoint(seg: SegmentRef): Promise<void> {
    const entries = this.bySegment.get(seg.seq) ?? [];
    this.bySegment.delete(seg.seq);
    const left = [...entries];
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        for (let e = left.shift(); e; e = left.shift()) {
          if (e.synced) continue;
          await e.written?.catch(() => undefined);
          await e.syncing?.catch(() => undefined);
          if (!e.synced) await (e.syncing = syncEntry(this.traceDir, e));
        }
      }),
    );
    await syncDirAsync(this.traceDir);
  }
}

/** Make an entry's files visible (not synced). */
async function writeEntry(dir: string, e: Entry): Promise<void> {
  for (const [name, text] of e.files) await writeFileUnsynced(join(dir, name), text);
}

async function syncEntry(dir: string, e: Entry): Promise<void> {
  for (const [name, text] of e.files) await materializeFile(join(dir, name), text);
  e.synced = true;
}

/**
 * A stat on this thread: the proxy's files never exist yet, and an `access` that fails costs a
 * thread-pool round trip and the construction of an ENOENT error per file.
 */
function exists(path: string): boolean {
  return existsSync(path);
}

/** Publish `text` at `path` unless a file is there: temporary name, then link(2); no sync (temporary file removed on every path). */
async function writeFileUnsynced(path: string, text: string): Promise<void> {
  if (exists(path)) return;
  await linkNewUnsynced(path, text);
}

/** `path` holds `text`, durably (but for the directory entry, which the checkpoint syncs). */
async function materializeFile(path: string, text: string): Promise<void> {
  if (await syncExisting(path, text)) return;
  const temp = await writeTempAsync(path, text);
  try {
    await link(temp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !(await syncExisting(path, text))) throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/**
 * Sync the file at `path` if there is one; false if there is none. This process wrote it (or the
 * SDK did, before `evaluate` resolved) from the same text: a file of the right size is synced as it
 * is, a short one (left by a Ward before files were always published by rename) is replaced by
 * rename, never rewritten in place.
 */
async function syncExisting(path: string, text: string): Promise<boolean> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  let replace = false;
  try {
    if ((await fh.stat()).size !== Buffer.byteLength(text)) replace = true;
    else await fh.datasync();
  } finally {
    await fh.close();
  }
  if (replace) await writeFileAtomicAsync(path, text);
  return true;
}

/**
 * Replay the journals of writers that are gone — this version's segments and the JSON-lines
 * journals (`journal_<pid>_<hex>.jsonl`) of Ward before it: write (and fsync) every trace file that
 * is missing or differs, then delete the journal. Recovery stops at a segment's first torn or
 * corrupt frame (an append that was never acknowledged). Returns the number of files written.
 */
function traceFileName(traceId: string, eventId: string): string {
  return `trace_${traceId}_${eventId}.json`;
}

export function recoverJournals(traceDir: string, journalDir: string): number {
  let recovered = 0;
  let touched = false;
  for (const seg of leftoverSegments(journalDir, { shared: true })) {
    for (const r of readSegment(seg.path).records) {
      if (r.type !== FILE_RECORD) continue;
      const nl = r.payload.indexOf(0x0a);
      if (nl <= 0) continue;
      if (restoreFile(traceDir, r.payload.subarray(0, nl).toString('utf8'), r.payload.subarray(nl + 1).toString('utf8'))) recovered++;
    }
    syncDir(traceDir);
    removeSegment(seg.path);
    touched = true;
  }
  for (const path of legacyJournals(journalDir)) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      let files: unknown;
      try {
        files = JSON.parse(line);
      } catch {
        continue; // a torn last line (never acknowledged), or the preallocated zeros
      }
      if (!Array.isArray(files)) continue;
      for (const f of files) {
        if (Array.isArray(f) && typeof f[0] === 'string' && typeof f[1] === 'string' && restoreFile(traceDir, f[0], f[1])) recovered++;
      }
    }
    syncDir(traceDir);
    unlinkSync(path);
    touched = true;
  }
  if (touched) syncDir(journalDir);
  return recovered;
}

/** JSON-lines journals (before journal version 1) whose writer is gone. */
function legacyJournals(journalDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(journalDir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const m = /^journal_(\d+)_[0-9a-f]+\.jsonl$/.exec(name);
    if (m && !alive(Number(m[1]))) out.push(join(journalDir, name));
  }
  return out;
}

function alive(pid: number): boolean {
  // This process writes no JSON-lines journals: one named with its pid is a previous process's.
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Write `name` in the trace directory unless it already holds exactly `text`; true when written. */
function restoreFile(traceDir: string, name: string, text: string): boolean {
  if (!FILE_NAME.test(name)) return false;
  const target = join(traceDir, name);
  let have: string | undefined;
  try {
    have = readFileSync(target, 'utf8');
  } catch {
    have = undefined;
  }
  if (have === text) return false;
  // Replaced by rename: a full disk during recovery leaves the old file (or none), never a 0-byte one.
  writeFileAtomic(target, text);
  return true;
}
