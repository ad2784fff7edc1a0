// OpenTelemetry export on the daemon's decision path (docs/observability.md): `ward serve` with
// `--otel` (batch span processor, OTLP/HTTP protobuf to an in-process receiver that accepts every
// request) and `--decision-log`, against the same daemon with telemetry off, POST /v1/gate/eval at
// c=64, in the same run. Rounds are interleaved (off, on, off, on, ...) so drift on a shared
// machine hits both alike; the table gives each case's median round. Target (issue 30): export
// costs ≤ 5% of throughput at c=64. On a shared machine throughput swings with the neighbours'
// load, so each round also reads the daemon's own CPU time (/proc/<pid>/stat, every thread: the
// batch exporters included) and the table gives CPU per decision, which the neighbours disturb less.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuTimeUs, formatNumber as fmt, formatTable, median } from './lib.js';
import { otlpSink, percentile, startServe, stopServe } from './serve.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.WARD_BENCH_DAEMON_SECONDS ?? 5);
const C = 64;

async function measured(d, body, seconds) {
  const before = cpuTimeUs(d.proc.pid);
  const r = await load(d.url, body, C, seconds);
  r.cpuUs = (cpuTimeUs(d.proc.pid) - before) / Math.max(1, r.total);
  return r;
}

async function load(url, body, connections, seconds) {
  const times = [];
  const instance = autocannon({ url: `${url}/v1/gate/eval`, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections, duration: seconds });
  instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
  const result = await instance;
  times.sort((a, b) => a - b);
  return { total: result.requests.total, rps: result.requests.total / (result.duration || seconds), p50: percentile(times, 50), p99: percentile(times, 99), non2xx: result.non2xx, errors: result.errors + result.timeouts };
}

/** The daemon's `ward_telemetry_lost` series, as `what=n` pairs. */
async function telemetryLost(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const pairs = [...text.matchAll(/^ward_telemetry_lost\{what="([^"]+)"\} (\d+)/gm)].map((m) => `${m[1]}=${m[2]}`);
  return pairs.join(' ') || 'none reported';
}


export default async function otelBench(h) {
  const names = [`otel off c=${C}`, `otel on c=${C}`, `otel spans only c=${C}`];
  if (!h.matches('otel · POST /v1/gate/eval', names)) return;
  const rounds = Number(process.env.WARD_BENCH_OTEL_ROUNDS ?? 3);
  const dir = mkdtempSync(path.join(tmpdir(), 'ward-bench-otel-'));
  const policy = path.join(repo, 'policies', 'baseline-highrisk.yaml');
  const body = JSON.stringify({ intent: JSON.parse(readFileSync(path.join(repo, 'examples', 'quickstart', 'read-report.json'), 'utf8')) });
  const collector = await otlpSink();
  const off = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'off')], dir, { WARD_OTEL: '0' });
  const on = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'on'), '--otel', '--decision-log', path.join(dir, 'decisions.jsonl')], dir, {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
  });
  // Spans alone (no log records, no metrics, no decision log): what the trace view costs by itself.
  const spans = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'spans'), '--otel'], dir, {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_LOGS_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
  });
  const daemons = { off, on, spans };
  const got = { off: [], on: [], spans: [] };
  const lost = {};
  try {
    // Warm-up: the first seconds of a daemon are JIT compilation, not steady state.
    for (const d of Object.values(daemons)) await load(d.url, body, C, 2);
    for (let i = 0; i < rounds; i++) for (const [k, d] of Object.entries(daemons)) got[k].push(await measured(d, body, SECONDS));
    // Export must keep up, not only stay cheap: what each daemon could not deliver (dropped or failed).
    for (const k of ['on', 'spans']) lost[k] = await telemetryLost(daemons[k].url);
  } finally {
    await Promise.all(Object.values(daemons).map(stopServe));
    await collector.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const pick = (rs) => ({ rps: median(rs.map((r) => r.rps)), cpuUs: median(rs.map((r) => r.cpuUs)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), non2xx: rs.reduce((a, r) => a + r.non2xx, 0), errors: rs.reduce((a, r) => a + r.errors, 0) });
  const rows = [
    { name: `otel off c=${C}`, ...pick(got.off) },
    { name: `otel on c=${C}`, ...pick(got.on) },
    { name: `otel spans only c=${C}`, ...pick(got.spans) },
  ];
  const title = `otel · POST /v1/gate/eval, durable daemon, export off vs on (OTLP/HTTP protobuf + decision log), c=${C}, ${rounds} × ${SECONDS} s interleaved`;
  const header = ['case', 'req/s (median round)', 'CPU µs/decision', '× off CPU', 'p50 ms', 'p99 ms', '× off req/s', 'non-2xx', 'errors'];
  const table = rows.map((r) => [r.name, fmt(r.rps), fmt(r.cpuUs), `${fmt(r.cpuUs / rows[0].cpuUs, 3)}×`, fmt(r.p50, 3), fmt(r.p99, 3), `${fmt(r.rps / rows[0].rps, 3)}×`, String(r.non2xx), String(r.errors)]);
  process.stdout.write(`\n${title}\n${formatTable(header, table)}\n`);
  process.stdout.write(`exported: ${collector.stats.requests} OTLP requests, ${fmt(collector.stats.bytes)} bytes; target: export costs ≤ 5% of throughput → ${fmt((1 - rows[1].rps / rows[0].rps) * 100, 1)}% by req/s, ${fmt((1 - rows[0].cpuUs / rows[1].cpuUs) * 100, 1)}% by CPU per decision (spans only: ${fmt((1 - rows[0].cpuUs / rows[2].cpuUs) * 100, 1)}%)\n`);
  process.stdout.write(`telemetry lost (ward_telemetry_lost, all rounds): on: ${lost.on}; spans only: ${lost.spans}\n`);
  h.suites.push({
    file: 'otel',
    title,
    baseline: `otel off c=${C} (same run)`,
    options: { seconds: SECONDS, rounds },
    results: rows.map((r) => ({ name: r.name, medianNs: 1e9 / r.rps, opsPerSec: r.rps, cpuUsPerDecision: r.cpuUs, p50Ms: r.p50, p99Ms: r.p99, non2xx: r.non2xx, errors: r.errors, ratio: rows[0].rps / r.rps })),
  });
}
