import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { MetricSnapshot } from './metric-snapshot.js';
import { bounded, startRecorder, type Recorder } from './recorder.js';
import type { FromTelemetryThread, TelemetryThreadData, ToTelemetryThread } from './telemetry-thread.js';

/**
 * The telemetry thread (`telemetry-thread.ts`): records the items it is handed with a `Recorder`,
 * reports what it took and what its exporters lost, and asks the host for the metrics registry
 * at each metrics export (the registry lives with the decisions).
 */

const { config, host } = workerData as TelemetryThreadData;

/**
 * Decisions first: on a busy machine this thread yields the CPU to the host's event loop (and to
 * the MCP server it waits on). Linux applies a nice value to one thread when given its id
 * (`/proc/thread-self`); elsewhere the thread keeps the process's priority. Starved for long, its
 * in-flight bound drops items, counted like any other loss.
 */
const TELEMETRY_NICE = 10;
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, TELEMETRY_NICE);
} catch {
  // not Linux, or not allowed: the same priority as the host
}
const port = parentPort!;
const post = (msg: FromTelemetryThread) => port.postMessage(msg);

/** Longest a metrics export waits for the host's registry. */
const COLLECT_TIMEOUT_MS = 5000;
const asked = new Map<number, (metrics: readonly MetricSnapshot[]) => void>();
let nextAsk = 0;
const readMetrics = async (): Promise<readonly MetricSnapshot[]> => {
  const id = nextAsk++;
  let got: readonly MetricSnapshot[] = [];
  await bounded(
    new Promise<void>((resolve) => {
      asked.set(id, (metrics) => {
        got = metrics;
        resolve();
      });
      post({ type: 'collect', id });
    }),
    COLLECT_TIMEOUT_MS,
  );
  asked.delete(id);
  return got;
};

let recorder: Recorder;
try {
  recorder = await startRecorder(config, host, { read: readMetrics });
} catch (err) {
  post({ type: 'failed', message: (err as Error).message });
  process.exit(1);
}

/**
 * What was taken, the exporters' counts and what they hold (both also change off the item path: an
 * export that failed, or was delivered, later), reported at most every REPORT_MS and only when
 * something changed: one message per batch would wake the host's event loop once per decision.
 */
const REPORT_MS = 50;
let taken = 0;
let reported = '';
const report = setInterval(() => {
  const stats = recorder.stats();
  const held = recorder.held();
  const now = JSON.stringify([stats, held]);
  if (taken === 0 && now === reported) return;
  reported = now;
  post({ type: 'stats', done: taken, stats, held });
  taken = 0;
}, REPORT_MS);

port.on('message', (msg: ToTelemetryThread) => {
  switch (msg.type) {
    case 'items':
      recorder.record(msg.items);
      taken += msg.items.length;
      return;
    case 'snapshot':
      asked.get(msg.id)?.(msg.metrics);
      return;
    case 'shutdown':
      clearInterval(report);
      void recorder.shutdown(msg.flushMs).then(() => {
        post({ type: 'closed', done: taken, stats: recorder.stats() });
        // Nothing more will come: the thread ends once its exporters let go.
        port.close();
      });
      return;
  }
});
post({ type: 'ready' });
