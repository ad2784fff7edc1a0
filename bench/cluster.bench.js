// The cluster: durable decisions through `ward serve` on PostgreSQL, against one replica on
// LevelDB, in one run on one machine (issue 18). autocannon on loopback, POST /v1/gate/eval with
// the quickstart read intent, at concurrency 16 and 64:
//
//   (a) one replica on LevelDB (journal group commit, fdatasync)
//   (b) one replica on PostgreSQL (group commit into one transaction per group)
//   (c) two replicas on PostgreSQL, the load split evenly between them (c/2 connections each,
//       i.e. a round-robin client), one database
//
// PostgreSQL runs with fsync on and synchronous_commit on (scripts/postgres-server.js, fast: false),
// so (b) and (c) are as durable as (a). Cases are interleaved per concurrency so drift on a shared
// machine hits all alike. Reported: req/s, p50/p99 (from every response time), the ratios (b)/(a)
// and (c)/(b), and database round trips per decision from the replicas' /metrics.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { formatTable } from './lib.js';
import { percentile, startServe, stopServe } from './serve.js';
import { startPostgres } from '../scripts/postgres-server.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = [16, 64];
const DURATION_S = Number(process.env.WARD_BENCH_CLUSTER_SECONDS ?? 5);

/** Load `urls` at `connections` in total, split evenly; one merged result. */
async function load(urls, body, connections, seconds) {
  const times = [];
  const each = Math.max(1, Math.floor(connections / urls.length));
  const runs = urls.map((url) => {
    const instance = autocannon({
      url: `${url}/v1/gate/eval`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: each,
      duration: seconds,
    });
    instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
    return instance;
  });
  const results = await Promise.all(runs);
  times.sort((a, b) => a - b);
  const total = results.reduce((n, r) => n + r.requests.total, 0);
  return {
    rps: total / seconds,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
    errors: results.reduce((n, r) => n + r.errors + r.timeouts, 0),
    total,
  };
}

/** Sum of a Prometheus counter (all label sets) on one replica; NaN when it is not exported. */
async function counter(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = NaN;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = line.match(/^([a-z_]+)(?:\{[^}]*\})? ([0-9.e+-]+)$/);
    if (m && m[1] === name) sum = (Number.isNaN(sum) ? 0 : sum) + Number(m[2]);
  }
  return sum;
}

async function roundTrips(urls) {
  let trips = 0;
  let decisions = 0;
  for (const url of urls) {
    trips += await counter(url, 'ward_store_round_trips_total');
    decisions += await counter(url, 'ward_decisions_total');
  }
  return { trips, decisions };
}

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '–');

export default async function clusterBench(h) {
  const names = CONCURRENCY.flatMap((c) => [`(a) LevelDB, 1 replica c=${c}`, `(b) PostgreSQL, 1 replica c=${c}`, `(c) PostgreSQL, 2 replicas c=${c}`]);
  if (!h.matches('cluster · POST /v1/gate/eval', names)) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'ward-bench-cluster-'));
  const policy = path.join(repo, 'policies', 'baseline-highrisk.yaml');
  const body = JSON.stringify({ intent: JSON.parse(readFileSync(path.join(repo, 'examples', 'quickstart', 'read-report.json'), 'utf8')) });
  const pg = await startPostgres({ fast: false, maxConnections: 200 });
  const started = [];
  const rows = [];
  try {
    const single = await pg.createDatabase('bench_one');
    const shared = await pg.createDatabase('bench_two');
    const level = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'level')], dir);
    started.push(level);
    const one = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'pg-one')], dir, { WARD_STORE_URL: single });
    started.push(one);
    const twoA = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'pg-two-a')], dir, { WARD_STORE_URL: shared });
    started.push(twoA);
    const twoB = await startServe(['--policy', policy, '--state-dir', path.join(dir, 'pg-two-b')], dir, { WARD_STORE_URL: shared });
    started.push(twoB);
    const cases = [
      { key: '(a) LevelDB, 1 replica', urls: [level.url] },
      { key: '(b) PostgreSQL, 1 replica', urls: [one.url] },
      { key: '(c) PostgreSQL, 2 replicas', urls: [twoA.url, twoB.url] },
    ];
    for (const k of cases) await load(k.urls, body, 16, 1); // warm-up: JIT, connections, first segment
    for (const c of CONCURRENCY) {
      const measured = [];
      for (const k of cases) {
        const before = await roundTrips(k.urls);
        const r = await load(k.urls, body, c, DURATION_S);
        const after = await roundTrips(k.urls);
        const perDecision = (after.trips - before.trips) / (after.decisions - before.decisions);
        measured.push({ name: `${k.key} c=${c}`, key: k.key, c, ...r, tripsPerDecision: perDecision });
      }
      const [a, b] = measured;
      for (const m of measured) rows.push({ ...m, vsA: m.rps / a.rps, vsB: m.rps / b.rps });
    }
  } finally {
    await Promise.all(started.map(stopServe));
    await pg.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  const title = `cluster · POST /v1/gate/eval, durable signed decisions, autocannon on loopback, ${DURATION_S} s per case`;
  const header = ['case', 'req/s', 'p50 ms', 'p99 ms', '× (a)', '× (b)', 'db trips/decision', 'non-2xx', 'errors'];
  const table = rows.map((r) => [
    r.name,
    fmt(r.rps),
    fmt(r.p50, 3),
    fmt(r.p99, 3),
    `${fmt(r.vsA, 2)}×`,
    `${fmt(r.vsB, 2)}×`,
    r.key.startsWith('(a)') ? '–' : fmt(r.tripsPerDecision, 3),
    String(r.non2xx),
    String(r.errors),
  ]);
  process.stdout.write(`\n${title}\n${formatTable(header, table)}\n`);
  const b64 = rows.find((r) => r.name === '(b) PostgreSQL, 1 replica c=64');
  const c64 = rows.find((r) => r.name === '(c) PostgreSQL, 2 replicas c=64');
  process.stdout.write(
    `targets: (b)/(a) ≥ 0.7× → ${fmt(b64.vsA, 2)}× at c=64; p99 < 50 ms at c=64 → (b) ${fmt(b64.p99, 1)} ms, (c) ${fmt(c64.p99, 1)} ms; (c)/(b) = ${fmt(c64.vsB, 2)}×\n`,
  );
  h.suites.push({
    file: 'cluster',
    title,
    baseline: '(a) one replica on LevelDB (same concurrency)',
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
      ratio: r.vsA === 0 ? NaN : 1 / r.vsA,
      dbRoundTripsPerDecision: r.tripsPerDecision,
    })),
  });
}
