// Ward's micro-benchmark harness. Plain ESM JavaScript so it runs against the built package
// (`../dist/index.js`) with no TypeScript tooling in the loop. See bench/README.md.
//
// Method, in short:
//   - warm up (JIT, inline caches) for `warmupMs`, calibrating a batch size so that one timed
//     batch lasts about `batchMs` (timer overhead then is noise);
//   - run `rounds` rounds; a round runs the function in a tight loop for `roundMs` (and at least
//     `minIterations` calls), timing batch by batch; the round's figure is the median ns/op of
//     its batches;
//   - the result is the median of the round medians, with the spread (min..max of the round
//     medians) as a noise indicator;
//   - `suite()` interleaves the rounds of its cases (A1 B1 C1 A2 B2 C2 ...) so that drift on a busy
//     machine hits every case alike, and computes ratios against a baseline measured in the same
//     run. Never compare numbers across runs or machines; compare ratios within one run.

import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import os from 'node:os';

/** @typedef {{ warmupMs?: number, rounds?: number, roundMs?: number, batchMs?: number, minIterations?: number, alloc?: boolean }} MeasureOptions */
/**
 * @typedef {object} Result
 * @property {string} name
 * @property {number} medianNs       median of the round medians, ns per call
 * @property {number} opsPerSec      1e9 / medianNs
 * @property {number[]} roundNs      each round's median ns per call
 * @property {number} minNs          fastest round median
 * @property {number} maxNs          slowest round median
 * @property {number} spreadPct      (maxNs - minNs) / medianNs * 100
 * @property {number} iterations     calls timed across all rounds
 * @property {number} batch          calls per timed batch
 * @property {number | null} allocBytesPerOp  crude estimate, see estimateAllocation()
 * @property {string} [error]        set when the case threw; no numbers then
 */

export const DEFAULTS = Object.freeze({
  warmupMs: 250,
  rounds: 7,
  roundMs: 100,
  batchMs: 1,
  minIterations: 10,
  alloc: true,
});

/** Options for `--quick`: fewer and shorter rounds, for smoke runs. Numbers are noisier. */
export const QUICK = Object.freeze({ warmupMs: 50, rounds: 3, roundMs: 30, batchMs: 0.5, minIterations: 3, alloc: true });

// Results are written here so that the engine cannot prove the work unused and drop it.
let sink;
export function blackhole(value) {
  sink = value;
  return sink;
}

const nowNs = () => performance.now() * 1e6;

/** A case being measured: its function, calibrated batch size and round figures. */
class Runner {
  constructor(name, fn, opts) {
    this.name = name;
    this.fn = fn;
    this.opts = opts;
    this.batch = 1;
    this.async = false;
    this.roundNs = [];
    this.iterations = 0;
  }

  /** One timed batch of `n` calls; returns elapsed ns. */
  async runBatch(n) {
    const fn = this.fn;
    if (this.async) {
      const t0 = nowNs();
      for (let i = 0; i < n; i++) sink = await fn();
      return nowNs() - t0;
    }
    const t0 = nowNs();
    for (let i = 0; i < n; i++) sink = fn();
    return nowNs() - t0;
  }

  async warmup() {
    const first = this.fn();
    if (first && typeof first.then === 'function') {
      this.async = true;
      await first;
    }
    const { warmupMs, batchMs } = this.opts;
    const deadline = nowNs() + warmupMs * 1e6;
    // Calibrate: grow the batch until one batch takes about batchMs.
    let n = 1;
    for (;;) {
      const ns = await this.runBatch(n);
      if (ns >= batchMs * 1e6 || n >= 1 << 24) break;
      n = ns <= 0 ? n * 8 : Math.min(n * 8, Math.max(n + 1, Math.ceil((n * batchMs * 1e6) / ns)));
    }
    this.batch = n;
    while (nowNs() < deadline) await this.runBatch(n);
  }

  async round() {
    const { roundMs, minIterations } = this.opts;
    const samples = [];
    let calls = 0;
    const deadline = nowNs() + roundMs * 1e6;
    do {
      const ns = await this.runBatch(this.batch);
      samples.push(ns / this.batch);
      calls += this.batch;
    } while (nowNs() < deadline || calls < minIterations);
    this.iterations += calls;
    this.roundNs.push(median(samples));
  }

  result() {
    const medianNs = median(this.roundNs);
    const minNs = Math.min(...this.roundNs);
    const maxNs = Math.max(...this.roundNs);
    return {
      name: this.name,
      medianNs,
      opsPerSec: 1e9 / medianNs,
      roundNs: this.roundNs.slice(),
      minNs,
      maxNs,
      spreadPct: ((maxNs - minNs) / medianNs) * 100,
      iterations: this.iterations,
      batch: this.batch,
      allocBytesPerOp: null,
    };
  }
}

