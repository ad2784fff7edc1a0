import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeFrames, encodeFrame, Journal as StateJournal, leftoverSegments, readSegment, removeSegment, type JournalRecord } from '../state/journal.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { StorageFaults, storageFaultCode } from '../state/storage-fault.js';
import type { EvidenceStore, StoreInput } from '../store/types.js';

/**
 * The daemon's journal: Ward's journal (`state/journal.ts`, exclusive to the daemon that owns the
 * state directory) feeding the store. A group of traces is appended with one synchronized write;
 * only then are the decisions of that group answered. The store ingests the journal in the
 * background (large synced batches, idempotent by content digest), and a segment is deleted once
 * everything in it is stored. After a crash, `recoverJournal` stores whatever the segments hold
 * before the daemon serves again, so an answered decision always ends up in the store.
 *
 * Record types are the store's entry kinds: 0 trace, 1 capture, 2 runpack, 3 pack; the payload is
 * the entry's bytes.
 */
const KINDS: StoreInput['kind'][] = ['trace', 'capture', 'runpack', 'pack'];

export function journalDir(stateDir: string): string {
  return join(stateDir, 'journal');
}

function toRecord(input: StoreInput): JournalRecord {
  return { type: KINDS.indexOf(input.kind), payload: input.bytes };
}

/** Store entries from records; a record of a type the daemon does not write ends the run (corrupt). */
function toInputs(records: readonly JournalRecord[]): StoreInput[] {
  const out: StoreInput[] = [];
  for (const r of records) {
    const kind = KINDS[r.type];
    if (!kind) break;
    out.push({ kind, bytes: r.payload });
  }
  return out;
}

/** One record's frame (tests and tools). */
export function encodeRecord(input: StoreInput): Buffer {
  return encodeFrame(KINDS.indexOf(input.kind), input.bytes);
}

