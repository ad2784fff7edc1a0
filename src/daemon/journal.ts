import { constants, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { crc32 } from 'node:zlib';
import { syncDir } from '../state/atomic-file.js';
import type { EvidenceStore, StoreInput } from '../store/types.js';

/**
 * The daemon's write-ahead journal: the durable home of a trace between its decision and its
 * indexing in the store.
 *
 * A group of records is appended with one synchronized write (O_DSYNC); only then are
 * the decisions of that group answered. The store ingests the journal in the background (large
 * synced batches, idempotent by content digest), and a segment is deleted once everything in it is
 * stored. After a crash, `recoverJournal` stores whatever the segments hold before the daemon
 * serves again, so an answered decision always ends up in the store.
 *
 * Segments are preallocated (zero-filled, fsynced) before use, so an append overwrites allocated
 * blocks and its sync does not wait for a file-size change to be journaled by the file system;
 * records are written through an O_DSYNC descriptor (one syscall writes and syncs a group).
 *
 * Record framing: u32 LE payload length, u32 LE crc32 of the payload, one kind byte, the payload.
 * A torn tail (a crash during an append that was therefore never acknowledged) fails its length or
 * checksum test and is dropped with everything after it.
 */
const HEADER = 9;
/** Synchronized-data writes (Linux, macOS); elsewhere each group is followed by an fdatasync. */
const O_DSYNC: number | undefined = (constants as { O_DSYNC?: number }).O_DSYNC;
const KINDS: StoreInput['kind'][] = ['trace', 'capture', 'runpack', 'pack'];
const SEGMENT = /^seg_(\d{16})\.log$/;

export function journalDir(stateDir: string): string {
  return join(stateDir, 'journal');
}

export function encodeRecord(input: StoreInput): Buffer {
  const out = Buffer.allocUnsafe(HEADER + input.bytes.length);
  out.writeUInt32LE(input.bytes.length, 0);
  out.writeUInt32LE(crc32(input.bytes), 4);
  out.writeUInt8(KINDS.indexOf(input.kind), 8);
  input.bytes.copy(out, HEADER);
  return out;
}

/** The intact records of a segment, in order; stops at the first torn or corrupt record. */
export function decodeSegment(bytes: Buffer): { records: StoreInput[]; torn: boolean } {
  const records: StoreInput[] = [];
  let at = 0;
  while (at < bytes.length) {
    // Segments are preallocated with zeros: a zero length is where the records end.
    if (bytes.length - at < HEADER) return { records, torn: bytes.subarray(at).some((b) => b !== 0) };
    const length = bytes.readUInt32LE(at);
    if (length === 0) return { records, torn: bytes.readUInt32LE(at + 4) !== 0 };
    const sum = bytes.readUInt32LE(at + 4);
    const kind = KINDS[bytes.readUInt8(at + 8)];
    if (!kind || at + HEADER + length > bytes.length) return { records, torn: true };
    const payload = bytes.subarray(at + HEADER, at + HEADER + length);
    if (crc32(payload) !== sum) return { records, torn: true };
    records.push({ kind, bytes: Buffer.from(payload) });
    at += HEADER + length;
  }
  return { records, torn: false };
}

function segments(dir: string): { name: string; seq: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, m: SEGMENT.exec(name) }))
    .filter((x): x is { name: string; m: RegExpExecArray } => x.m !== null)
    .map(({ name, m }) => ({ name, seq: Number(m[1]) }))
    .sort((a, b) => a.seq - b.seq);
}

export interface RecoveryReport {
  segments: number;
  records: number;
  stored: number;
  duplicates: number;
  torn: number;
}

/**
 * Store every record the journal holds (oldest segment first), then delete the segments. Run
 * before serving: it is how decisions answered before a crash reach the store.
 */
export async function recoverJournal(stateDir: string, store: EvidenceStore, chunk = 512): Promise<RecoveryReport> {
  const dir = journalDir(stateDir);
  const report: RecoveryReport = { segments: 0, records: 0, stored: 0, duplicates: 0, torn: 0 };
  for (const seg of segments(dir)) {
    const path = join(dir, seg.name);
    const { records, torn } = decodeSegment(readFileSync(path));
    report.segments++;
    report.records += records.length;
    if (torn) report.torn++;
    for (let i = 0; i < records.length; i += chunk) {
      const put = await store.put(records.slice(i, i + chunk));
      report.stored += put.stored.length;
      report.duplicates += put.duplicates;
    }
    unlinkSync(path);
  }
  if (report.segments > 0) syncDir(dir);
  return report;
}

