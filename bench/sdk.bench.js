// The SDK's `ward.evaluate`: a full decision plus its signed trace, by durability, against the same
// decision evaluated and signed in memory (decideGate with no I/O), measured in the same run.
//
//   write: the trace file is published (temporary name + link, no fsync) before evaluate resolves.
//   fsync: the trace is in the MCP proxy's O_DSYNC journal (group commit across concurrent calls)
//          and its file is published, before evaluate resolves.
//   fsync per trace (before): what the SDK did until `durability`: FileTraceSink writing and
//          fsyncing each trace off-thread, with a shared directory fsync.
//
// Issue 17 targets: `write` ≤ 3× evaluate+sign in memory at concurrency 1; `fsync` at concurrency 16
// ≥ 0.5× the `write` throughput. Both ratios are printed after the tables.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ward, generateSigningKey } from '../dist/index.js';
import { decideGate } from '../dist/runtime/gate-run.js';
import { FileTraceSink, runGateAsync } from '../dist/runtime/trace-sink.js';

const json = process.argv.includes('--json');
const print = (text) => (json ? process.stderr : process.stdout).write(text + '\n');

const POLICY = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: allow-workspace-reads
    priority: 10
    effect: allow
    match:
      endpoint_classes: [fs.read]
  - name: approve-writes
    priority: 20
    effect: require_approval
    match:
      endpoint_classes: [fs.write]
`;

const CONCURRENCY = 16;
const PER_WORKER = 4; // decisions per worker per measured call: 64 per call at c=16

// A distinct intent per call (distinct trace ids, as in real traffic), built the same way in every case.
let n = 0;
const nextIntent = () => {
  const p = `/workspace/file-${++n}.txt`;
  return {
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: '2026-11-21T10:00:00Z',
    producer_version: 'bench',
    tool_name: 'fs.read_file',
    args: { path: p },
    targets: [{ kind: 'path', value: p, operation: 'read' }],
    arg_provenance: [{ arg_path: '$.path', source: 'user' }],
    context: { identity: 'agent.bench', workspace: '/workspace', risk_class: 'low' },
  };
};

/** `perCall` runs of `one`, from `CONCURRENCY` concurrent callers, each awaiting its previous decision. */
const concurrently = (one) => () =>
  Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = 0; i < PER_WORKER; i++) await one();
    }),
  );

export default async function sdkBench(h) {
  const titles = ['sdk · ward.evaluate, concurrency 1', `sdk · ward.evaluate, concurrency ${CONCURRENCY} (${CONCURRENCY * PER_WORKER} decisions per op)`];
  if (!titles.some((t) => h.matches(t, ['write', 'fsync']))) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'ward-bench-sdk-'));
  const key = generateSigningKey();
  const ward = (name, durability) => new Ward({ policy: POLICY, stateDir: path.join(dir, name), signingKey: key, approvalDir: false, durability });
  const write = ward('write', 'write');
  const fsync = ward('fsync', 'fsync');
  // The in-memory floor: the same gate runtime (policy, key), decided and signed, nothing written.
  const runtime = { policy: write.policy, signingKey: key, traceFormat: 'ward', traceDir: path.join(dir, 'mem'), rateLimitStatePath: path.join(dir, 'mem.json'), profile: 'standard', captureIntents: false };
  const before = new FileTraceSink(path.join(dir, 'before', 'traces'));
  const check = await fsync.evaluate(nextIntent());
  if (check.verdict !== 'allow') throw new Error(`bench: expected allow, got ${check.verdict}`);

  const cases = {
    memory: () => decideGate(runtime, { intent: nextIntent() }),
    write: () => write.evaluate(nextIntent()),
    fsync: () => fsync.evaluate(nextIntent()),
    before: () => runGateAsync(before, runtime, { intent: nextIntent() }),
  };
  const names = {
    memory: 'evaluate + sign in memory',
    write: "ward.evaluate, durability 'write'",
    fsync: "ward.evaluate, durability 'fsync'",
    before: 'fsync per trace (the SDK before durability)',
  };
  const summary = [];
  try {
    const c1 = await h.suite(
      titles[0],
      [
        [names.memory, cases.memory],
        [names.write, cases.write],
        [names.fsync, cases.fsync],
        [names.before, cases.before],
      ],
      { baseline: names.memory, alloc: false },
    );
    const cN = await h.suite(
      titles[1],
      [
        [names.memory, () => {
          for (let i = 0; i < CONCURRENCY * PER_WORKER; i++) decideGate(runtime, { intent: nextIntent() });
        }],
        [names.write, concurrently(cases.write)],
        [names.fsync, concurrently(cases.fsync)],
        [names.before, concurrently(cases.before)],
      ],
      { baseline: names.memory, alloc: false },
    );
    const get = (suite, name) => suite?.results.find((r) => r.name === name && r.error === undefined);
    const w1 = get(c1, names.write);
    const m1 = get(c1, names.memory);
    if (w1 && m1) summary.push(`c=1: write ${(w1.medianNs / 1e6).toFixed(3)} ms = ${(w1.medianNs / m1.medianNs).toFixed(2)}× evaluate+sign in memory (${(m1.medianNs / 1e6).toFixed(3)} ms); target ≤ 3×`);
    const wN = get(cN, names.write);
    const fN = get(cN, names.fsync);
    const bN = get(cN, names.before);
    const per = CONCURRENCY * PER_WORKER;
    if (wN && fN) {
      const rate = (r) => Math.round((per * 1e9) / r.medianNs);
      summary.push(
        `c=${CONCURRENCY}: write ${rate(wN).toLocaleString('en')}/s, fsync ${rate(fN).toLocaleString('en')}/s = ${(wN.medianNs / fN.medianNs).toFixed(2)}× the write throughput (target ≥ 0.5×)` +
          (bN ? `; fsync per trace (before) ${rate(bN).toLocaleString('en')}/s = ${(wN.medianNs / bN.medianNs).toFixed(2)}×` : ''),
      );
    }
    if (summary.length) print(`\nsdk · issue 17 ratios (same run)\n${summary.join('\n')}`);
  } finally {
    await Promise.all([write.close(), fsync.close(), before.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
