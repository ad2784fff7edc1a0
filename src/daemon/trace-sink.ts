import { performance } from 'node:perf_hooks';
import type { JsonObject } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { storageFaultCode, storageFullError, type StorageFaultState } from '../state/storage-fault.js';
import { traceIndexFields } from '../store/describe.js';
import type { StoreInput } from '../store/types.js';
import type { Journal } from './journal.js';
import { captureFileText, traceFileText, type SignedTrace } from '../trace/index.js';
import type { TraceSink } from '../decision/trace-sink.js';
import type { DaemonMetrics } from './metrics.js';

/**
 * Where the daemon's decisions become evidence. `write` resolves only once the trace is durable
 * (its location), so a caller that answers after `write` never answers for a trace a crash could
 * lose. The runtime's `TraceSink` plus admission control.
 */
export interface DaemonTraceSink extends TraceSink {
  write(trace: SignedTrace, capture?: JsonObject): Promise<string>;
  /**
   * Admission control: reserve room for one decision before deciding it. False when the write
   * path is behind (the queue is full): the request is refused (429) instead of piling up.
   * Throws (a WardError answered 503 with Retry-After) when nothing can be written at all: the
   * disk is full or failing (ERR_STORAGE_FULL), the store fails (ERR_STORE_UNAVAILABLE) — a state,
   * not load, so never "overload".
   */
  admit(): boolean;
  /** Give back a reservation that will not be written (the request failed before its trace). */
  release(): void;
  readonly depth: number;
  readonly capacity: number;
  readonly durable: boolean;
  /** The storage fault episode under way (the disk is full or failing), if any: not ready. */
  readonly storageFault: StorageFaultState | undefined;
  /** Resolves once every trace written so far can be read from the store. */
  caughtUp(): Promise<void>;
  /** Write what is queued, then refuse new writes. */
  close(): Promise<void>;
}

interface Pending {
  inputs: StoreInput[];
  location: string;
  resolve: (location: string) => void;
  reject: (err: Error) => void;
}

export interface GroupCommitOptions {
  /** Decisions admitted but not yet durable, at most (default 4096). */
  capacity?: number;
  /** Records journaled but not yet indexed in the store, at most, before new decisions get 429 (default 50,000; they are held in memory until indexed). */
  maxIngestBacklog?: number;
  /** Records per journal append, at most (default 1024). */
  maxBatch?: number;
  /** Test hook: wait this long before each commit (simulates a slow disk). */
  commitDelayMs?: number;
}

/**
 * Group commit into the daemon's journal. Traces that arrive while commits are in flight wait for
 * the next one; each commit is one synchronized write for the whole group, so under load
 * the groups grow by themselves and durability costs one fsync per group, not per decision. The
 * journal then feeds the store (`Journal`), off the response path.
 */
export class GroupCommitSink implements DaemonTraceSink {
  private queue: Pending[] = [];
  private reserved = 0;
  private committing = false;
  private scheduled = false;
  private closed = false;
  readonly capacity: number;
  readonly durable = true;
  private readonly maxBatch: number;
  private readonly maxBacklog: number;
  private readonly commitDelayMs: number;
  private readonly maxSyncs = 4;
  private readonly syncing = new Set<Promise<void>>();

  constructor(
    private readonly journal: Journal,
    private readonly metrics: DaemonMetrics,
    options: GroupCommitOptions = {},
  ) {
    this.capacity = options.capacity ?? 4096;
    this.maxBatch = options.maxBatch ?? 1024;
    this.maxBacklog = options.maxIngestBacklog ?? 50_000;
    this.commitDelayMs = options.commitDelayMs ?? 0;
  }

  get depth(): number {
    return this.reserved;
  }

  get storageFault(): StorageFaultState | undefined {
    return this.journal.faults.current;
  }

  admit(): boolean {
    const refusal = this.journal.refusal();
    if (refusal) throw refusal;
    if (this.closed || this.reserved >= this.capacity || this.journal.pendingIngest >= this.maxBacklog || this.journal.writeError) return false;
    this.reserved++;
    return true;
  }

