import { Worker } from 'node:worker_threads';
import type { TelemetryConfig } from './config.js';
import type { DecisionRecord } from './decision-record.js';
import { addLoss, lossOf, lossOutputs, NO_LOSS, type TelemetryItem, type TelemetrySink, type TelemetryStats } from './items.js';
import type { MetricSnapshot } from './metric-snapshot.js';
import type { MetricsSource } from './otlp-metrics.js';
import { bounded } from './recorder.js';

/** To the telemetry thread. */
export type ToTelemetryThread = { type: 'items'; items: readonly TelemetryItem[] } | { type: 'snapshot'; id: number; metrics: readonly MetricSnapshot[] } | { type: 'shutdown'; flushMs: number };

/** From the telemetry thread. */
export type FromTelemetryThread =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  /**
   * `done`: items taken since the last message (the bound on what is in flight); the exporters'
   * counts; `held`: what waits in the exporters' queues (lost with the thread if it fails).
   */
  | { type: 'stats'; done: number; stats: TelemetryStats; held: TelemetryStats }
  | { type: 'collect'; id: number }
  | { type: 'closed'; done: number; stats: TelemetryStats };

export interface TelemetryThreadData {
  config: TelemetryConfig;
  host: DecisionRecord['host'];
}

/** Longest the thread may take to load the SDK and start its exporters. */
const START_TIMEOUT_MS = 15_000;
/** After the flush bound, how long the thread gets to end on its own (its stdout drained) before it is stopped. */
const THREAD_EXIT_MS = 250;

/**
 * The exporting side on a thread of its own: the OpenTelemetry SDK (span and log record objects,
 * protobuf serialization, HTTP export) and the decision log run there, so a decision pays only
 * for its span's identity and an array push. Items cross in batches (`telemetry.ts`).
 *
 * Bounded: at most `4 × maxQueue` items in flight to the thread; past that (a thread starved of
 * CPU), items are dropped and counted as the exporters count theirs. A thread that fails changes
 * no decision: what it held or would have been given is counted as lost, and said once on stderr.
 */
export async function startTelemetryThread(
  config: TelemetryConfig,
  host: DecisionRecord['host'],
  metrics: MetricsSource,
  /** The worker module (default: telemetry-worker.js beside this file). */
  workerUrl = new URL('./telemetry-worker.js', import.meta.url),
): Promise<TelemetrySink> {
  const data: TelemetryThreadData = { config, host };
  const worker = new Worker(workerUrl, { workerData: data });
  const outputs = lossOutputs(config);
  /** The thread's own counts, as last reported. */
  let reported: TelemetryStats = NO_LOSS;
  /** What the thread held when last reported (in its exporters' queues), lost with it if it fails. */
  let held: TelemetryStats = NO_LOSS;
  /** What never reached the thread, or was lost with it. */
  let lost: TelemetryStats = NO_LOSS;
  /** Batches posted and not yet taken, oldest first (the thread takes whole batches, in order). */
  const inFlight: (readonly TelemetryItem[])[] = [];
  let inFlightItems = 0;
  const maxInFlight = 4 * config.maxQueue;
  let state: 'starting' | 'running' | 'closing' | 'gone' = 'starting';
  let closed: (() => void) | undefined;
  const taken = (n: number) => {
    while (n > 0 && inFlight.length > 0) {
      const batch = inFlight.shift()!;
      n -= batch.length;
      inFlightItems -= batch.length;
    }
  };
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the telemetry thread did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    worker.on('message', (msg: FromTelemetryThread) => {
      switch (msg.type) {
        case 'ready':
          clearTimeout(timer);
          state = 'running';
          resolve();
          return;
        case 'failed':
          clearTimeout(timer);
          reject(new Error(msg.message));
          return;
        case 'stats':
          taken(msg.done);
          reported = msg.stats;
          held = msg.held;
          return;
        case 'collect': {
          const reply = (snapshot: readonly MetricSnapshot[]) => post({ type: 'snapshot', id: msg.id, metrics: snapshot });
          // A registry that cannot be read exports nothing this time.
          Promise.resolve()
            .then(() => metrics.read?.() ?? [])
            .then(reply, () => reply([]));
          return;
        }
        case 'closed':
          taken(msg.done);
          reported = msg.stats;
          held = NO_LOSS;
          closed?.();
          return;
      }
    });
    const gone = (why: string) => {
      clearTimeout(timer);
      reject(new Error(why));
      if (state === 'gone') return;
      const was = state;
      state = 'gone';
      // Everything the thread had not delivered is lost with it: counted, and said once.
      let batches = 0;
      for (const batch of inFlight.splice(0)) {
        lost = addLoss(lost, lossOf(batch, outputs));
        batches++;
      }
      inFlightItems = 0;
      lost = addLoss(lost, held);
      held = NO_LOSS;
      if (was === 'running') process.stderr.write(`ward: ${why}; telemetry from now on is counted as lost (${batches} batch(es) in flight)\n`);
      closed?.();
    };
    worker.on('error', (err) => gone(`the telemetry thread failed: ${err.message}`));
    worker.on('exit', (code) => gone(`the telemetry thread exited (${code})`));
  });
  const post = (msg: ToTelemetryThread) => {
    try {
      worker.postMessage(msg);
      return true;
    } catch {
      return false;
    }
  };
  try {
    await ready;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  // The host's server keeps the process alive; the telemetry thread must not.
  worker.unref();
  return {
    record(items) {
      if (items.length === 0) return;
      // Past the start of shutdown the thread records nothing more: late items are counted, not sent.
      if (state !== 'running' || inFlightItems + items.length > maxInFlight || !post({ type: 'items', items })) {
        lost = addLoss(lost, lossOf(items, outputs));
        return;
      }
      inFlight.push(items);
      inFlightItems += items.length;
    },
    stats: () => addLoss(reported, lost),
    async shutdown(flushMs) {
      if (state !== 'running') return;
      state = 'closing';
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      const done = new Promise<void>((resolve) => {
        closed = resolve;
      });
      // Held until the flush ends: nothing else may be keeping the process alive any more.
      worker.ref();
      post({ type: 'shutdown', flushMs });
      // The thread bounds its own flush by flushMs; this bounds the thread.
      await bounded(done, flushMs + THREAD_EXIT_MS);
      await bounded(exited, THREAD_EXIT_MS);
      await worker.terminate();
    },
  };
}