/** The intact records of a run of frames, in order; stops at the first torn or corrupt record. */
export function decodeSegment(bytes: Buffer): { records: StoreInput[]; torn: boolean } {
  const { records, torn } = decodeFrames(bytes);
  const inputs = toInputs(records);
  return { records: inputs, torn: torn || inputs.length < records.length };
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
 * before serving: it is how decisions answered before a crash reach the store. Reads segments of
 * this version and of the journal before it.
 */
export async function recoverJournal(stateDir: string, store: EvidenceStore, chunk = 512): Promise<RecoveryReport> {
  const report: RecoveryReport = { segments: 0, records: 0, stored: 0, duplicates: 0, torn: 0 };
  for (const seg of leftoverSegments(journalDir(stateDir))) {
    const decoded = readSegment(seg.path);
    const records = toInputs(decoded.records);
    report.segments++;
    report.records += records.length;
    if (decoded.torn || records.length < decoded.records.length) report.torn++;
    for (let i = 0; i < records.length; i += chunk) {
      const put = await store.put(records.slice(i, i + chunk));
      report.stored += put.stored.length;
      report.duplicates += put.duplicates;
    }
    removeSegment(seg.path);
  }
  return report;
}

export interface DaemonJournalOptions {
  segmentBytes?: number;
  ingestChunk?: number;
  ingestDelayMs?: number;
  onIngest?: (records: number, seconds: number) => void;
  /** Storage fault episodes (disk full): reported here, ended by the journal's probe. */
  faults?: StorageFaults;
  /** While a write or ingestion is failing: retry this often (ms, default 500). */
  retryMs?: number;
}

/**
 * Appends groups of records durably and feeds them to the store. A segment's checkpoint waits
 * until every record appended so far is stored; a failed store keeps the segments for recovery.
 */
export class Journal {
  private readonly journal: StateJournal;
  private backlog: StoreInput[] = [];
  private ingesting: Promise<void> | undefined;
  private waiters: { upTo: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  /** Records appended / stored so far (monotonic). */
  private appended = 0;
  private stored = 0;
  ingestError: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private closed = false;
  readonly faults: StorageFaults;

  constructor(
    dir: string,
    private readonly store: EvidenceStore,
    private readonly options: DaemonJournalOptions = {},
  ) {
    this.faults = options.faults ?? new StorageFaults();
    this.journal = new StateJournal(dir, {
      sync: 'fsync',
      ...(options.segmentBytes !== undefined ? { segmentBytes: options.segmentBytes } : {}),
      checkpoint: () => this.caughtUp(),
    });
    this.journal.prepare();
  }

  /**
   * Preallocate the first segment; rejects with ERR_STORAGE_FULL when the disk has no room for it
   * (the daemon refuses to start then, instead of reporting ready with nowhere to write).
   */
  async preallocate(): Promise<void> {
    try {
      await this.journal.preallocate();
    } catch (err) {
      const code = storageFaultCode(err);
      const what = `cannot preallocate a journal segment in ${this.journal.dir}`;
      if (code) throw new WardError(ERROR_CODES.STORAGE_FULL, `${what}: ${(err as Error).message}`, { cause: err, details: { ward_error: ERROR_CODES.STORAGE_FULL, errno: code }, hint: 'free space on the state directory\'s file system (each segment takes 8 MiB), then start again' });
      throw new WardError(ERROR_CODES.IO, `${what}: ${(err as Error).message}`, { cause: err });
    }
  }

  get writeError(): Error | undefined {
    return this.journal.failed;
  }

  /**
   * Why a new decision cannot be written now, if it cannot: a storage fault episode is open
   * (ERR_STORAGE_FULL), or the store fails for another reason (ERR_STORE_UNAVAILABLE). Both are
   * 503 with Retry-After; both end by themselves once the probe's retry succeeds.
   */
  refusal(): WardError | undefined {
    const fault = this.faults.error();
    if (fault) return fault;
    if (this.ingestError) return new WardError(ERROR_CODES.STORE_UNAVAILABLE, `the store is failing: ${this.ingestError.message}; decisions are refused until it stores again`, { cause: this.ingestError });
    return undefined;
  }

  /** Records appended but not yet in the store. */
  get pendingIngest(): number {
    return this.appended - this.stored;
  }

  /** Append a group with one synchronized write; resolves once the group is durable. */
  async append(inputs: readonly StoreInput[]): Promise<void> {
    await (await this.write(inputs)).synced;
  }

  /**
   * Start writing a group durably and return at once with a promise for its durability. Several
   * groups may be in flight; a group is reported durable only when it and every earlier group are.
   * A failed write fails every later group too, and the journal refuses new work.
   */
  async write(inputs: readonly StoreInput[]): Promise<{ synced: Promise<void> }> {
    const failed = this.journal.failed;
    if (failed) throw failed;
    const synced = this.journal.append(inputs.map(toRecord)).then(
      () => {
        this.appended += inputs.length;
        for (const input of inputs) this.backlog.push(input);
        this.kick();
      },
      (err: unknown) => {
        if (this.faults.report('journal', err)) this.probeSoon();
        throw err;
      },
    );
    return { synced };
  }

  /**
   * While a write or ingestion fails: retry every `retryMs` — preallocate a journal segment (the
   * journal's probe), store the backlog (the store's) — until both succeed; each success ends its
   * part of the episode. Nothing acknowledged is dropped meanwhile: the backlog stays in memory
   * and in the journal's segments (kept for recovery when their checkpoint failed).
   */
  private probeSoon(): void {
    if (this.probeTimer || this.closed) return;
    this.probeTimer = setTimeout(() => {
      void this.probe().finally(() => {
        this.probeTimer = undefined;
        if (this.faults.has('journal') || this.ingestError) this.probeSoon();
      });
    }, this.options.retryMs ?? 500);
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    if (this.faults.has('journal')) {
      try {
        await this.journal.preallocate();
        this.faults.clear('journal');
      } catch (err) {
        this.faults.report('journal', err);
      }
    }
    if (this.ingestError && !this.ingesting && this.backlog.length > 0) {
      this.ingesting = this.ingest().finally(() => {
        this.ingesting = undefined;
      });
      await this.ingesting;
    } else if (this.ingestError && this.backlog.length === 0) {
      this.ingestError = undefined;
      this.faults.clear('ingest');
    }
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
        await this.store.put(group);
      } catch (err) {
        // Nothing is lost (the backlog keeps it and is retried; the journal keeps it for recovery
        // at the next start); stop acknowledging reads that would miss it, and new decisions.
        this.backlog.unshift(...group);
        this.ingestError = err as Error;
        this.faults.report('ingest', err);
        for (const w of this.waiters.splice(0)) w.reject(this.ingestError);
        this.probeSoon();
        return;
      }
      if (this.ingestError) {
        this.ingestError = undefined;
        this.faults.clear('ingest');
      }
      this.options.onIngest?.(group.length, (performance.now() - started) / 1000);
      this.stored += group.length;
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (w.upTo <= this.stored ? w.resolve() : still.push(w));
      this.waiters = still;
    }
  }

  /** Store the whole backlog, close and delete the segments (clean shutdown leaves no journal). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    await this.journal.close();
    if (this.timer) clearTimeout(this.timer);
  }
}

