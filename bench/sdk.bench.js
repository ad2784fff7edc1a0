// The SDK's `ward.evaluate`: a full decision plus its signed trace, by durability, against the same
// decision evaluated and signed in memory (decideGate with no I/O), measured in the same run.
//
//   write: the trace file is published (temporary name + link, no fsync) before evaluate resolves.
//   fsync: the trace is in Ward's O_DSYNC journal, as the MCP proxy's (group commit across concurrent calls)
//          and its file is published, before evaluate resolves.
//   fsync per trace (before): what the SDK did until `durability`: FileTraceSink writing and
//          fsyncing each trace off-thread, with a shared directory fsync.
//
// Issue 17 targets: `write` ≤ 3× evaluate+sign in memory at concurrency 1; `fsync` at concurrency 16
// ≥ 0.5× the `write` throughput. Both ratios are printed after the tables; the throughput ratio
// compares each mode's ratio to the in-memory baseline of its own suite.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ward, generateSigningKey } from '../dist/index.js';
import { decideGate } from '../dist/decision/gate-run.js';
import { FileTraceSink, runGateAsync } from '../dist/decision/trace-sink.js';

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

const NAMES = {
  memory: 'evaluate + sign in memory',
  write: "ward.evaluate, durability 'write'",
  fsync: "ward.evaluate, durability 'fsync'",
  before: 'fsync per trace (the SDK before durability)',
};

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
  const titles = {
    write1: 'sdk · ward.evaluate, concurrency 1, write',
    writeN: `sdk · ward.evaluate, concurrency ${CONCURRENCY}, write (${CONCURRENCY * PER_WORKER} decisions per op)`,
    fsyncN: `sdk · ward.evaluate, concurrency ${CONCURRENCY}, fsync (${CONCURRENCY * PER_WORKER} decisions per op)`,
    fsync1: 'sdk · ward.evaluate, concurrency 1, fsync',
  };
  if (!Object.values(titles).some((t) => h.matches(t, Object.values(NAMES)))) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'ward-bench-sdk-'));
  const key = generateSigningKey();
  const ward = (name, durability) => new Ward({ policy: POLICY, stateDir: path.join(dir, name), signingKey: key, approvalDir: false, durability });
  const write = ward('write', 'write');
  const fsync = ward('fsync', 'fsync');
  // The in-memory floor: the same gate runtime (policy, key), decided and signed, nothing written.
  const runtime = { policy: write.policy, signingKey: key, traceFormat: 'ward', traceDir: path.join(dir, 'mem'), rateLimitStatePath: path.join(dir, 'mem.json'), profile: 'standard', captureIntents: false };
  const before = new FileTraceSink(path.join(dir, 'before', 'traces'));
  const check = await write.evaluate(nextIntent());
  if (check.verdict !== 'allow') throw new Error(`bench: expected allow, got ${check.verdict}`);

  const one = {
    memory: () => decideGate(runtime, { intent: nextIntent() }),
    write: () => write.evaluate(nextIntent()),
    fsync: () => fsync.evaluate(nextIntent()),
    before: () => runGateAsync(before, runtime, { intent: nextIntent() }),
  };
  const many = {
    memory: () => {
      for (let i = 0; i < CONCURRENCY * PER_WORKER; i++) decideGate(runtime, { intent: nextIntent() });
    },
    write: concurrently(one.write),
    fsync: concurrently(one.fsync),
    before: concurrently(one.before),
  };
  const opts = { baseline: NAMES.memory, alloc: false };
  const suite = (title, cases, keys) => h.suite(title, keys.map((k) => [NAMES[k], cases[k]]), opts);
  try {
    // The modes that sync leave disk work behind them (the journal's checkpoint fsyncs each trace
    // file; the old path's fsyncs), which would slow the metadata operations of `write` rounds
    // interleaved with theirs: `write` is measured first, in suites of its own.
    const w1 = await suite(titles.write1, one, ['memory', 'write']);
    const wN = await suite(titles.writeN, many, ['memory', 'write']);
    const fN = await suite(titles.fsyncN, many, ['memory', 'fsync', 'before']);
    await suite(titles.fsync1, one, ['memory', 'fsync', 'before']);

    const get = (s, k) => s?.results.find((r) => r.name === NAMES[k] && r.error === undefined);
    const summary = [];
    const ms = (r) => `${(r.medianNs / 1e6).toFixed(3)} ms`;
    if (get(w1, 'write') && get(w1, 'memory')) {
      summary.push(`c=1: write ${ms(get(w1, 'write'))} = ${get(w1, 'write').ratio.toFixed(2)}× evaluate+sign in memory (${ms(get(w1, 'memory'))}); target ≤ 3×`);
    }
    const per = CONCURRENCY * PER_WORKER;
    const rate = (r) => Math.round((per * 1e9) / r.medianNs).toLocaleString('en');
    if (get(wN, 'write') && get(fN, 'fsync')) {
      // Each suite's figures relative to its own in-memory baseline, so drift between the suites cancels.
      const rel = (k, s) => get(s, k).ratio;
      summary.push(
        `c=${CONCURRENCY}: write ${rate(get(wN, 'write'))}/s (${rel('write', wN).toFixed(2)}× memory), fsync ${rate(get(fN, 'fsync'))}/s (${rel('fsync', fN).toFixed(2)}× memory): ` +
          `fsync throughput = ${(rel('write', wN) / rel('fsync', fN)).toFixed(2)}× write (target ≥ 0.5×)` +
          (get(fN, 'before') ? `; fsync per trace (before) ${rate(get(fN, 'before'))}/s = ${(rel('write', wN) / rel('before', fN)).toFixed(2)}× write` : ''),
      );
    }
    if (summary.length) print(`\nsdk · issue 17 ratios (same run)\n${summary.join('\n')}`);
  } finally {
    await Promise.all([write.close(), fsync.close(), before.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
