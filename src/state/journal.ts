import { constants, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive, syncDir } from './atomic-file.js';
import { writeFully as writeFullyAsync, writeFullySync } from './fs-seam.js';
import { decodeSegmentBytes, encodeFrames, SEGMENT_MAGIC, type DecodedFrames, type JournalRecord } from './journal-frame.js';

export { decodeFrames, decodeSegmentBytes, encodeFrame, encodeFrames, FRAME_HEADER, SEGMENT_MAGIC, type JournalRecord } from './journal-frame.js';

/**
 * Ward's write-ahead journal: the durable home of a decision's trace between its answer and the
 * place it is kept (the daemon's store, the proxy's and the SDK's trace files). One format
 * (journal-frame.ts) and one writer for every host.
 *
 * - Segments (`seg_<seq>_<pid>.log`) are preallocated — header written, zero-filled, fsynced, name
 *   fsynced in the directory — before use, so an append overwrites allocated blocks and its sync
 *   does not wait for a file-size change to be journaled by the file system.
 * - `fsync`: records are written through an O_DSYNC descriptor (one syscall writes and syncs a
 *   group; elsewhere write + fdatasync). Appends that arrive while groups are being written join
 *   the next group (group commit); up to `maxInFlight` groups are on their way to the disk at
 *   once, and a group is acknowledged only when it *and every earlier group* are durable, so the
 *   acknowledged records are always a prefix of the journal (a reader stops at the first hole).
 * - `write`: records are written with one positional write on the calling thread (`appendNow`) and
 *   acknowledged once the kernel has them (survives a crash of the process, not a power loss); an
 *   fdatasync follows in the background, one covering every write before it.
 * - A full segment is retired: once its writes have settled, `checkpoint` (the user's) makes its
 *   records durable where they belong, then the segment is deleted. A segment whose checkpoint
 *   fails stays for recovery. `leftoverSegments` lists what a process that died left behind.
 * - `shared` journals live in a directory several processes write to (the proxy's, the SDK's):
 *   names carry the writer's pid and recovery leaves the segments of live writers alone. An
 *   exclusive journal (the daemon's; its state directory is locked) recovers everything.
 */
export type JournalSync = 'fsync' | 'write';

export interface JournalOptions {
  /** When an append resolves: `fsync` (default) once durable, `write` once the kernel has it. */
  sync?: JournalSync;
  /** Preallocated size of each segment (default 8 MiB); a larger group gets a segment of its own size. */
  segmentBytes?: number;
  /** Groups being written at once, at most (default 4; `fsync` only). */
  maxInFlight?: number;
  /** Records per group, at most (default 4096). */
  maxGroupRecords?: number;
  /** Several processes write into this directory. */
  shared?: boolean;
  /**
   * Make a retired segment's records durable elsewhere; the segment is deleted once it resolves
   * (kept for recovery if it rejects). Called after every append into the segment has resolved.
   */
  checkpoint?: (segment: SegmentRef) => Promise<void>;
}

export interface SegmentRef {
  readonly seq: number;
  readonly path: string;
}

interface Segment extends SegmentRef {
  fh: FileHandle;
  /** Where the next group goes (bytes from the start of the file, after the header). */
  size: number;
  capacity: number;
  /** Writes and syncs into this segment not yet settled. */
  pending: Set<Promise<unknown>>;
}

interface Queued {
  records: readonly JournalRecord[];
  resolve: (segment: SegmentRef) => void;
  reject: (err: Error) => void;
}

/** Synchronized-data writes (Linux, macOS); elsewhere each group is followed by an fdatasync. */
const O_DSYNC: number | undefined = (constants as { O_DSYNC?: number }).O_DSYNC;
const SEGMENT = /^seg_(\d{16})(?:_(\d+))?\.log$/;
const HEADER = SEGMENT_MAGIC.length;
/** Segments this process created: a leftover with this process's pid is a previous process's (pid reuse, pid 1 in containers). */
const ownSegments = new Set<string>();