/**
 * Measure one function. Returns the median ns/op over rounds (see the header comment).
 * @param {string} name
 * @param {() => unknown} fn  sync or async (a returned promise is awaited per call)
 * @param {MeasureOptions} [options]
 * @returns {Promise<Result>}
 */
export async function measure(name, fn, options = {}) {
  const opts = { ...DEFAULTS, ...options };
  const runner = new Runner(name, fn, opts);
  await runner.warmup();
  for (let r = 0; r < opts.rounds; r++) await runner.round();
  const result = runner.result();
  if (opts.alloc && !runner.async) result.allocBytesPerOp = estimateAllocation(fn);
  return result;
}

let forceGc;
function gcFunction() {
  if (forceGc !== undefined) return forceGc;
  if (typeof globalThis.gc === 'function') {
    forceGc = globalThis.gc;
  } else {
    // Expose V8's gc() without restarting node. Only affects contexts created afterwards.
    v8.setFlagsFromString('--expose-gc');
    forceGc = vm.runInNewContext('gc');
  }
  return forceGc;
}

const usedHeap = () => v8.getHeapStatistics().used_heap_size;
const newSpaceAvailable = () => {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return space ? space.space_available_size : 1 << 20;
};

/**
 * A CRUDE estimate of heap bytes allocated per call.
 *
 * How: force a full GC, then read V8's used heap size, run `n` calls, read it, run `n` more calls,
 * read it again, and take (third - second reading) / n. The first `n` calls absorb one-off costs
 * (a fresh allocation buffer after the GC, lazily created feedback); `n` is sized so that both
 * halves together fill at most a quarter of the free young generation, so that no scavenge should
 * run mid-sample, and samples that show a GC anyway (the heap shrank, or grew by more than was
 * free) are dropped. The bytes allocated by reading the heap statistics themselves are measured
 * and subtracted. The median of the remaining samples is reported.
 *
 * What it is not: it counts short-lived garbage and retained memory alike; it does not see
 * off-heap memory (Buffer/ArrayBuffer backing stores, e.g. the bytes of a node:crypto digest); it
 * includes whatever V8 allocates for itself meanwhile; for functions allocating more than a few
 * hundred KB per call, n = 1 and one-off costs are no longer amortised. Read it as an order of
 * magnitude (200 B/op vs 20 KB/op), never to compare 900 with 1,000.
 * @returns {number | null} bytes per call, or null when no sample was usable
 */
export function estimateAllocation(fn, { samples = 5, maxCalls = 100_000 } = {}) {
  const gc = gcFunction();
  // One sample: GC, then three readings around two runs of n calls; the first run absorbs the
  // one-off costs that follow a GC. Returns [bytes of the second run, free young space] or null.
  const sample = (n) => {
    gc();
    const free = newSpaceAvailable();
    const h0 = usedHeap();
    for (let i = 0; i < n; i++) sink = fn();
    const h1 = usedHeap();
    for (let i = 0; i < n; i++) sink = fn();
    const h2 = usedHeap();
    if (h1 < h0 || h2 < h1 || h2 - h0 > free) return null; // a GC ran: meaningless
    return [h2 - h1, free];
  };
  // What a reading of the heap statistics allocates by itself (sampled the same way, zero calls).
  let readCost = Infinity;
  for (let i = 0; i < 3; i++) {
    gc();
    usedHeap();
    const x = usedHeap();
    const y = usedHeap();
    readCost = Math.min(readCost, Math.max(0, y - x));
  }
  // Size n from a small probe so both runs fill at most a quarter of the free young space.
  const probe = sample(4);
  const perCall = probe ? Math.max(8, (probe[0] - readCost) / 4) : 1 << 20;
  const free = probe ? probe[1] : newSpaceAvailable();
  const n = Math.max(1, Math.min(maxCalls, Math.floor((free * 0.25) / (2 * perCall))));
  const perOp = [];
  for (let s = 0; s < samples; s++) {
    const got = sample(n);
    if (got) perOp.push(Math.max(0, got[0] - readCost) / n);
  }
  sink = undefined;
  return perOp.length === 0 ? null : median(perOp);
}

