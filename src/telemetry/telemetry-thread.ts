import { Worker } from 'node:worker_threads';
import type { TelemetryConfig } from './config.js';
import type { DecisionRecord } from './decision-record.js';
import { NO_LOSS, type TelemetryItem, type TelemetryStats } from './items.js';
import type { MetricSnapshot } from './metric-snapshot.js';
import type { MetricsSource } from './otlp-metrics.js';
import { bounded } from './recorder.js';
import type { TelemetrySink } from './telemetry.js';

/** To the telemetry thread. */
export type ToTelemetryThread = { type: 'items'; items: readonly TelemetryItem[] } | { type: 'snapshot'; id: number; metrics: readonly MetricSnapshot[] } | { type: 'shutdown'; flushMs: number };

/** From the telemetry thread. */
export type FromTelemetryThread =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  /** `done`: items taken since the last message (the bound on what is in flight); the exporters' counts. */
  | { type: 'stats'; done: number; stats: TelemetryStats }
  | { type: 'collect'; id: number }
  | { type: 'closed'; stats: TelemetryStats };

export interface TelemetryThreadData {
  config: TelemetryConfig;
  host: DecisionRecord['host'];
}

/** Longest the thread may take to load the SDK and start its exporters. */
const START_TIMEOUT_MS = 15_000;
/** After the flush bound, how long the thread gets to end on its own (its stdout drained) before it is stopped. */
const EXIT_GRACE_MS = 250;

/**
 * The exporting side on a thread of its own: the OpenTelemetry SDK (span and log record objects,
 * protobuf serialization, HTTP export) and the decision log run there, so a decision pays only
 * for its span's identity and one array push. Items cross once per turn of the host's event loop.
 *
 * Bounded: at most `4 × maxQueue` items in flight to the thread; past that (a thread starved of
 * CPU), items are dropped and counted as the exporters count theirs. A thread that fails changes
 * no decision: what it would have exported is counted as lost.
 */
export async function startTelemetryThread(config: TelemetryConfig, host: DecisionRecord['host'], metrics: MetricsSource): Promise<TelemetrySink> {
  const data: TelemetryThreadData = { config, host };
  const worker = new Worker(new URL('./telemetry-worker.js', import.meta.url), { workerData: data });
  let stats: TelemetryStats = NO_LOSS;
  const lost = { ...NO_LOSS };
  let inFlight = 0;
  const maxInFlight = 4 * config.maxQueue;
  let dead = false;
  let closed: ((s: TelemetryStats) => void) | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the telemetry thread did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    worker.on('message', (msg: FromTelemetryThread) => {
      switch (msg.type) {
        case 'ready':
          clearTimeout(timer);
          resolve();
          return;
        case 'failed':
          clearTimeout(timer);
          reject(new Error(msg.message));
          return;
        case 'stats':
          inFlight -= msg.done;
          stats = msg.stats;
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
          stats = msg.stats;
          closed?.(msg.stats);
          return;
      }
    });
    const gone = (why: string) => {
      clearTimeout(timer);
      dead = true;
      reject(new Error(why));
      closed?.(stats);
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
  const countLost = (items: readonly TelemetryItem[]) => {
    for (const item of items) {
      if (item.type === 'end') continue;
      if (item.span) lost.droppedSpans++;
      if (item.type !== 'decision') continue;
      if (config.otlp && config.signals.logs) lost.droppedLogRecords++;
      if (config.decisionLog !== undefined) lost.droppedLogLines++;
    }
  };
  return {
    record(items) {
      if (items.length === 0) return;
      if (dead || inFlight + items.length > maxInFlight || !post({ type: 'items', items })) {
        countLost(items);
        return;
      }
      inFlight += items.length;
    },
    stats: () => ({
      droppedSpans: stats.droppedSpans + lost.droppedSpans,
      failedSpans: stats.failedSpans,
      droppedLogLines: stats.droppedLogLines + lost.droppedLogLines,
      droppedLogRecords: stats.droppedLogRecords + lost.droppedLogRecords,
      failedLogRecords: stats.failedLogRecords,
      failedMetricExports: stats.failedMetricExports,
    }),
    async shutdown(flushMs) {
      if (dead) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      const done = new Promise<void>((resolve) => {
        closed = () => resolve();
      });
      // Held until the flush ends: nothing else may be keeping the process alive any more.
      worker.ref();
      post({ type: 'shutdown', flushMs });
      // The thread bounds its own flush by flushMs; this bounds the thread.
      await bounded(done, flushMs + EXIT_GRACE_MS);
      await bounded(exited, EXIT_GRACE_MS);
      await worker.terminate();
    },
  };
}