interface Segment {
  seq: number;
  path: string;
  fh: FileHandle;
  size: number;
  capacity: number;
  /** fdatasyncs in flight (a segment is closed only after they finish). */
  syncs: Set<Promise<void>>;
  /** Records appended to this segment and not yet stored. */
  unstored: number;
  closed: boolean;
}

/**
 * Appends groups of records durably and feeds them to the store. Not safe for concurrent
 * `append` calls: the sink serializes them (one group at a time).
 */
export class Journal {
  private current: Segment | undefined;
  private readonly retired: Segment[] = [];
  private nextSeq = 1;
  private backlog: { input: StoreInput; segment: Segment }[] = [];
  private ingesting: Promise<void> | undefined;
  private waiters: { upTo: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  /** Records appended / stored so far (monotonic). */
  private appended = 0;
  private stored = 0;
  ingestError: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  private prepared: Promise<Segment> | undefined;
  /** Durability of the last group written: each group waits for its predecessor's. */
  private lastSynced: Promise<unknown> = Promise.resolve();
  /** The first failed write: the journal takes no more groups. */
  writeError: Error | undefined;

  constructor(
    private readonly dir: string,
    private readonly store: EvidenceStore,
    private readonly options: { segmentBytes?: number; ingestChunk?: number; ingestDelayMs?: number; onIngest?: (records: number, seconds: number) => void } = {},
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** Records appended but not yet in the store. */
  get pendingIngest(): number {
    return this.appended - this.stored;
  }

  private async segment(needed: number): Promise<Segment> {
    const limit = this.options.segmentBytes ?? 8 * 1024 * 1024;
    if (this.current && this.current.size + needed <= this.current.capacity) {
      if (!this.prepared && this.current.size > this.current.capacity / 2) this.prepared = this.create(limit);
      return this.current;
    }
    if (this.current) {
      const old = this.current;
      this.current = undefined;
      old.closed = true;
      this.retired.push(old);
      await Promise.allSettled([...old.syncs]);
      await old.fh.close();
      this.dropStoredSegments();
    }
    const next = this.prepared ?? this.create(limit);
    this.prepared = undefined;
    this.current = await next;
    if (this.current.capacity < needed) {
      // A group larger than a segment gets a segment of its own size.
      this.retired.push({ ...this.current, closed: true });
      await this.current.fh.close();
      this.current = await this.create(needed);
    }
    return this.current;
  }

  /** A new zero-filled, fsynced segment whose name is durable in the directory. */
  private async create(capacity: number): Promise<Segment> {
    const seq = Math.max(this.nextSeq, ...segments(this.dir).map((s) => s.seq + 1));
    this.nextSeq = seq + 1;
    const path = join(this.dir, `seg_${String(seq).padStart(16, '0')}.log`);
    const init = await open(path, 'wx', 0o600);
    try {
      const zeros = Buffer.alloc(Math.min(capacity, 1024 * 1024));
      for (let at = 0; at < capacity; at += zeros.length) await init.write(zeros, 0, Math.min(zeros.length, capacity - at), at);
      await init.sync();
    } finally {
      await init.close();
    }
    syncDir(this.dir); // the new name must survive a crash before any record in it is acknowledged
    // Records are written with O_DSYNC where available: one syscall writes and syncs a group.
    const fh = await open(path, O_DSYNC ? constants.O_RDWR | O_DSYNC : 'r+');
    return { seq, path, fh, size: 0, capacity, syncs: new Set(), unstored: 0, closed: false };
  }

  /** Append a group with one write and one fdatasync; resolves once the group is durable. */
  async append(inputs: readonly StoreInput[]): Promise<void> {
    await (await this.write(inputs)).synced;
  }

  /**
   * Start writing a group durably (O_DSYNC, else write + fdatasync) and return at once with a
   * promise for its durability. Several groups may be in flight; a group is reported durable only
   * when it *and every earlier group* are, so the acknowledged records are always a contiguous
   * prefix of the journal (recovery stops at the first hole). A failed write fails every later
   * group too, and the journal refuses new work.
   */
  async write(inputs: readonly StoreInput[]): Promise<{ synced: Promise<void> }> {
    if (this.writeError) throw this.writeError;
    const buffer = Buffer.concat(inputs.map(encodeRecord));
    const seg = await this.segment(buffer.length);
    const at = seg.size;
    seg.size += buffer.length;
    const own = (async () => {
      let written = 0;
      while (written < buffer.length) {
        const { bytesWritten } = await seg.fh.write(buffer, written, buffer.length - written, at + written);
        written += bytesWritten;
      }
      if (!O_DSYNC) await seg.fh.datasync();
    })();
    const synced = Promise.all([this.lastSynced, own]).then(
      () => {
        seg.unstored += inputs.length;
        this.appended += inputs.length;
        for (const input of inputs) this.backlog.push({ input, segment: seg });
        this.kick();
      },
      (err: unknown) => {
        this.writeError ??= err as Error;
        throw err;
      },
    );
    this.lastSynced = synced;
    seg.syncs.add(synced);
    void synced.then(
      () => seg.syncs.delete(synced),
      () => seg.syncs.delete(synced),
    );
    return { synced };
  }

  /** Resolves once everything appended before the call is in the store (read-your-writes). */
  caughtUp(): Promise<void> {
    if (this.ingestError) return Promise.reject(this.ingestError);
    if (this.stored >= this.appended) return Promise.resolve();
    const upTo = this.appended;
    this.kick(true);
    return new Promise((resolve, reject) => this.waiters.push({ upTo, resolve, reject }));
  }

  /**
   * Start ingesting. Small backlogs wait up to `ingestDelayMs` so that each synced store batch is
   * large: the store's fsync competes with the journal's for the disk, and fewer, larger batches
   * keep the journal's commit latency (what clients wait for) low.
   */
  private kick(now = false): void {
    if (this.ingesting || this.backlog.length === 0) return;
    const chunk = this.options.ingestChunk ?? 256;
    if (!now && this.backlog.length < chunk) {
      if (!this.timer) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.kick(true);
        }, this.options.ingestDelayMs ?? 100);
        this.timer.unref();
      }
      return;
    }
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.ingesting = this.ingest().finally(() => {
      this.ingesting = undefined;
      if (this.backlog.length > 0 && !this.ingestError) this.kick(this.waiters.length > 0);
    });
  }

  /** Store the backlog in chunks (each one synced batch), oldest first. */
  private async ingest(): Promise<void> {
    const chunk = this.options.ingestChunk ?? 256;
    while (this.backlog.length > 0) {
      // Let the requests already waiting run first: ingestion is background work.
      await new Promise((r) => setImmediate(r));
      const group = this.backlog.splice(0, chunk);
      const started = performance.now();
      try {
        await this.store.put(group.map((g) => g.input));
      } catch (err) {
        // Nothing is lost (the journal keeps it, recovery at the next start stores it); stop
        // acknowledging reads that would miss it.
        this.backlog.unshift(...group);
        this.ingestError = err as Error;
        for (const w of this.waiters.splice(0)) w.reject(this.ingestError);
        return;
      }
      this.options.onIngest?.(group.length, (performance.now() - started) / 1000);
      this.stored += group.length;
      for (const g of group) g.segment.unstored--;
      this.dropStoredSegments();
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (w.upTo <= this.stored ? w.resolve() : still.push(w));
      this.waiters = still;
    }
  }

  /** Delete retired segments whose every record is stored. */
  private dropStoredSegments(): void {
    let removed = false;
    while (this.retired.length > 0 && this.retired[0]!.unstored === 0) {
      const seg = this.retired.shift()!;
      try {
        unlinkSync(seg.path);
        removed = true;
      } catch {
        // recovery will find it and store it again (idempotent)
      }
    }
    if (removed) syncDir(this.dir);
  }

  /** Store the whole backlog, close and delete the segments (clean shutdown leaves no journal). */
  async close(): Promise<void> {
    if (this.current) await Promise.allSettled([...this.current.syncs]);
    while (this.ingesting || (this.backlog.length > 0 && !this.ingestError)) {
      if (this.ingesting) await this.ingesting;
      else this.kick(true);
    }
    if (this.timer) clearTimeout(this.timer);
    if (this.current) {
      this.current.closed = true;
      await this.current.fh.close();
      this.retired.push(this.current);
      this.current = undefined;
    }
    if (this.prepared) {
      const spare = await this.prepared.catch(() => undefined);
      this.prepared = undefined;
      if (spare) {
        await spare.fh.close();
        this.retired.push(spare);
      }
    }
    if (!this.ingestError) this.dropStoredSegments();
  }
}

/** Test helper: the raw segment paths. */
export function journalSegments(stateDir: string): string[] {
  return segments(journalDir(stateDir)).map((s) => join(journalDir(stateDir), s.name));
}