export class Journal {
  private current: Segment | undefined;
  private prepared: Promise<Segment> | undefined;
  private nextSeq = 1;
  private queue: Queued[] = [];
  private inFlight = 0;
  /** A group is being assigned its place (segment switch in progress): later groups wait. */
  private placing: Promise<void> | undefined;
  /** Durability of the last group started: each group waits for its predecessor's. */
  private lastDurable: Promise<unknown> = Promise.resolve();
  private readonly retiring = new Set<Promise<void>>();
  /** `write` mode: a background fdatasync is running / another one is needed after it. */
  private bgSync: Promise<void> | undefined;
  private bgSyncAgain = false;
  private closed = false;
  /** A failed write whose group (or a later one) is still in flight: appends are refused until they settle. */
  writeError: Error | undefined;
  readonly sync: JournalSync;
  private readonly segmentBytes: number;
  private readonly maxInFlight: number;
  private readonly maxGroupRecords: number;

  constructor(
    readonly dir: string,
    private readonly options: JournalOptions = {},
  ) {
    this.sync = options.sync ?? 'fsync';
    this.segmentBytes = options.segmentBytes ?? 8 * 1024 * 1024;
    this.maxInFlight = this.sync === 'fsync' ? Math.max(1, options.maxInFlight ?? 4) : 1;
    this.maxGroupRecords = Math.max(1, options.maxGroupRecords ?? 4096);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** Preallocate the first segment now, off the first append's path. A failure resurfaces on append. */
  prepare(): void {
    void this.preallocate().catch(() => undefined);
  }

  /**
   * Have a preallocated segment open for appends (or ready for the next switch); rejects with the
   * file system's error when one cannot be made (a full disk: ENOSPC). The daemon awaits it at
   * start (refusing to serve without room for its journal) and while a storage fault lasts (the
   * probe that ends it).
   */
  async preallocate(): Promise<void> {
    if (this.current || this.closed) return;
    const next = this.prepared ?? this.prepareNext();
    let seg: Segment;
    try {
      seg = await next;
    } catch (err) {
      if (this.prepared === next) this.prepared = undefined; // the next call tries again
      throw err;
    }
    // Open for appends at once (so `appendNow` can write), unless a group got there first.
    if (!this.current && this.prepared === next && !this.placing && !this.closed) {
      this.current = seg;
      this.prepared = undefined;
    }
  }

  /** Start creating the next segment in the background. */
  private prepareNext(): Promise<Segment> {
    const next = this.create(this.segmentBytes);
    next.catch(() => undefined);
    this.prepared = next;
    return next;
  }

  /**
   * The error that refuses appends, if one still does. A failed group refuses appends until nothing
   * is in flight; from then on the next append starts a new segment (`abandon`). Read here, that
   * hand-over cannot be missed whatever order the failed groups settled in.
   */
  get failed(): Error | undefined {
    if (this.writeError && this.inFlight === 0 && !this.placing && !this.closed) this.abandon();
    return this.writeError;
  }

  /** True when `appendNow` can write without waiting (`write` mode, a segment open). */
  get ready(): boolean {
    return this.current !== undefined && !this.placing && this.queue.length === 0 && this.inFlight === 0;
  }

  /**
   * `write` mode: write the records now, on this thread, into the open segment, and return it.
   * Undefined when that is not possible right now (no segment yet, a full one, writes queued):
   * use `append`. Throws the write's error (the next append goes to a new segment).
   */
  appendNow(records: readonly JournalRecord[]): SegmentRef | undefined {
    const failed = this.failed;
    if (failed) throw failed;
    if (this.sync !== 'write' || !this.ready || this.closed) return undefined;
    const seg = this.current!;
    const bytes = encodeFrames(records);
    if (seg.size + bytes.length > seg.capacity) return undefined;
    try {
      writeFullySync(seg.fh.fd, bytes, HEADER + seg.size);
    } catch (err) {
      this.abandon();
      throw err;
    }
    seg.size += bytes.length;
    if (!this.prepared && seg.size > seg.capacity / 2) this.prepareNext();
    this.syncInBackground(seg);
    return seg;
  }

  /** Append records as one unit of a group; resolves (with their segment) once acknowledged. */
  append(records: readonly JournalRecord[]): Promise<SegmentRef> {
    const failed = this.failed;
    if (failed) return Promise.reject(failed);
    if (this.closed) return Promise.reject(new Error('journal is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ records, resolve, reject });
      this.pump();
    });
  }

  /** Start groups while there is room in flight. */
  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight && !this.placing) {
      let n = 0;
      let records = 0;
      while (n < this.queue.length && (n === 0 || records + this.queue[n]!.records.length <= this.maxGroupRecords)) records += this.queue[n++]!.records.length;
      const group = this.queue.splice(0, n);
      this.startGroup(group);
    }
  }

  private startGroup(group: Queued[]): void {
    this.inFlight++;
    const bytes = encodeFrames(group.length === 1 ? group[0]!.records : group.flatMap((q) => q.records));
    const cur = this.current;
    let own: Promise<Segment>;
    if (cur && cur.size + bytes.length <= cur.capacity) own = this.writeAt(cur, bytes);
    else {
      // A segment switch: no other group is placed until this one has its place.
      const placed = this.segmentFor(bytes.length).then((s) => ({ written: this.writeAt(s, bytes) }));
      this.placing = placed.then(
        () => undefined,
        () => undefined,
      );
      void this.placing.then(() => {
        this.placing = undefined;
        if (this.writeError && this.inFlight === 0) this.abandon();
        this.pump();
      });
      own = placed.then((p) => p.written);
    }
    const durable = Promise.all([this.lastDurable, own]).then(([, s]) => s);
    this.lastDurable = durable;
    void durable.then(
      (s) => {
        this.inFlight--;
        for (const q of group) q.resolve(s);
        this.pump();
      },
      (err: unknown) => {
        this.inFlight--;
        this.writeError ??= err as Error;
        for (const q of group) q.reject(this.writeError);
        for (const q of this.queue.splice(0)) q.reject(this.writeError);
        if (this.inFlight === 0 && !this.placing) this.abandon();
      },
    );
  }

  /**
   * After a failed write, once nothing is in flight: the segment's acknowledged records are
   * checkpointed as at any retirement, and the next append starts a new segment (so it never sits
   * behind the failed one, where recovery would stop). Until then every append is refused.
   */
  private abandon(): void {
    const cur = this.current;
    this.current = undefined;
    if (cur) this.retire(cur);
    this.lastDurable = Promise.resolve();
    this.writeError = undefined;
  }

  /** Reserve the next bytes of `seg` and write there (tracked at once, so a retirement waits for it). */
  private writeAt(seg: Segment, bytes: Buffer): Promise<Segment> {
    const at = HEADER + seg.size;
    seg.size += bytes.length;
    // The next segment is made ready while this one fills, off the path of the group that needs it.
    if (!this.prepared && seg === this.current && seg.size > seg.capacity / 2 && !this.closed) this.prepareNext();
    const write = (async () => {
      if (this.sync === 'write') {
        writeFullySync(seg.fh.fd, bytes, at);
        this.syncInBackground(seg);
        return;
      }
      await writeFullyAsync(seg.fh, bytes, at);
      if (!O_DSYNC) await seg.fh.datasync();
    })();
    track(seg, write);
    return write.then(() => seg);
  }

  /** The segment for a group of `needed` bytes: retire the current one, switch to the prepared one. */
  private async segmentFor(needed: number): Promise<Segment> {
    const cur = this.current;
    if (cur && cur.size + needed <= cur.capacity) return cur;
    if (cur) {
      this.current = undefined;
      this.retire(cur);
    }
    let next: Segment;
    const prepared = this.prepared;
    this.prepared = undefined; // a failed preparation is not reused: the next switch tries again
    next = await (prepared ?? this.create(this.segmentBytes));
    if (next.capacity < needed) {
      // A group larger than a segment gets a segment of its own size.
      this.retire(next);
      next = await this.create(needed);
    }
    this.current = next;
    return next;
  }

  /** Close a segment once its writes settle, checkpoint it, delete it. */
  private retire(seg: Segment): void {
    const work = (async () => {
      while (seg.pending.size > 0) await Promise.allSettled([...seg.pending]);
      await seg.fh.close().catch(() => undefined);
      // Let every reaction to the segment's acknowledged appends run before its checkpoint.
      await new Promise((r) => setImmediate(r));
      if (seg.size > 0 && this.options.checkpoint) await this.options.checkpoint(seg);
      removeSegment(seg.path);
    })()
      .catch(() => undefined) // kept on disk: recovery replays it
      .finally(() => ownSegments.delete(seg.path));
    this.retiring.add(work);
    void work.finally(() => this.retiring.delete(work));
  }

  /** A new preallocated segment whose name is durable in the directory; opened for appends. */
  private async create(capacity: number): Promise<Segment> {
    let init: FileHandle | undefined;
    let seq = 0;
    let path = '';
    for (;;) {
      seq = Math.max(this.nextSeq, ...listSegments(this.dir).map((s) => s.seq + 1));
      this.nextSeq = seq + 1;
      path = join(this.dir, `seg_${String(seq).padStart(16, '0')}_${process.pid}.log`);
      try {
        init = await open(path, 'wx', 0o600);
        ownSegments.add(path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    try {
      try {
        // Every byte is written (a short write continues; one that makes no progress is ENOSPC), so a
        // segment in use never grows: a full disk shows here, before any record is acknowledged.
        await writeFullyAsync(init, SEGMENT_MAGIC, 0);
        const zeros = Buffer.alloc(Math.min(capacity, 1024 * 1024));
        for (let at = 0; at < capacity; at += zeros.length) await writeFullyAsync(init, zeros.subarray(0, Math.min(zeros.length, capacity - at)), HEADER + at);
        await init.sync();
      } finally {
        await init.close();
      }
      syncDir(this.dir); // the new name must survive a crash before any record in it is acknowledged
      const fh = await open(path, this.sync === 'fsync' && O_DSYNC ? constants.O_RDWR | O_DSYNC : 'r+');
      return { seq, path, fh, size: 0, capacity, pending: new Set() };
    } catch (err) {
      // A segment that could not be preallocated holds nothing: it goes, so a full disk does not
      // leave a trail of empty segments behind.
      ownSegments.delete(path);
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
      throw err;
    }
  }

  /**
   * `write` mode: fdatasync in the background, one call covering every write before it. It starts
   * in the event loop's next check phase, not on the appender's turn: submitting it costs the
   * caller tens of microseconds (a promise and a thread-pool request), and the MCP proxy forwards
   * a call right after its append (bench/mcp.bench.js, concurrency 1).
   */
  private syncInBackground(seg: Segment): void {
    if (this.bgSync) {
      this.bgSyncAgain = true;
      return;
    }
    // A failed background sync is not an acknowledgement lost: the checkpoint syncs the records'
    // destination before the segment goes.
    const run = new Promise<void>((r) => setImmediate(r)).then(() => seg.fh.datasync()).catch(() => undefined);
    track(seg, run);
    this.bgSync = run.then(() => {
      this.bgSync = undefined;
      if (this.bgSyncAgain) {
        this.bgSyncAgain = false;
        if (this.current) this.syncInBackground(this.current);
      }
    });
  }

  /** Wait for appends in flight, retire every segment (checkpoint, delete). Takes no more records. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.queue.length > 0 || this.inFlight > 0 || this.placing) await this.lastDurable.catch(() => undefined).then(() => this.placing);
    while (this.bgSync) await this.bgSync;
    if (this.current) this.retire(this.current);
    this.current = undefined;
    if (this.prepared) {
      const spare = await this.prepared.catch(() => undefined);
      this.prepared = undefined;
      if (spare) this.retire(spare);
    }
    while (this.retiring.size > 0) await Promise.allSettled([...this.retiring]);
  }
}

function track(seg: Segment, work: Promise<unknown>): void {
  seg.pending.add(work);
  const done = () => seg.pending.delete(work);
  void work.then(done, done);
}

export interface SegmentFile {
  seq: number;
  path: string;
  /** The writer's pid (absent in segments written before journal version 1). */
  pid: number | undefined;
}

/** The segment files of a journal directory, oldest first. */
export function listSegments(dir: string): SegmentFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: SegmentFile[] = [];
  for (const name of names) {
    const m = SEGMENT.exec(name);
    if (m) out.push({ seq: Number(m[1]), path: join(dir, name), pid: m[2] === undefined ? undefined : Number(m[2]) });
  }
  return out.sort((a, b) => a.seq - b.seq || a.path.localeCompare(b.path));
}

/**
 * Segments left to recover, oldest first: all of them for an exclusive journal; for a shared one,
 * those whose writer is gone (another live process is still using its own).
 */
export function leftoverSegments(dir: string, options: { shared?: boolean } = {}): SegmentFile[] {
  if (!options.shared) return listSegments(dir);
  return listSegments(dir).filter((s) => !ownSegments.has(s.path) && (s.pid === undefined || s.pid === process.pid || !processAlive(s.pid)));
}

/** A segment file's intact records (stops at the first torn or corrupt frame). */
export function readSegment(path: string): DecodedFrames {
  return decodeSegmentBytes(readFileSync(path));
}

/** Delete a segment whose records are durable elsewhere, and make the deletion durable. */
export function removeSegment(path: string): void {
  unlinkSync(path);
  syncDir(join(path, '..'));
}

