// The evidence store: ingest throughput (batched, every batch synced to disk before it returns)
// against raw classic-level batches of the same size, the cost of the spool write a short-lived
// command pays, and query latency over 100,000 stored traces.

import { ClassicLevel } from 'classic-level';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLevelStore, spoolTrace } from '../dist/store/index.js';

const BATCH = 1000;
const FILL = 100_000;
const TOOLS = ['fs.write', 'fs.read', 'http.get', 'http.post', 'db.query', 'shell.exec', 'payments.refund'];

/** A realistic gate trace (about 700 bytes) with a spread of runs, sessions, tools and verdicts. */
function traceBytes(n) {
  const block = n % 7 === 0;
  const record = {
    schema_id: 'gait.gate.trace',
    schema_version: '1.0.0',
    created_at: '2026-02-18T00:00:00Z',
    observed_at: new Date(Date.UTC(2026, 1, 18) + n * 1000).toISOString(),
    producer_version: '0.1.0',
    trace_id: n.toString(16).padStart(24, '0'),
    event_id: (n * 7919).toString(16).padStart(24, 'e'),
    tool_name: TOOLS[n % TOOLS.length],
    args_digest: n.toString(16).padStart(64, 'a'),
    intent_digest: n.toString(16).padStart(64, 'b'),
    policy_digest: 'c'.repeat(64),
    run_id: `run_${n % 1000}`,
    verdict: block ? 'block' : 'allow',
    reason_codes: block ? ['destructive_apply_requires_approval', 'matched_rule_block_destructive'] : ['matched_rule_allow_reads'],
    relationship: { parent_ref: { kind: 'session', id: `sess_${n % 5000}` } },
    signature: { alg: 'ed25519', key_id: 'd'.repeat(64), sig: 'A'.repeat(86) + '==', signed_digest: 'e'.repeat(64) },
  };
  return Buffer.from(JSON.stringify(record, null, 2) + '\n');
}

export default async function storeBench(h) {
  // Filling 100k traces takes seconds: skip it when a name filter excludes every store suite.
  if (!h.matches('store', ['store ingest', 'spool', 'store query'])) return;
  const dir = mkdtempSync(join(tmpdir(), 'ward-bench-store-'));
  const store = await openLevelStore(dir);
  const raw = new ClassicLevel(join(dir, 'raw'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await raw.open();
  try {
    let next = 0;
    const fill = async (count) => {
      const inputs = [];
      for (let i = 0; i < count; i++) inputs.push({ kind: 'trace', bytes: traceBytes(next++) });
      return store.put(inputs);
    };
    const started = performance.now();
    while (next < FILL) await fill(BATCH);
    const seconds = (performance.now() - started) / 1000;
    console.error(`store: filled ${FILL.toLocaleString('en')} traces in ${seconds.toFixed(1)} s (${Math.round(FILL / seconds).toLocaleString('en')} records/s, batches of ${BATCH}, each synced)`);

    let rawNext = 0;
    const sample = traceBytes(1).toString('utf8');
    await h.suite(
      `store ingest · batches of ${BATCH} traces, synced (records/s = ${BATCH} / (µs/op) × 1e6)`,
      [
        [`classic-level batch of ${BATCH} puts, sync [floor]`, async () => {
          const batch = raw.batch();
          for (let i = 0; i < BATCH; i++) batch.put(`k${rawNext++}`, sample);
          await batch.write({ sync: true });
        }],
        [`ward store.put(${BATCH} new traces): describe, index (7 keys each), one synced batch`, () => fill(BATCH)],
      ],
      { baseline: `classic-level batch of ${BATCH} puts, sync [floor]`, rounds: 5, roundMs: 400, minIterations: 2, alloc: false },
    );

    const spool = mkdtempSync(join(tmpdir(), 'ward-bench-spool-'));
    let spoolNext = 10_000_000;
    await h.suite(
      'spool · what a short-lived command pays to hand one trace to the store',
      [['spoolTrace (write, fsync, rename, fsync dir)', () => spoolTrace(spool, traceBytes(spoolNext++))]],
      { rounds: 5, roundMs: 200, alloc: false },
    );
    rmSync(spool, { recursive: true, force: true });

    const total = await store.count('trace');
    const probe = traceBytes(FILL / 2);
    const probeRecord = JSON.parse(probe.toString('utf8'));
    await h.suite(
      `store query · ${total.toLocaleString('en')} stored traces, 50 results per page`,
      [
        ['get by event id', () => store.get('trace', probeRecord.event_id)],
        ['resolve trace_id', () => store.resolve(probeRecord.trace_id, 'trace')],
        ['list newest 50', () => store.list({ kind: 'trace', limit: 50 })],
        ['list run_id=run_500 (100 matches), 50', () => store.list({ kind: 'trace', run_id: 'run_500', limit: 50 })],
        ['list verdict=block, 50', () => store.list({ kind: 'trace', verdict: 'block', limit: 50 })],
        ['list reason + tool (index + filter), 50', () => store.list({ kind: 'trace', reason_code: 'destructive_apply_requires_approval', tool_name: 'fs.write', limit: 50 })],
        ['list time window (1 hour), 50', () => store.list({ kind: 'trace', since: '2026-02-18T10:00:00Z', until: '2026-02-18T11:00:00Z', limit: 50 })],
      ],
      { baseline: 'get by event id', alloc: false },
    );
  } finally {
    await raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
