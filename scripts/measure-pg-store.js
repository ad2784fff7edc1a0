// Figures for docs/store.md "PostgreSQL" (not a test, no assertions): the PostgreSQL store against
// the LevelDB store on this machine. `npm run build` first, then `node scripts/measure-pg-store.js`.
//   - put of a batch of 1, 64 and 512 traces: median ms, each batch one transaction (LevelDB: one
//     synced batch), on a PostgreSQL with fsync and synchronous_commit ON (the durable setting);
//   - list / resolve / get+read latency at 10,000 stored traces: median ms.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportStore, openLevelStore } from '../dist/store/index.js';
import { openPgStore } from '../dist/store/postgres.js';
import { startPostgres } from './postgres-server.js';

const TOOLS = ['fs.write', 'fs.read', 'http.get', 'http.post', 'db.query', 'shell.exec', 'payments.refund'];
const FILL = 10_000;

/** A realistic gate trace (about 900 bytes), as bench/store.bench.js makes them. */
function traceBytes(n) {
  const block = n % 7 === 0;
  return Buffer.from(
    JSON.stringify(
      {
        schema_id: 'gait.gate.trace',
        schema_version: '1.0.0',
        created_at: '2026-02-18T00:00:00Z',
        observed_at: new Date(Date.UTC(2026, 1, 18) + n * 1000).toISOString(),
        producer_version: '0.1.0',
        trace_id: n.toString(16).padStart(24, '0'),
        event_id: eventId(n),
        tool_name: TOOLS[n % TOOLS.length],
        args_digest: n.toString(16).padStart(64, 'a'),
        intent_digest: n.toString(16).padStart(64, 'b'),
        policy_digest: 'c'.repeat(64),
        run_id: `run_${n % 1000}`,
        verdict: block ? 'block' : 'allow',
        reason_codes: block ? ['destructive_apply_requires_approval', 'matched_rule_block_destructive'] : ['matched_rule_allow_reads'],
        relationship: { parent_ref: { kind: 'session', id: `sess_${n % 5000}` } },
        signature: { alg: 'ed25519', key_id: 'd'.repeat(64), sig: 'A'.repeat(86) + '==', signed_digest: 'e'.repeat(64) },
      },
      null,
      2,
    ) + '\n',
  );
}

const eventId = (n) => createHash('sha256').update(String(n)).digest('hex').slice(0, 24);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

async function time(reps, fn) {
  const out = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return median(out);
}

async function measure(name, store) {
  let next = 1_000_000;
  const batch = (size) => Array.from({ length: size }, () => ({ kind: 'trace', bytes: traceBytes(next++) }));
  const row = { store: name };
  for (const [size, reps] of [[1, 60], [64, 30], [512, 12]]) {
    row[`put ${size}`] = await time(reps, () => store.put(batch(size)));
  }
  // Fill to 10,000 traces in batches of 1,000.
  for (let n = 0; n < FILL; n += 1000) await store.put(Array.from({ length: 1000 }, (_, i) => ({ kind: 'trace', bytes: traceBytes(n + i) })));
  const id = eventId;
  // What autovacuum does after a bulk load: statistics (array element frequencies) for the planner.
  if (name === 'PostgreSQL') await store.db.query('ANALYZE ward_store_entries');
  const reps = 60;
  row['list newest 50'] = await time(reps, () => store.list({ limit: 50 }));
  row['list tool 50'] = await time(reps, (i) => store.list({ tool_name: TOOLS[i % TOOLS.length], limit: 50 }));
  row['list verdict block 50'] = await time(reps, () => store.list({ verdict: 'block', limit: 50 }));
  row['list run (10)'] = await time(reps, (i) => store.list({ run_id: `run_${i}` }));
  row['list session+verdict'] = await time(reps, (i) => store.list({ session_id: `sess_${i * 7}`, verdict: 'block' }));
  row['list 1h window'] = await time(reps, () => store.list({ since: '2026-02-18T01:00:00Z', until: '2026-02-18T02:00:00Z' }));
  row['resolve id'] = await time(reps, (i) => store.resolve(id(i * 37)));
  row['resolve prefix 12'] = await time(reps, (i) => store.resolve(id(i * 37 + 1).slice(0, 12)));
  row['resolve trace_id'] = await time(reps, (i) => store.resolve((i * 41).toString(16).padStart(24, '0')));
  row['get+read'] = await time(reps, async (i) => store.read(await store.get('trace', id(i * 43))));
  const out = join(mkdtempSync(join(tmpdir(), 'ward-measure-export-')), 'all.zip');
  row['export all (~11,700)'] = await time(3, () => exportStore(store, {}, out));
  return row;
}

const server = await startPostgres({ fast: false });
const dir = mkdtempSync(join(tmpdir(), 'ward-measure-'));
try {
  const rows = [];
  const level = await openLevelStore(dir);
  try {
    rows.push(await measure('LevelDB', level));
  } finally {
    await level.close();
  }
  const pg = await openPgStore({ config: { connectionString: await server.createDatabase(), display: 'bench' }, migrate: true });
  try {
    rows.push(await measure('PostgreSQL', pg));
    const plan = await pg.db.query(`EXPLAIN SELECT kind, id, entry FROM ward_store_entries WHERE kind = ANY($1::text[]) AND (id = $2 OR id LIKE $3 ESCAPE '\\') ORDER BY 1, 2`, [['trace'], 'eeee', 'eeeeeeeeeeee1%']);
    console.log('prefix resolve plan:', plan.rows.map((r) => r['QUERY PLAN'].trim()).join(' | '));
  } finally {
    await pg.close();
  }
  const keys = Object.keys(rows[0]).filter((k) => k !== 'store');
  console.log(`median ms (${FILL.toLocaleString('en')} traces stored for the reads; PostgreSQL ${'fsync on'}, loopback)`);
  console.log(['', ...rows.map((r) => r.store)].join('\t'));
  for (const k of keys) console.log([k, ...rows.map((r) => r[k].toFixed(2))].join('\t'));
} finally {
  await server.destroy();
  rmSync(dir, { recursive: true, force: true });
}
