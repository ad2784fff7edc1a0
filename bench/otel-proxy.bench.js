// OpenTelemetry export on `ward mcp proxy` (stdio): the added p50 per tools/call of `--otel`
// (spans, log records and metrics, OTLP/HTTP protobuf to a receiver in a process of its own)
// against the same proxy without it, `--trace-sync write` both (issue 30: ≤ 50 µs p50 per proxied
// call). Identical proxies differ by ±50 µs in p50 from one process to the next (placement, memory
// layout, JIT), as much as the effect measured, so each case runs in COPIES processes and its p50 is
// over all of their calls; rounds interleave every process of every case. The table also gives
// each case's CPU per call (the proxy process, every thread) and its main thread's alone: what a
// decision pays on the event loop, and what the export costs wherever it runs.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cpuTimeUs, formatNumber as fmt, formatTable, median } from './lib.js';
import { otlpSink } from './serve.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARD = path.join(repo, 'bin', 'ward.js');
const TINY = path.join(repo, 'fixtures', 'mcp', 'tiny-server.mjs');
const TITLE = 'otel · ward mcp proxy (stdio), added p50 per tools/call, export off vs on, c=1';
const COPIES = Number(process.env.WARD_BENCH_OTEL_COPIES ?? 3);
const POLICY = 'default_verdict: allow\n';

async function proxy(cwd, name, env) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--trace-sync', 'write', ...(env ? ['--otel'] : []), '--', process.execPath, TINY],
    cwd,
    stderr: 'ignore',
    env: { ...process.env, WARD_STATE_DIR: path.join(cwd, name), ...env },
  });
  const client = new Client({ name: 'ward-bench', version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid, latencies: [], cpu: 0, main: 0, calls: 0 };
}


export default async function otelProxyBench(h) {
  const cases = ['export off', 'export on (spans, log records, metrics)', 'spans only'];
  if (!h.matches(TITLE, cases)) return;
  const [calls, rounds] = process.argv.includes('--quick') ? [100, 3] : [300, 8];
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-otel-proxy-'));
  writeFileSync(path.join(cwd, 'policy.yaml'), POLICY);
  const collector = await otlpSink();
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint };
  const envOf = [undefined, endpoint, { ...endpoint, OTEL_LOGS_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' }];
  const procs = [];
  let seq = 0;
  try {
    for (let copy = 0; copy < COPIES; copy++) for (let c = 0; c < cases.length; c++) procs.push({ c, ...(await proxy(cwd, `p${procs.length}`, envOf[c])) });
    // Round 0 warms every process up (JIT, the telemetry thread's first batches) and is not counted.
    for (let round = 0; round <= rounds; round++) {
      for (const p of procs) {
        const cpu0 = cpuTimeUs(p.pid);
        const main0 = cpuTimeUs(p.pid, p.pid);
        for (let i = 0; i < calls; i++) {
          const t = performance.now();
          await p.client.callTool({ name: 'echo', arguments: { text: `call ${seq++}` } });
          if (round > 0) p.latencies.push(performance.now() - t);
        }
        if (round === 0) continue;
        p.cpu += cpuTimeUs(p.pid) - cpu0;
        p.main += cpuTimeUs(p.pid, p.pid) - main0;
        p.calls += calls;
      }
    }
  } finally {
    await Promise.all(procs.map((p) => p.client.close()));
    await collector.close();
    rmSync(cwd, { recursive: true, force: true });
  }
  const rows = cases.map((name, c) => {
    const mine = procs.filter((p) => p.c === c);
    const all = mine.flatMap((p) => p.latencies);
    const n = mine.reduce((a, p) => a + p.calls, 0);
    return { name, p50: median(all), p50s: mine.map((p) => median(p.latencies)), cpu: mine.reduce((a, p) => a + p.cpu, 0) / n, main: mine.reduce((a, p) => a + p.main, 0) / n, calls: all.length };
  });
  const off = rows[0];
  const header = ['case', 'calls', 'p50 ms (all processes)', 'added p50 µs', 'p50 per process ms', 'CPU µs/call', 'main thread µs/call'];
  const table = rows.map((r) => [r.name, String(r.calls), fmt(r.p50, 3), r === off ? '' : fmt((r.p50 - off.p50) * 1000), r.p50s.map((x) => fmt(x, 3)).join(' / '), fmt(r.cpu), fmt(r.main)]);
  const text = `\n${TITLE}, ${COPIES} processes per case, ${rounds} × ${calls} calls each, interleaved\n${formatTable(header, table)}\nexported: ${collector.stats.requests} OTLP requests, ${fmt(collector.stats.bytes)} bytes; target: ≤ 50 µs added p50\n`;
  (process.argv.includes('--json') ? process.stderr : process.stdout).write(text);
  h.suites.push({
    file: 'otel-proxy',
    title: TITLE,
    baseline: 'export off (same run)',
    options: { copies: COPIES, rounds, calls },
    results: rows.map((r) => ({ name: r.name, medianNs: r.p50 * 1e6, p50Ms: r.p50, addedP50Us: (r.p50 - off.p50) * 1000, cpuUsPerCall: r.cpu, mainThreadUsPerCall: r.main, ratio: r.p50 / off.p50 })),
  });
}
