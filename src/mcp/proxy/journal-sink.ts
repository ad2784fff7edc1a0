import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonObject } from '../../canon/json.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { captureFileName, captureFileText } from '../../decision/capture.js';
import type { TraceSink } from '../../decision/trace-sink.js';
import { syncDir } from '../../state/atomic-file.js';
import { traceFileText } from '../../trace/write.js';
import type { SignedTrace } from '../../trace/record.js';

interface Entry {
  /** File name in the trace directory → its text. */
  files: [string, string][];
}

interface Waiter {
  line: Buffer;
  location: string;
  entry: Entry;
  resolve: (location: string) => void;
  reject: (err: Error) => void;
}

/** Each journal is preallocated to this size; a full one is retired after its files are synced. */
const JOURNAL_BYTES = 8 * 1024 * 1024;
/** Synchronized-data writes (Linux, macOS); elsewhere each group is followed by an fdatasync. */
const O_DSYNC: number | undefined = (constants as { O_DSYNC?: number }).O_DSYNC;

/**
 * When `write` resolves — what an answered call's trace survives:
 * - `fsync`: the journal is on disk (group-committed fdatasync): survives a power loss.
 * - `write`: the journal write reached the kernel (one synchronous write, no thread hop): survives a
 *   crash or kill -9 of Ward; the fdatasync follows in the background, so a power loss or kernel
 *   crash can lose the traces of the last fdatasync interval (about a millisecond).
 */
export type TraceSync = 'fsync' | 'write';

/**
 * A durably queued trace sink for hot paths (the MCP proxy). `write` appends the signed trace to an
 * append-only journal and resolves once the journal is fdatasynced — one sequential write and one
 * fdatasync shared by every trace that arrived meanwhile (group commit), instead of a file create,
 * fsync, link and directory fsync per trace — or, with `TraceSync` `write`, once the write reached
 * the kernel. The trace files (`trace_<trace_id>_<event_id>.json`,
 * named as `gate eval`'s fallback names them) are then written in the background; a journal is
 * deleted only after its files and the directory are fsynced (at rotation and on close).
 * A journal left by a process that died is replayed by the next sink on the same state directory,
 * so every acknowledged trace ends up as a file.
 */
export class JournalTraceSink implements TraceSink {
  private fh: FileHandle | undefined;
  private opening: Promise<FileHandle> | undefined;
  private journalPath = '';
  private journalBytes = 0;
  private queue: Waiter[] = [];
  private flushing: Promise<void> | undefined;
  /** Entries of the current journal, for the checkpoint that retires it. */
  private entries: Entry[] = [];
  private readonly materializing = new Set<Promise<void>>();
  private readonly retiring = new Set<Promise<void>>();
  private closed = false;

  /** `write` mode: a background fdatasync is in flight / another one is needed after it. */
  private syncing: Promise<void> | undefined;
  private syncAgain = false;

  constructor(
    private readonly traceDir: string,
    private readonly journalDir: string,
    private readonly sync: TraceSync = 'fsync',
  ) {
    mkdirSync(traceDir, { recursive: true, mode: 0o700 });
    mkdirSync(journalDir, { recursive: true, mode: 0o700 });
    recoverJournals(traceDir, journalDir);
    // Preallocate the first journal now, off the first call's path; a failure resurfaces on write.
    this.journal().catch(() => undefined);
  }