  release(): void {
    if (this.reserved > 0) this.reserved--;
  }

  write(trace: SignedTrace, capture?: JsonObject): Promise<string> {
    if (this.closed) return Promise.reject(new WardError(ERROR_CODES.IO, 'trace sink is closed'));
    const location = `store:trace/${String(trace['event_id'])}`;
    const done = new Promise<string>((resolve, reject) => {
      // The index's fields go along, so the store thread does not parse the trace it was serialized from.
      const inputs: StoreInput[] = [{ kind: 'trace', bytes: Buffer.from(traceFileText(trace)), fields: traceIndexFields(trace) }];
      // A capture goes into the same group (the same fdatasync) as its trace.
      if (capture) inputs.push({ kind: 'capture', bytes: Buffer.from(captureFileText(capture)) });
      this.queue.push({ inputs, location, resolve, reject });
    });
    this.schedule();
    return done;
  }

  /** Start a commit on the next turn of the event loop, so requests parsed in this turn join it. */
  private schedule(): void {
    if (this.committing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.commit();
    });
  }

  /**
   * Write the queued group to the journal (a synchronized write); the next group may start while
   * it is on its way to the disk (at most `maxSyncs` in flight). Each group is answered when it and
   * every earlier group are durable.
   */
  private async commit(): Promise<void> {
    if (this.committing || this.queue.length === 0) return;
    this.committing = true;
    const group = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
    this.queue = this.queue.length <= this.maxBatch ? [] : this.queue.slice(this.maxBatch);
    const started = performance.now();
    const fail = (err: unknown) => {
      this.metrics.traceWriteErrors.inc();
      const code = storageFaultCode(err);
      const error = code ? storageFullError('trace write failed', code, err) : new WardError(ERROR_CODES.IO, `trace write failed: ${(err as Error).message}`, { cause: err });
      for (const p of group) p.reject(error);
    };
    const done = () => {
      this.reserved = Math.max(0, this.reserved - group.length);
    };
    try {
      if (this.commitDelayMs > 0) await new Promise((r) => setTimeout(r, this.commitDelayMs));
      const { synced } = await this.journal.write(group.flatMap((p) => p.inputs));
      const tracked = synced.then(
        () => {
          this.metrics.traceWriteLatency.observe((performance.now() - started) / 1000);
          this.metrics.traceBatchSize.observe(group.length);
          for (const p of group) p.resolve(p.location);
          done();
        },
        (err: unknown) => {
          fail(err);
          done();
        },
      );
      this.syncing.add(tracked);
      void tracked.then(() => this.syncing.delete(tracked));
      if (this.syncing.size >= this.maxSyncs) await Promise.race(this.syncing);
    } catch (err) {
      fail(err);
      done();
    } finally {
      this.committing = false;
    }
    if (this.queue.length > 0) this.schedule();
  }

  /** Wait until every decision read so far is in the store (for queries: read-your-writes). */
  async caughtUp(): Promise<void> {
    while (this.queue.length > 0 || this.committing) await new Promise((r) => setTimeout(r, 1));
    await Promise.all([...this.syncing]);
    await this.journal.caughtUp();
  }

  async close(): Promise<void> {
    while (this.queue.length > 0 || this.committing) {
      if (!this.committing) await this.commit();
      else await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all([...this.syncing]);
    this.closed = true;
    await this.journal.close();
  }
}

/**
 * UNSAFE, benchmarks only (`--no-trace-durability`): decisions are signed but their traces are
 * discarded. Gives the baseline the durable path is measured against; never use it for real.
 */
export class DiscardingSink implements DaemonTraceSink {
  readonly capacity = Number.POSITIVE_INFINITY;
  readonly durable = false;
  readonly depth = 0;
  readonly storageFault = undefined;
  admit(): boolean {
    return true;
  }
  release(): void {}
  async caughtUp(): Promise<void> {}
  write(trace: SignedTrace): Promise<string> {
    return Promise.resolve(`discarded:${String(trace['event_id'])}`);
  }
  async close(): Promise<void> {}
}