/** A number for a table: thousands separated, `digits` decimals. */
export function formatNumber(n, digits = 0) {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** CPU time (µs, user + system) of a process so far, or of one of its threads (`tid`); NaN where /proc is not there. */
export function cpuTimeUs(pid, tid) {
  const file = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  if (!existsSync(file)) return NaN;
  const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000; // clock ticks (USER_HZ = 100 on Linux)
}

export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Measure several cases together, interleaving their rounds, and attach ratios against
 * `baseline` (a case name in `cases`). ratio = medianNs / baselineMedianNs, so 3.0 means
 * "three times slower than the baseline", 0.5 "twice as fast".
 * @param {string} title
 * @param {Array<[string, () => unknown]>} cases
 * @param {MeasureOptions & { baseline?: string }} [options]
 */
export async function measureSuite(title, cases, options = {}) {
  const { baseline, ...rest } = options;
  const opts = { ...DEFAULTS, ...rest };
  const runners = cases.map(([name, fn]) => new Runner(name, fn, opts));
  const failed = new Map();
  for (const runner of runners) {
    try {
      await runner.warmup();
    } catch (err) {
      failed.set(runner, err);
    }
  }
  const live = runners.filter((r) => !failed.has(r));
  for (let r = 0; r < opts.rounds; r++) {
    for (const runner of live) await runner.round();
  }
  const results = runners.map((runner) => {
    if (failed.has(runner)) {
      const err = failed.get(runner);
      return { name: runner.name, error: err instanceof Error ? err.message : String(err) };
    }
    const result = runner.result();
    if (opts.alloc && !runner.async) result.allocBytesPerOp = estimateAllocation(runner.fn);
    return result;
  });
  const base = results.find((r) => r.name === baseline && r.error === undefined);
  for (const r of results) {
    if (r.error === undefined) r.ratio = base ? r.medianNs / base.medianNs : null;
  }
  return { title, baseline: base ? base.name : null, options: opts, results };
}

// ---------------------------------------------------------------------------------------------
// Printing

function fmtNum(value, digits) {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function fmtMicros(ns) {
  const us = ns / 1000;
  if (us >= 100) return fmtNum(us, 0);
  if (us >= 10) return fmtNum(us, 1);
  if (us >= 1) return fmtNum(us, 2);
  return fmtNum(us, 3);
}

function fmtBytes(bytes) {
  if (bytes === null || bytes === undefined) return 'n/a';
  if (bytes >= 10 * 1024) return `~${fmtNum(bytes / 1024, 0)} KB`;
  return `~${fmtNum(bytes, 0)} B`;
}

/**
 * Render a suite as a text table: median µs/op, ops/s, round spread, ratio vs the baseline and the
 * allocation estimate.
 */
export function formatSuite(suite) {
  const header = ['benchmark', 'µs/op (median)', 'ops/s', 'spread', suite.baseline ? `× ${suite.baseline}` : 'ratio', 'alloc/op'];
  const rows = suite.results.map((r) => {
    if (r.error !== undefined) return [r.name, 'ERROR', r.error, '', '', ''];
    return [
      r.name + (r.name === suite.baseline ? ' (baseline)' : ''),
      fmtMicros(r.medianNs),
      fmtNum(r.opsPerSec, 0),
      `±${fmtNum(r.spreadPct / 2, 1)}%`,
      r.ratio === null || r.ratio === undefined ? '–' : `${fmtNum(r.ratio, r.ratio >= 10 ? 1 : 2)}×`,
      fmtBytes(r.allocBytesPerOp),
    ];
  });
  return `\n${suite.title}\n${formatTable(header, rows)}`;
}

/** A text table: the first column left-aligned, the others right-aligned, a rule under the header. */
export function formatTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function environment() {
  const cpus = os.cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform}-${process.arch}`,
    cpu: cpus.length > 0 ? cpus[0].model.trim() : 'unknown',
    cpus: cpus.length,
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    date: new Date().toISOString(),
  };
}

/**
 * The object handed to each `*.bench.js` default export.
 * @param {{ file: string, filter?: RegExp | null, options?: MeasureOptions, onSuite?: (suite: object) => void, log?: (line: string) => void }} init
 */
export function createHarness({ file, filter = null, options = {}, onSuite = () => {}, log = () => {} }) {
  const suites = [];
  /** Would a suite with this title (and these case names) run under the current filter? */
  const matches = (title, caseNames = []) =>
    !filter || filter.test(file) || filter.test(title) || caseNames.some((name) => filter.test(name));
  return {
    file,
    suites,
    /**
     * Lets a bench skip expensive setup (filling a store, spawning processes) when the name filter
     * excludes its suites: `if (!h.matches('store · query', ['list 50'])) return;`
     */
    matches,
    /** Measure one function on its own (no ratio). */
    measure: (name, fn, opts = {}) => measure(name, fn, { ...options, ...opts }),
    blackhole,
    /**
     * Measure `cases` together; `opts.baseline` names the case the others are compared to. With a
     * name filter, a suite runs when the filter matches the file, the title or any case name (the
     * matching cases plus the baseline are measured).
     */
    async suite(title, cases, opts = {}) {
      let selected = cases;
      if (!matches(title, cases.map(([name]) => name))) return null;
      if (filter && !filter.test(file) && !filter.test(title)) {
        selected = cases.filter(([name]) => filter.test(name) || name === opts.baseline);
        if (!selected.some(([name]) => filter.test(name))) return null;
      }
      log(`running ${file} › ${title} (${selected.length} cases)`);
      const suite = await measureSuite(title, selected, { ...options, ...opts });
      suite.file = file;
      suites.push(suite);
      onSuite(suite);
      return suite;
    },
  };
}
