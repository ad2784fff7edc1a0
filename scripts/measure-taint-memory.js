// Figures for docs/witness.md "Memory" (not a test, no assertions): the heap one session's
// TaintMemory takes with 10,000 remembered values, and the time of one match() over a 4 KiB
// argument at that size. `npm run build` first, then `node --expose-gc scripts/measure-taint-memory.js`.
// Values are 40-character tokens, one per result (as a file read or an API token would be); the
// remembered values themselves are not kept, so the figure does not grow with value length.

import { randomBytes } from 'node:crypto';
import { TaintMemory } from '../dist/witness/taint.js';

const VALUES = 10_000;
const RUNS = 5;

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
console.log(`heap per session (median of ${RUNS}): ${(perSession / 1048576).toFixed(2)} MiB (${Math.round(perSession / VALUES)} B per value)`);
console.log(`match() over a 4 KiB argument at ${VALUES} values (median): ${median(matchMs).toFixed(3)} ms`);
