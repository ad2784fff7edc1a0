import { performance } from 'node:perf_hooks';
import type { JsonObject } from '../canon/index.js';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import { traceIndexFields } from '../store/describe.js';
import type { EvidenceStore, StoreInput } from '../store/types.js';
import { captureFileText, traceFileText, type SignedTrace } from '../trace/index.js';
import type { DaemonMetrics } from './metrics.js';
import type { DaemonTraceSink } from './trace-sink.js';
import { withDeadline } from './pg-health.js';

/**
 * Group commit straight into the PostgreSQL evidence store: no local journal, so a decision is
 * answered only once its trace is committed in the database every replica reads. Traces that arrive
 * while a commit is in flight form the next group; each group is one `store.put` (one transaction),
 * so under load the database sees one commit for many decisions. A group whose commit fails is
 * refused as a whole: every decision in it gets the error (503 + Retry-After), none an answer.
 *
 * Groups are independent (each is durable on its own), so up to `maxInFlight` commits overlap:
 * the next group forms and commits while the previous one waits for the server's COMMIT.
 */
export interface PgSinkOptions {
  /** Decisions admitted but not yet committed, at most (default 4096); beyond it new ones get 429. */
  capacity?: number;
  /** Traces per transaction, at most (default 512). */
  maxBatch?: number;
  /** Commits in flight at once (default 2; keep it below the pool size). */
  maxInFlight?: number;
  /** Test hook: wait this long before each commit. */
  commitDelayMs?: number;
  /** Told about each commit's outcome (the readiness probe follows it). */
  onCommit?: (error: Error | undefined) => void;
  /** Why new decisions are refused at once (the database known to be unreachable), if they are. */
  refusal?: () => Error | undefined;
  /**
   * A decision's trace not confirmed committed within this long (default 3,000 ms) is answered as
   * a failure (ERR_STORE_UNAVAILABLE, 503): nothing waits for a frozen database.
   */
  commitTimeoutMs?: number;
}

interface Pending {
  inputs: StoreInput[];
  location: string;
  resolve: (location: string) => void;
  reject: (err: Error) => void;
  settled: Promise<unknown>;
}

export class PgGroupCommitSink implements DaemonTraceSink {
  private queue: Pending[] = [];
  private reserved = 0;
  private inFlight = 0;
  private scheduled = false;
  private closed = false;
  private readonly committing = new Set<Promise<void>>();
  readonly capacity: number;
  readonly durable = true;
  /** No local disk on the decision path: the database's own health is `/readyz`'s store probe. */
  readonly storageFault = undefined;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly commitDelayMs: number;

  constructor(
    private readonly store: EvidenceStore,
    private readonly metrics: DaemonMetrics,
    private readonly options: PgSinkOptions = {},
  ) {
    this.capacity = options.capacity ?? 4096;
    this.maxBatch = options.maxBatch ?? 512;
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 2);
    this.commitDelayMs = options.commitDelayMs ?? 0;
  }

  get depth(): number {
    return this.reserved;
  }

  admit(): boolean {
    const refusal = this.options.refusal?.();
    if (refusal) throw refusal;
    if (this.closed || this.reserved >= this.capacity) return false;
    this.reserved++;
    return true;
  }

  release(): void {
    if (this.reserved > 0) this.reserved--;
  }

  write(trace: SignedTrace, capture?: JsonObject): Promise<string> {
    if (this.closed) return Promise.reject(new WardError(ERROR_CODES.IO, 'trace sink is closed'));
    const location = `store:trace/${String(trace['event_id'])}`;
    const inputs: StoreInput[] = [{ kind: 'trace', bytes: Buffer.from(traceFileText(trace)), fields: traceIndexFields(trace) }];
    // A capture commits in the same transaction as its trace.
    if (capture) inputs.push({ kind: 'capture', bytes: Buffer.from(captureFileText(capture)) });
    let resolve!: (location: string) => void;
    let reject!: (err: Error) => void;
    const done = new Promise<string>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.queue.push({ inputs, location, resolve, reject, settled: done.then(noop, noop) });
    this.schedule();
    // The answer waits for the commit at most this long: past it the outcome is unknown, and an
    // unknown outcome is answered as a failure (the trace may still land; it then records a
    // decision nobody received, never the reverse).
    return withDeadline(done, this.options.commitTimeoutMs ?? 3000, 'trace commit').catch((err: unknown) => {
      if (isWardError(err) && err.code === ERROR_CODES.STORE_UNAVAILABLE && /no commit confirmed/.test(err.message)) {
        this.metrics.traceWriteErrors.inc();
        this.options.onCommit?.(err);
      }
      throw err;
    });
  }

  /** Start a commit on the next turn of the event loop, so requests parsed in this turn join it. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.commit();
    });
  }

  private commit(): Promise<void> {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return Promise.resolve();
    const group = this.queue.splice(0, this.maxBatch);
    this.inFlight++;
    const running = this.commitGroup(group);
    this.committing.add(running);
    void running.then(() => this.committing.delete(running));
    // More queued than one group takes, and room for another commit: start it now.
    this.schedule();
    return running;
  }

  private async commitGroup(group: Pending[]): Promise<void> {
    const started = performance.now();
    try {
      if (this.commitDelayMs > 0) await new Promise((r) => setTimeout(r, this.commitDelayMs));
      const put = await this.store.put(group.flatMap((p) => p.inputs));
      this.metrics.traceWriteLatency.observe((performance.now() - started) / 1000);
      this.metrics.traceBatchSize.observe(group.length);
      // A conflict is an event id already stored with other bytes: that decision's trace is not the
      // stored one, so it is refused; the rest of the group committed and is answered.
      const conflicted = new Set(put.conflicts.map((c) => c.id));
      for (const p of group) {
        const eventId = p.location.slice('store:trace/'.length);
        if (conflicted.has(eventId)) p.reject(commitError(new WardError(ERROR_CODES.STORE_INVALID, `trace ${eventId} is already stored with different bytes`)));
        else p.resolve(p.location);
      }
      this.options.onCommit?.(undefined);
    } catch (err) {
      this.metrics.traceWriteErrors.inc();
      const error = commitError(err);
      for (const p of group) p.reject(error);
      this.options.onCommit?.(error);
    } finally {
      this.reserved = Math.max(0, this.reserved - group.length);
      this.inFlight--;
      this.schedule();
    }
  }

  /**
   * Read-your-writes holds already: a decision is answered only after its commit, so every answered
   * decision is readable by any replica. Queries do not wait for commits in flight (one stuck on a
   * lock would hold them up to the statement timeout).
   */
  async caughtUp(): Promise<void> {}

  /** Commit what is queued (each decision gets its answer or its error), then refuse new writes. */
  async close(): Promise<void> {
    while (this.queue.length > 0 || this.committing.size > 0) {
      await Promise.all([...this.committing, ...this.queue.map((p) => p.settled)]);
    }
    this.closed = true;
  }
}

function noop(): void {}

/**
 * Why a group was refused, as the client sees it: the database unreachable or saturated stays
 * what it is (503 + Retry-After); anything else is reported as the store being unavailable too,
 * because the decision was made but cannot be recorded, and an unrecorded decision is no answer.
 */
function commitError(err: unknown): Error {
  if (isWardError(err) && (err.code === ERROR_CODES.STORE_UNAVAILABLE || err.code === ERROR_CODES.STORE_BUSY)) return err;
  return new WardError(ERROR_CODES.STORE_UNAVAILABLE, `trace commit failed: ${(err as Error)?.message ?? String(err)}`, {
    cause: err,
    hint: 'the decision was not recorded and is not answered; retry after the Retry-After delay',
  });
}
