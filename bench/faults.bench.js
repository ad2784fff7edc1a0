// Soak with faults (issue 29): durable decisions (POST /v1/gate/eval) at concurrency 32 while the
// disk fills up and while PostgreSQL freezes, each for a few seconds, then recovers. Not a speed
// figure: it reports what an operator cares about at night —
//
//   acked      decisions answered 200 (each must have its trace in the store afterwards)
//   lost       acked decisions whose trace is not in the store (must be 0)
//   refused    503 answers (ERR_STORAGE_FULL / ERR_STORE_UNAVAILABLE, Retry-After) during the fault
//   other      any other answer or a connection error (should be 0)
//   slowest    the longest time any request waited for its answer
//   recovered  from the end of the fault (space back, SIGCONT) to the next 200
//
// (a) LevelDB: the daemon in this process; the disk "fills" at Ward's syscall seam
//     (src/state/fs-seam.ts: every journal write fails with ENOSPC) and under the store (LevelDB
//     puts fail with its "No space left on device"), then space returns.
// (b) PostgreSQL: a replica in this process on a real server that is frozen (SIGSTOP of the
//     postmaster and every backend), then thawed.
//
// WARD_BENCH_FAULT_SECONDS (default 16) is each case's duration; the fault starts after a quarter
// of it and lasts 40 % of it (6.4 s by default: longer than every client-side bound on PostgreSQL,
// so requests in flight when it starts time out rather than wait it out).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import pg from 'pg';
import { formatTable } from './lib.js';
import { startPostgres } from '../scripts/postgres-server.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = 32;
const SECONDS = Number(process.env.WARD_BENCH_FAULT_SECONDS ?? 16);

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

/** Decisions from `CONCURRENCY` loops for `seconds`; `fault(start, end)` is called on schedule. */
async function soak(url, body, seconds, fault) {
  const stats = { acked: [], refused: 0, other: 0, otherKinds: {}, slowest: 0, firstOkAfterFault: undefined, faultEnded: undefined };
  const end = Date.now() + seconds * 1000;
  const timers = [
    setTimeout(() => fault.start(), seconds * 250),
    setTimeout(() => {
      fault.end();
      stats.faultEnded = Date.now();
    }, seconds * 650),
  ];
  const other = (kind) => {
    stats.other++;
    stats.otherKinds[kind] = (stats.otherKinds[kind] ?? 0) + 1;
  };
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const sent = Date.now();
        try {
          const res = await request(`${url}/v1/gate/eval`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          const text = await res.body.text();
          const now = Date.now();
          stats.slowest = Math.max(stats.slowest, now - sent);
          if (res.statusCode === 200) {
            stats.acked.push(JSON.parse(text).trace_path.slice('store:trace/'.length));
            if (stats.faultEnded !== undefined && stats.firstOkAfterFault === undefined) stats.firstOkAfterFault = now;
          } else if (res.statusCode === 503) {
            stats.refused++;
            await new Promise((r) => setTimeout(r, 20)); // a client honouring Retry-After, briefly
          } else other(String(res.statusCode));
        } catch (err) {
          other(err.code ?? err.message);
        }
      }
    }),
  );
  for (const t of timers) clearTimeout(t);
  return stats;
}

export default async function faultsBench(h) {
  const names = [`(a) LevelDB, disk full c=${CONCURRENCY}`, `(b) PostgreSQL, frozen c=${CONCURRENCY}`];
  if (!h.matches('faults · soak', names)) return;
  const { startDaemon } = await import('../dist/daemon/server.js');
  const { generateSigningKey } = await import('../dist/keys/index.js');
  const { fsSeam } = await import('../dist/state/fs-seam.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'ward-bench-faults-'));
  const policy = path.join(repo, 'policies', 'baseline-highrisk.yaml');
  const body = JSON.stringify({ intent: JSON.parse(readFileSync(path.join(repo, 'examples', 'quickstart', 'read-report.json'), 'utf8')) });
  const base = { policyPath: policy, host: '127.0.0.1', port: 0, signingKey: generateSigningKey(), ingestIntervalMs: 0, logWrite: () => {} };
  const rows = [];
  try {
    // (a) LevelDB, disk full.
    const level = await startDaemon({ ...base, stateDir: path.join(dir, 'level') });
    try {
      const realWrite = fsSeam.write;
      const realPut = level.context.store.put.bind(level.context.store);
      const s = await soak(level.url, body, SECONDS, {
        start: () => {
          fsSeam.write = async () => {
            throw enospc();
          };
          level.context.store.put = async () => {
            throw new Error('IO error: store/db/000005.log: No space left on device');
          };
        },
        end: () => {
          fsSeam.write = realWrite;
          level.context.store.put = realPut;
        },
      });
      let lost = 0;
      for (const id of s.acked) {
        const res = await request(`${level.url}/v1/traces/${id}`);
        await res.body.text();
        if (res.statusCode !== 200) lost++;
      }
      rows.push({ name: names[0], ...s, lost });
    } finally {
      await level.close();
    }

    // (b) PostgreSQL, frozen.
    const server = await startPostgres();
    try {
      const url = await server.createDatabase('bench_faults');
      const replica = await startDaemon({ ...base, stateDir: path.join(dir, 'pg'), postgres: { config: { connectionString: url, display: 'bench' } } });
      let s;
      try {
        s = await soak(replica.url, body, SECONDS, { start: () => server.freeze(), end: () => server.thaw() });
      } finally {
        server.thaw();
        await replica.close();
      }
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      const found = (await db.query("SELECT count(*)::int AS n FROM ward_store_entries WHERE kind = 'trace' AND id = ANY($1::text[])", [s.acked])).rows[0].n;
      await db.end();
      rows.push({ name: names[1], ...s, lost: s.acked.length - found });
    } finally {
      await server.destroy();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const title = `faults · soak: POST /v1/gate/eval at c=${CONCURRENCY} for ${SECONDS} s, a ${(SECONDS * 0.4).toFixed(1)} s fault from ${SECONDS / 4} s`;
  const header = ['case', 'acked', 'lost', 'refused (503)', 'other', 'slowest ms', 'recovered ms'];
  const table = rows.map((r) => [r.name, String(r.acked.length), String(r.lost), String(r.refused), r.other === 0 ? '0' : `${r.other} ${JSON.stringify(r.otherKinds)}`, String(r.slowest), r.firstOkAfterFault === undefined ? 'never' : String(r.firstOkAfterFault - r.faultEnded)]);
  process.stdout.write(`\n${title}\n${formatTable(header, table)}\n`);
  h.suites.push({
    title,
    file: h.file,
    results: rows.map((r) => ({ name: r.name, acked: r.acked.length, lost: r.lost, refused: r.refused, other: r.other, slowest_ms: r.slowest, recovered_ms: r.firstOkAfterFault === undefined ? null : r.firstOkAfterFault - r.faultEnded })),
  });
}
