// Figures for docs/witness.md "Memory" (not a test, no assertions): the heap one session's
// TaintMemory takes with 10,000 remembered values, the time of one match() over a 4 KiB argument
// at that size, of one remember() of a 4 KiB multi-line result, and of one inspectResult() of it
// with every detector on. `npm run build` first, then `node --expose-gc scripts/measure-taint-memory.js`.
// Values are 40-character tokens, one per result (as a file read or an API token would be); the
// remembered values themselves are not kept, so the figure does not grow with value length.

import { randomBytes } from 'node:crypto';
import { TaintMemory } from '../dist/witness/taint.js';
import { inspectResult } from '../dist/witness/results.js';
import { parsePolicyYaml } from '../dist/policy/index.js';

const VALUES = 10_000;
const RUNS = 11;

function heap() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

if (!globalThis.gc) console.error('run with --expose-gc for stable figures');
const bytes = [];
// Sessions stay referenced until the end, so each delta is one live session's heap.
const live = [];
const matchMs = [];
for (let run = 0; run < RUNS; run++) {
  const results = Array.from({ length: VALUES }, () => ({ content: [{ type: 'text', text: randomBytes(30).toString('base64') }] }));
  const before = heap();
  const mem = new TaintMemory();
  for (const [i, r] of results.entries()) mem.remember(r, { traceId: `trace-${run}-${Math.floor(i / 10)}`, toolName: 'read_file' });
  live.push(mem);
  const after = heap();
  if (mem.size !== VALUES) throw new Error(`expected ${VALUES} values, got ${mem.size}`);
  bytes.push(after - before);
  const arg = { body: randomBytes(3072).toString('base64') };
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 100; i++) mem.match(arg);
  matchMs.push(Number(process.hrtime.bigint() - t0) / 1e6 / 100);
}
const perSession = median(bytes);
console.log(`values per session: ${VALUES}`);
const mib = (b) => (b / 1048576).toFixed(2);
// The spread comes from when V8 grows the maps' backing stores and collects the inputs.
console.log(`heap per session (median of ${RUNS}): ${mib(perSession)} MiB (${Math.round(perSession / VALUES)} B per value; range ${mib(Math.min(...bytes))}–${mib(Math.max(...bytes))} MiB)`);
console.log(`match() over a 4 KiB argument at ${VALUES} values (median): ${median(matchMs).toFixed(3)} ms`);

const text = Array.from({ length: 64 }, (_, i) => `line ${i}: ${randomBytes(24).toString('base64')} some ordinary words here`).join('\n');
const result = { content: [{ type: 'text', text }] };
const config = parsePolicyYaml(
  "results: {credentials: {action: redact}, invisible: {action: redact}, oversize: {action: block}, pii: {action: redact, patterns: [{name: ssn, regex: '\\b\\d{3}-\\d{2}-\\d{4}\\b'}]}}\n",
).policy.results;
const rememberMs = [];
const inspectMs = [];
for (let run = 0; run < RUNS; run++) {
  const mem = new TaintMemory();
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < 100; i++) mem.remember(result, { traceId: `t${i}`, toolName: 'read_file' });
  rememberMs.push(Number(process.hrtime.bigint() - t0) / 1e6 / 100);
  t0 = process.hrtime.bigint();
  for (let i = 0; i < 100; i++) inspectResult(result, config);
  inspectMs.push(Number(process.hrtime.bigint() - t0) / 1e6 / 100);
}
console.log(`remember() of a ${Buffer.byteLength(text)}-byte, 64-line result (median): ${median(rememberMs).toFixed(3)} ms`);
console.log(`inspectResult() of it, every detector on (median): ${median(inspectMs).toFixed(3)} ms`);
