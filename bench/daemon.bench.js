// The daemon under load: autocannon on loopback against `ward serve` child processes, POST
// /v1/gate/eval at concurrency 1, 16 and 64. Each decision is evaluated and Ed25519-signed; the
// durable daemon answers only after the trace is fsynced (group commit into its journal). The
// baseline, measured in the same run, is the same daemon with --no-trace-durability (UNSAFE,
// benchmark-only: traces are signed and discarded). Cases are interleaved (durable, baseline, ...)
// so drift on a shared machine hits both alike.
//
// Latency percentiles are computed from every response time autocannon reports (sub-millisecond
// resolution), not from its millisecond histogram.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { formatTable } from './lib.js';
import { percentile, startServe, stopServe } from './serve.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = [1, 16, 64];
const DURATION_S = Number(process.env.WARD_BENCH_DAEMON_SECONDS ?? 5);

async function load(url, body, connections, seconds) {
  const times = [];
  const instance = autocannon({
    url: `${url}/v1/gate/eval`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: seconds,
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
  const result = await instance;
  times.sort((a, b) => a - b);
  return {
    rps: result.requests.total / (result.duration || seconds),
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
  };
}

const fmt = (n, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

export default async function daemonBench(h) {
  const names = CONCURRENCY.flatMap((c) => [`durable c=${c}`, `no-durability c=${c}`]);
  if (!h.matches('daemon · POST /v1/gate/eval', names)) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'ward-bench-daemon-'));
  const policy = path.join(repo, 'policies', 'baseline-highrisk.yaml');
  const body = JSON.stringify({ intent: JSON.parse(readFileSync(path.join(repo, 'examples', 'quickstart', 'read-report.json'), 'utf8')) });
  const durable = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'durable')], dir);
  const baseline = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'baseline'), '--no-trace-durability'], dir);
  const rows = [];
  try {
    // Warm-up: JIT, connection setup, the first journal segment.
    await load(durable.url, body, 16, 1);
    await load(baseline.url, body, 16, 1);
    for (const c of CONCURRENCY) {
      const d = await load(durable.url, body, c, DURATION_S);
      const b = await load(baseline.url, body, c, DURATION_S);
      rows.push({ name: `durable c=${c}`, c, ...d, baselineRps: b.rps }, { name: `no-durability c=${c}`, c, ...b, baselineRps: b.rps });
    }
  } finally {
    await Promise.all([stopServe(durable), stopServe(baseline)]);
    rmSync(dir, { recursive: true, force: true });
  }
  const title = `daemon · POST /v1/gate/eval, signed decisions, autocannon on loopback, ${DURATION_S} s per case`;
  const header = ['case', 'req/s', 'p50 ms', 'p99 ms', '× no-durability req/s', 'non-2xx', 'errors'];
  const table = rows.map((r) => [r.name, fmt(r.rps), fmt(r.p50, 3), fmt(r.p99, 3), `${fmt(r.rps / r.baselineRps, 2)}×`, String(r.non2xx), String(r.errors)]);
  process.stdout.write(`\n${title}\n${formatTable(header, table)}\n`);
  const target = rows.find((r) => r.name === 'durable c=64');
  const single = rows.find((r) => r.name === 'durable c=1');
  process.stdout.write(
    `target (2-core machine): ≥ 5,000 durable decisions/s with p99 < 20 ms at c=64 → ${fmt(target.rps)} req/s, p99 ${fmt(target.p99, 1)} ms; p50 < 1 ms at c=1 → ${fmt(single.p50, 3)} ms\n`,
  );
  h.suites.push({
    file: 'daemon',
    title,
    baseline: 'no-durability (same concurrency)',
    options: { durationSeconds: DURATION_S },
    results: rows.map((r) => ({
      name: r.name,
      medianNs: 1e9 / r.rps,
      opsPerSec: r.rps,
      p50Ms: r.p50,
      p99Ms: r.p99,
      requests: r.total,
      non2xx: r.non2xx,
      errors: r.errors,
      ratio: r.baselineRps / r.rps,
    })),
  });
}