  write(trace: SignedTrace, capture?: JsonObject): Promise<string> {
    if (this.closed) return Promise.reject(new WardError(ERROR_CODES.IO, 'trace sink is closed'));
    const traceId = String(trace['trace_id'] ?? '');
    const eventId = String(trace['event_id'] ?? '');
    if (!/^[0-9a-f]{24}$/.test(traceId) || !/^[0-9a-f]{24}$/.test(eventId)) {
      return Promise.reject(new WardError(ERROR_CODES.INTERNAL, 'trace sink: record has no valid trace_id/event_id'));
    }
    const name = `trace_${traceId}_${eventId}.json`;
    const files: [string, string][] = [[name, traceFileText(trace)]];
    if (capture) files.push([captureFileName(capture), captureFileText(capture)]);
    const entry: Entry = { files };
    const line = Buffer.from(JSON.stringify(files) + '\n');
    const location = join(this.traceDir, name);
    if (this.sync === 'write' && this.fh && !this.flushing && this.journalBytes + line.length <= JOURNAL_BYTES) {
      // The fast path: one synchronous positional write into the preallocated journal.
      try {
        let written = 0;
        while (written < line.length) written += writeSync(this.fh.fd, line, written, line.length - written, this.journalBytes + written);
      } catch (err) {
        return Promise.reject(this.journalError(err));
      }
      this.journalBytes += line.length;
      this.entries.push(entry);
      this.materialize([entry]);
      this.syncSoon();
      return Promise.resolve(location);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ line, location, entry, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
    while (this.syncing) await this.syncing;
    this.materializeNow();
    await Promise.allSettled([...this.materializing]);
    if (this.fh) await this.retire(this.fh, this.journalPath, this.entries);
    this.fh = undefined;
    await Promise.allSettled([...this.retiring]);
  }

  /** Group commit: everything queued goes out in one write and one fdatasync. */
  private async flush(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue;
      this.queue = [];
      try {
        const bytes = batch.length === 1 ? batch[0]!.line : Buffer.concat(batch.map((w) => w.line));
        if (this.fh && this.journalBytes + bytes.length > JOURNAL_BYTES) this.rotate();
        const fh = await this.journal();
        let written = 0;
        while (written < bytes.length) {
          // A group bigger than the preallocated space simply extends the file (and syncs its size).
          written += (await fh.write(bytes, written, bytes.length - written, this.journalBytes + written)).bytesWritten;
        }
        const grew = this.journalBytes + bytes.length > JOURNAL_BYTES;
        if (this.sync === 'fsync' && (!O_DSYNC || grew)) await fh.datasync();
        this.journalBytes += bytes.length;
        if (this.sync === 'write') this.syncSoon();
        for (const w of batch) {
          this.entries.push(w.entry);
          w.resolve(w.location);
        }
        this.materialize(batch.map((w) => w.entry));
      } catch (err) {
        const e = this.journalError(err);
        for (const w of batch) w.reject(e);
      }
    }
    this.flushing = undefined;
  }

  private journalError(err: unknown): WardError {
    return new WardError(ERROR_CODES.IO, `trace journal ${this.journalPath}: ${(err as Error).message}`, { cause: err });
  }

  /** `write` mode: fdatasync the journal in the background, one call covering every write before it. */
  private syncSoon(): void {
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    const fh = this.fh;
    if (!fh) return; // rotated: the retired journal's files are fsynced at its checkpoint
    this.syncing = fh
      .datasync()
      .catch(() => undefined) // the checkpoint fsyncs the trace files themselves before dropping the journal
      .then(() => {
        this.syncing = undefined;
        if (this.syncAgain) {
          this.syncAgain = false;
          this.syncSoon();
        }
      });
  }

  private journal(): Promise<FileHandle> {
    if (this.fh) return Promise.resolve(this.fh);
    this.opening ??= (async () => {
      this.journalPath = join(this.journalDir, `journal_${process.pid}_${randomBytes(6).toString('hex')}.jsonl`);
      // Preallocated and zero-filled, then opened O_DSYNC: an append overwrites allocated blocks,
      // so one positional write is durable on return without a file-size (metadata) flush.
      // Recovery stops at the zeros: they never parse as a journal line.
      const init = await open(this.journalPath, 'wx', 0o600);
      try {
        const zeros = Buffer.alloc(1024 * 1024);
        for (let at = 0; at < JOURNAL_BYTES; at += zeros.length) await init.write(zeros, 0, zeros.length, at);
        await init.sync();
      } finally {
        await init.close();
      }
      syncDir(this.journalDir);
      const fh = await open(this.journalPath, this.sync === 'fsync' && O_DSYNC ? constants.O_RDWR | O_DSYNC : 'r+');
      this.fh = fh;
      this.opening = undefined;
      return fh;
    })();
    return this.opening;
  }

