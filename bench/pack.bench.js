// Runpacks and packs: build, verify and diff for a typical run (the demo fixture: 3 intents,
// 3 receipts) and for a 10,000-intent run. Reference budgets (Gait): pack verify under 400 µs
// in-process, pack diff under 1 ms, for the typical run. The floor for verify is one Ed25519
// verification, which a signed pack cannot avoid.

import { sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { generateSigningKey } from '../dist/keys/index.js';
import { parseRFC3339 } from '../dist/canon/index.js';
import { parseRunRecordInput, recordRunpack } from '../dist/runpack/index.js';
import { buildRunPack, diffPacks, inspectPack, packVerified, verifyPack } from '../dist/pack/index.js';

const NOW = parseRFC3339('2026-03-01T00:00:00Z');
const ENV = { os: 'linux', arch: 'amd64', runtime: 'node' };
const key = generateSigningKey();
const demo = readFileSync(new URL('../fixtures/runs/run_record_demo.json', import.meta.url), 'utf8');

function record(text, runId) {
  return recordRunpack(parseRunRecordInput(text), { now: NOW, env: ENV, signingKey: key, runId }).bytes;
}

/** A run of `n` intents with results and one receipt each 100 intents, digests precomputed. */
function largeRun(n, retrievedAt = '2026-02-05T10:00:00Z') {
  const hex = (i) => i.toString(16).padStart(64, '0');
  const intents = [];
  const results = [];
  const receipts = [];
  for (let i = 0; i < n; i++) {
    intents.push({ intent_id: `intent_${i}`, tool_name: `tool.t${i % 17}`, args_digest: hex(i + 1) });
    results.push({ intent_id: `intent_${i}`, status: i % 50 === 0 ? 'error' : 'ok', result_digest: hex(i + n + 1) });
    if (i % 100 === 0) {
      receipts.push({ ref_id: `ref_${i}`, source_type: 'kb', source_locator: `kb://doc/${i}`, query_digest: hex(i + 7), content_digest: hex(i + 9), retrieved_at: retrievedAt, redaction_mode: 'reference' });
    }
  }
  return JSON.stringify({
    run: { run_id: 'run_large', created_at: '2026-02-05T10:00:00Z', env: ENV, timeline: [{ event: 'run_started', ts: '2026-02-05T10:00:00Z' }] },
    intents,
    results,
    refs: { receipts },
  });
}

export default async function packBench(h) {
  const runpack = record(demo);
  const pack = buildRunPack(runpack, { producerVersion: '0.1.0', signingKey: key }).bytes;
  const fresh = buildRunPack(record(demo, 'run_demo_2'), { producerVersion: '0.1.0', signingKey: key }).bytes;
  if (!packVerified(verifyPack(pack, { keys: [key], requireSignature: true }), true)) throw new Error('bench: typical pack does not verify');
  const digest = Buffer.alloc(32, 7);
  const sig = sign(null, digest, key.privateKey);

  await h.suite(
    'pack verify · typical run (3 intents, 3 receipts, signed)',
    [
      ['crypto.verify(ed25519) [floor]', () => verify(null, digest, key.publicKey, sig)],
      ['ward verifyPack, with key (standard profile)', () => verifyPack(pack, { keys: [key] })],
      ['ward verifyPack, signature required (+3 proof-record signatures)', () => verifyPack(pack, { keys: [key], requireSignature: true })],
      ['ward verifyPack, no key (signature skipped)', () => verifyPack(pack)],
    ],
    { baseline: 'crypto.verify(ed25519) [floor]' },
  );

  await h.suite(
    'pack diff / inspect · typical run',
    [
      ['ward inspectPack', () => inspectPack(pack)],
      ['ward diffPacks, identical', () => diffPacks(pack, pack)],
      ['ward diffPacks, fresh run over the same context', () => diffPacks(pack, fresh)],
    ],
    { baseline: 'ward inspectPack' },
  );

  await h.suite(
    'pack build · typical run',
    [
      ['crypto.sign(ed25519) [floor]', () => sign(null, digest, key.privateKey)],
      ['ward recordRunpack (run record, signed)', () => record(demo)],
      ['ward buildRunPack (signed)', () => buildRunPack(runpack, { producerVersion: '0.1.0', signingKey: key })],
    ],
    { baseline: 'crypto.sign(ed25519) [floor]' },
  );

  const largeInput = largeRun(10_000);
  const largeRunpack = recordRunpack(parseRunRecordInput(largeInput), { now: NOW, env: ENV, signingKey: key }).bytes;
  const largePack = buildRunPack(largeRunpack, { producerVersion: '0.1.0', signingKey: key }).bytes;
  const largeLater = buildRunPack(
    recordRunpack(parseRunRecordInput(largeRun(10_000, '2026-02-06T10:00:00Z')), { now: NOW, env: ENV, signingKey: key }).bytes,
    { producerVersion: '0.1.0', signingKey: key },
  ).bytes;
  const slow = { rounds: 5, roundMs: 400, minIterations: 2 };
  await h.suite(
    `10,000-intent run (runpack ${Math.round(largeRunpack.length / 1024)} KiB, pack ${Math.round(largePack.length / 1024)} KiB)`,
    [
      ['ward recordRunpack', () => recordRunpack(parseRunRecordInput(largeInput), { now: NOW, env: ENV, signingKey: key })],
      ['ward buildRunPack', () => buildRunPack(largeRunpack, { producerVersion: '0.1.0', signingKey: key })],
      ['ward verifyPack, signature required', () => verifyPack(largePack, { keys: [key], requireSignature: true })],
      ['ward diffPacks, retrieval-time drift', () => diffPacks(largePack, largeLater)],
    ],
    { ...slow, baseline: 'ward verifyPack, signature required' },
  );
}
