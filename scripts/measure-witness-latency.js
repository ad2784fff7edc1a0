// What the witness costs per tools/call (issue 19, "Measure"): the same SDK client and server
// (fixtures/mcp/tiny-server.mjs, `echo` with distinct text on every call, so every result adds
// values to the session's taint memory and every call is matched against all of them), at
// concurrency 1, over stdio:
//
//   D   the server directly
//   W0  ward mcp proxy --no-witness            (the proxy before issue 19)
//   W1  ward mcp proxy                         (witness on: taint memory, tool scan)
//   W2  ward mcp proxy, policy with `results`  (W1 + result firewall: every result inspected and
//                                               its decision signed as a trace)
//
// Calls alternate D W0 W1 W2 (order rotated per call) so machine drift hits every path alike. "added" = path p50 −
// direct p50; the witness's share = (added W1 − added W0) / added W0 (target ≤ 20 %), and the
// result firewall's = (added W2 − added W1) / added W0. Needs the build (dist/); about 30–60 s.
//   node scripts/measure-witness-latency.js [--calls 200] [--rounds 6]

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARD = path.join(repo, 'bin', 'ward.js');
const TINY = path.join(repo, 'fixtures', 'mcp', 'tiny-server.mjs');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const CALLS = arg('--calls', 200);
const ROUNDS = arg('--rounds', 6);

const POLICY = `default_verdict: allow
rules:
  - name: no-tool-output-to-notes
    priority: 10
    effect: allow
    match: { tool_names: [write_note] }
    dataflow: { enabled: true, action: block, destination_kinds: [path] }
`;
const RESULTS = `${POLICY}results:
  credentials: { action: redact }
  invisible: { action: block }
`;

const dir = mkdtempSync(path.join(tmpdir(), 'ward-witness-measure-'));
writeFileSync(path.join(dir, 'policy.yaml'), POLICY);
writeFileSync(path.join(dir, 'results.yaml'), RESULTS);

async function client(args) {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: dir, stderr: 'ignore', env: { ...process.env, WARD_STATE_DIR: '' } });
  const c = new Client({ name: 'witness-measure', version: '1.0.0' });
  await c.connect(transport);
  await c.listTools();
  return c;
}

const ward = (policy, extra, state) => [WARD, 'mcp', 'proxy', '--policy', policy, '--state-dir', path.join(dir, state), '--arg-source', 'user', ...extra, '--', process.execPath, TINY];
const paths = {
  D: await client([TINY]),
  W0: await client(ward('policy.yaml', ['--no-witness'], 's0')),
  W1: await client(ward('policy.yaml', [], 's1')),
  W2: await client(ward('results.yaml', [], 's2')),
};
const samples = Object.fromEntries(Object.keys(paths).map((k) => [k, []]));
let seq = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < CALLS; i++) {
    // One call on each path in turn (order rotated per call), so load spikes on the shared machine
    // hit every path alike.
    const names = Object.keys(paths);
    const order = [...names.slice(i % names.length), ...names.slice(0, i % names.length)];
    for (const name of order) {
      // Distinct, token-like text (remembered by the witness: ≥ 12 characters, mixed classes).
      const text = `note-${round}-${i}-${(++seq).toString(36)}Xq7`;
      const t0 = performance.now();
      await paths[name].callTool({ name: 'echo', arguments: { text } });
      if (i >= 5) samples[name].push(performance.now() - t0); // the first calls of a round warm up
    }
  }
}
for (const c of Object.values(paths)) await c.close();
rmSync(dir, { recursive: true, force: true });

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const p50 = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, pct(v, 0.5)]));
const p99 = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, pct(v, 0.99)]));
const added = (k) => p50[k] - p50.D;
const fmt = (ms) => `${ms.toFixed(3)} ms`;
console.log(`witness · added latency per tools/call, stdio, concurrency 1, ${CALLS} calls × ${ROUNDS} rounds per path`);
for (const k of Object.keys(paths)) console.log(`  ${k.padEnd(3)} p50 ${fmt(p50[k])}  p99 ${fmt(p99[k])}${k === 'D' ? '' : `  added p50 ${fmt(added(k))}`}`);
const witness = (added('W1') - added('W0')) / added('W0');
const firewall = (added('W2') - added('W1')) / added('W0');
console.log(`  witness (taint + tool scan): +${fmt(added('W1') - added('W0'))} = ${(witness * 100).toFixed(1)} % of the proxy's added p50 (target ≤ 20 %)`);
console.log(`  result firewall (inspect + signed result trace): +${fmt(added('W2') - added('W1'))} = ${(firewall * 100).toFixed(1)} % more`);

// In process, without the processes and pipes (the machine's noise): what the witness adds to one
// call and its result, with 2,000 values already remembered.
const { SessionWitness } = await import('../dist/mcp/proxy/witness.js');
const { screenResult } = await import('../dist/mcp/proxy/result-firewall.js');
const { parsePolicyYaml } = await import('../dist/policy/load.js');
const w = new SessionWitness('measure');
const result = (t) => ({ content: [{ type: 'text', text: `echo: ${t}` }] });
for (let i = 0; i < 2000; i++) w.observe(`t${i}`, 'echo', result(`warm-${i}-${i.toString(36)}Xq7`));
const N = 5000;
const time = (f) => {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) f(i);
  return ((performance.now() - t0) / N) * 1000;
};
const matchMiss = time((i) => w.argumentSources({ text: `fresh-${i}-${i.toString(36)}Zz9` }));
const matchHit = time((i) => w.argumentSources({ text: `warm-${i % 2000}-${(i % 2000).toString(36)}Xq7` }));
const remember = time((i) => w.observe(`r${i}`, 'echo', result(`new-${i}-${i.toString(36)}Yy8`)));
console.log(`  in process, 2,000+ values remembered: match ${matchMiss.toFixed(1)} µs (no hit) / ${matchHit.toFixed(1)} µs (hit) per call, remember ${remember.toFixed(1)} µs per result`);
{
  const results = parsePolicyYaml(RESULTS).policy.results;
  const key = new Uint8Array(32);
  const inspect = time((i) => screenResult(result(`plain text ${i}`), results, key, ''));
  console.log(`  result firewall inspection (credentials + invisible, small result): ${inspect.toFixed(1)} µs per result (its signed trace follows the reply)`);
}