  /**
   * Write trace files in the background (they are already durable in the journal), batched on a
   * short timer so file creation does not compete with the journal's fdatasync call by call.
   */
  private materialize(entries: Entry[]): void {
    this.toMaterialize.push(...entries);
    if (this.materializeTimer || this.closed) {
      if (this.closed) this.materializeNow();
      return;
    }
    this.materializeTimer = setTimeout(() => this.materializeNow(), 200);
    this.materializeTimer.unref();
  }

  private toMaterialize: Entry[] = [];
  private materializeTimer: NodeJS.Timeout | undefined;

  private materializeNow(): void {
    if (this.materializeTimer) clearTimeout(this.materializeTimer);
    this.materializeTimer = undefined;
    const entries = this.toMaterialize;
    this.toMaterialize = [];
    if (entries.length === 0) return;
    const work = (async () => {
      for (const e of entries) {
        for (const [name, text] of e.files) {
          try {
            await writeNew(join(this.traceDir, name), text);
          } catch {
            // Retried from the journal at checkpoint.
          }
        }
      }
    })();
    this.materializing.add(work);
    void work.finally(() => this.materializing.delete(work));
  }

  private rotate(): void {
    const fh = this.fh!;
    const path = this.journalPath;
    const entries = this.entries;
    this.fh = undefined;
    this.entries = [];
    this.journalBytes = 0;
    this.materializeNow();
    const pending = [...this.materializing];
    const work = Promise.allSettled(pending).then(() => this.retire(fh, path, entries));
    this.retiring.add(work);
    void work.finally(() => this.retiring.delete(work));
  }

  /** Checkpoint: every file of the journal exists and is fsynced, the directory too; then drop the journal. */
  private async retire(fh: FileHandle, path: string, entries: Entry[]): Promise<void> {
    await fh.close().catch(() => undefined);
    await Promise.all(entries.flatMap((e) => e.files.map(([name, text]) => ensureSynced(join(this.traceDir, name), text))));
    syncDir(this.traceDir);
    unlinkSync(path);
    syncDir(this.journalDir);
  }
}

async function writeNew(path: string, text: string): Promise<void> {
  const fh = await open(path, 'wx', 0o600);
  try {
    await fh.writeFile(text);
  } finally {
    await fh.close();
  }
}

/** The file exists with exactly `text`, durably. */
async function ensureSynced(path: string, text: string): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r+');
  } catch {
    fh = await open(path, 'wx', 0o600);
  }
  try {
    const have = await fh.readFile('utf8');
    if (have !== text) {
      await fh.truncate(0);
      await fh.write(text, 0);
    }
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Replay journals whose writer is gone: write (and fsync) any trace file that is missing or torn,
 * then delete the journal. A torn last line was never acknowledged and is ignored.
 */
export function recoverJournals(traceDir: string, journalDir: string): number {
  let names: string[];
  try {
    names = readdirSync(journalDir);
  } catch {
    return 0;
  }
  let recovered = 0;
  for (const name of names) {
    const m = /^journal_(\d+)_[0-9a-f]+\.jsonl$/.exec(name);
    if (!m || alive(Number(m[1]))) continue;
    const path = join(journalDir, name);
    const lines = readFileSync(path, 'utf8').split('\n');
    for (const line of lines) {
      let files: unknown;
      try {
        files = JSON.parse(line);
      } catch {
        continue;
      }
      if (!Array.isArray(files)) continue;
      for (const f of files) {
        if (!Array.isArray(f) || typeof f[0] !== 'string' || typeof f[1] !== 'string' || !/^[a-z]+_[0-9a-f_]+\.json$/.test(f[0])) continue;
        const target = join(traceDir, f[0]);
        let have: string | undefined;
        try {
          have = readFileSync(target, 'utf8');
        } catch {
          have = undefined;
        }
        if (have === f[1]) continue;
        writeFileSync(target, f[1], { mode: 0o600 });
        const fd = openSync(target, 'r+');
        fsyncSync(fd);
        closeSync(fd);
        recovered++;
      }
    }
    syncDir(traceDir);
    unlinkSync(path);
  }
  syncDir(journalDir);
  return recovered;
}
