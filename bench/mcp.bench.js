// MCP proxy overhead: per tools/call, the same SDK client and the same server, directly and through
// `ward mcp proxy`, in the same run, over stdio and Streamable HTTP, at concurrency 1, 8 and 32,
// with distinct arguments on every call. The proxy decides every call with the policy, signs the
// trace and queues it durably before the client gets the result: over stdio both with
// `--trace-sync write` (the default: journal write reached the OS) and `--trace-sync fsync`.
//
// Method: for each transport, both paths are connected once; rounds alternate direct and proxied
// (D P D P ...) so machine drift hits both; every call's latency is recorded; p50/p99 are over all
// calls of a path at a concurrency. "added" = proxied − direct (same percentile), "ratio" = proxied / direct.
// Needs the build (dist/) and the devDependency servers; about 30–60 s.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARD = path.join(repo, 'bin', 'ward.js');
const TINY = path.join(repo, 'fixtures', 'mcp', 'tiny-server.mjs');
const TITLE = 'mcp proxy · added latency per tools/call';
const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const print = (text) => (json ? process.stderr : process.stdout).write(text + '\n');

const POLICY = `default_verdict: allow
rules:
  - name: block-writes
    priority: 10
    effect: block
    match:
      tool_names: [write_note]
  - name: high-risk-paths
    priority: 20
    effect: require_approval
    match:
      target_kinds: [path]
      target_values: [/etc/shadow]
`;

const CONCURRENCY = [1, 8, 32];
// Calls per worker per round, and rounds, per concurrency level (kept small enough for ~60 s).
const PLAN = quick ? { 1: [100, 3], 8: [15, 3], 32: [5, 3] } : { 1: [250, 6], 8: [40, 5], 32: [12, 5] };

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function stdioClient(args, cwd) {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd, stderr: 'ignore', env: { ...process.env, WARD_STATE_DIR: '' } });
  const client = new Client({ name: 'ward-bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function httpClient(url) {
  // The SDK transport lends its lifetime signal to every fetch; per-request signals keep it from
  // collecting an abort listener per call (as `ward mcp proxy --upstream-url` does).
  const { perRequestSignals } = await import('../dist/mcp/proxy/sdk-peer.js');
  const client = new Client({ name: 'ward-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: perRequestSignals(fetch) }));
  return client;
}

/** Start a process and resolve with the first match of `pattern` on the given stream. */
function startAndWait(args, cwd, pattern, stream, procs) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, WARD_STATE_DIR: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} from ${args.join(' ')}: ${out}`)), 20_000);
    child[stream].on('data', (d) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)));
  });
}

let seq = 0;
/** `workers` concurrent loops of `perWorker` sequential calls; returns each call's latency (ms). */
async function burst(client, workers, perWorker, label) {
  const lat = [];
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) {
        const args = { text: `${label}-${w}-${++seq}` }; // distinct arguments: distinct intents and traces
        const t0 = performance.now();
        const r = await client.callTool({ name: 'echo', arguments: args });
        lat.push(performance.now() - t0);
        if (r.isError) throw new Error(`unexpected error result: ${JSON.stringify(r)}`);
      }
    }),
  );
  return lat;
}

/** Direct and each proxied variant at every concurrency, in alternating rounds (D P1 P2 D P1 P2 ...). */
async function compare(transport, direct, variants) {
  const rows = [];
  for (const c of CONCURRENCY) {
    const [perWorker, rounds] = PLAN[c];
    await burst(direct, c, Math.ceil(perWorker / 3), 'warm'); // JIT, connection pools
    for (const v of variants) await burst(v.client, c, Math.ceil(perWorker / 3), 'warm');
    const d = [];
    const p = variants.map(() => []);
    for (let r = 0; r < rounds; r++) {
      d.push(...(await burst(direct, c, perWorker, 'd')));
      for (const [i, v] of variants.entries()) p[i].push(...(await burst(v.client, c, perWorker, 'p')));
    }
    d.sort((a, b) => a - b);
    for (const [i, v] of variants.entries()) {
      const lat = p[i].sort((a, b) => a - b);
      const row = {
        name: `${transport}${v.label ? ` ${v.label}` : ''} · concurrency ${c}`,
        calls: d.length,
        directP50Ms: pct(d, 0.5),
        directP99Ms: pct(d, 0.99),
        proxiedP50Ms: pct(lat, 0.5),
        proxiedP99Ms: pct(lat, 0.99),
      };
      row.addedP50Ms = row.proxiedP50Ms - row.directP50Ms;
      row.addedP99Ms = row.proxiedP99Ms - row.directP99Ms;
      row.ratioP50 = row.proxiedP50Ms / row.directP50Ms;
      rows.push(row);
      print(`  ${row.name}: +${row.addedP50Ms.toFixed(3)} ms p50 (${row.ratioP50.toFixed(2)}×)`);
    }
  }
  return rows;
}

function table(rows) {
  const header = ['path', 'calls', 'direct p50', 'ward p50', 'added p50', 'direct p99', 'ward p99', 'added p99', '× p50'];
  const f = (ms) => `${ms.toFixed(3)} ms`;
  const body = rows.map((r) => [r.name, String(r.calls), f(r.directP50Ms), f(r.proxiedP50Ms), f(r.addedP50Ms), f(r.directP99Ms), f(r.proxiedP99Ms), f(r.addedP99Ms), `${r.ratioP50.toFixed(2)}×`]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [`\n${TITLE}`, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** Where the proxy's per-call time goes, measured in-process in the same run (no processes, no pipes). */
async function components(h) {
  const { intentForCall, DEFAULT_TARGET_MAPPING, Gatekeeper, JournalTraceSink } = await import('../dist/mcp/proxy/index.js');
  const { parsePolicyYaml } = await import('../dist/policy/index.js');
  const { generateSigningKey } = await import('../dist/keys/index.js');
  const { decideGate } = await import('../dist/decision/gate-run.js');
  const { evaluate } = await import('../dist/gate/evaluate.js');
  const { nowUTC } = await import('../dist/canon/gotime.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'ward-bench-mcpc-'));
  const key = generateSigningKey();
  const runtime = { policy: parsePolicyYaml(POLICY), signingKey: key, traceFormat: 'ward', traceDir: path.join(dir, 't'), rateLimitStatePath: path.join(dir, 'rl'), profile: 'standard' };
  const mapping = { toolPrefix: '', targets: DEFAULT_TARGET_MAPPING, argSource: 'tool_output', workspace: dir, riskClass: 'high' };
  const sink = new JournalTraceSink(path.join(dir, 't'), path.join(dir, 'j'), 'fsync');
  const sinkWrite = new JournalTraceSink(path.join(dir, 'tw'), path.join(dir, 'jw'), 'write');
  const gate = new Gatekeeper({ runtime, sink: { write: async () => 'x', close: async () => undefined }, mapping, approvalDir: dir, approvalKeys: [key] });
  let n = 0;
  const call = () => ({ name: 'echo', arguments: { text: `c${++n}` }, sessionId: 's', runId: 'r', clientName: 'bench', createdAt: '2026-11-21T10:00:00Z' });
  const trace = decideGate(runtime, { intent: intentForCall(call(), mapping, false) }).trace;
  try {
    await h.suite(
      'mcp proxy · per-call work inside the proxy (in-process)',
      [
        ['map + evaluate (before forwarding)', () => evaluate(runtime.policy, intentForCall(call(), mapping, false), { now: nowUTC() })],
        ['decide: map + evaluate + sign (full)', () => gate.decide(call(), 'c')],
        ['journal, trace-sync fsync: append + fdatasync', () => sink.write(trace)],
        ['journal, trace-sync write: append to the OS', () => sinkWrite.write(trace)],
      ],
      { baseline: 'map + evaluate (before forwarding)', alloc: false },
    );
  } finally {
    await Promise.all([sink.close(), sinkWrite.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function (h) {
  await components(h);
  if (!h.matches(TITLE, ['stdio', 'streamable-http'])) return;
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-mcp-'));
  writeFileSync(path.join(cwd, 'policy.yaml'), POLICY);
  const procs = [];
  const clients = [];
  const rows = [];
  try {
    // stdio: client → server, and client → ward → server (ward starts the server).
    // Both trace-sync modes: answered once the journal write reached the OS (default), or once it is fdatasynced.
    const sd = await stdioClient([TINY], cwd);
    const proxy = (sync) => stdioClient([WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--trace-sync', sync, '--', process.execPath, TINY], cwd);
    const sw = await proxy('write');
    const sf = await proxy('fsync');
    clients.push(sd, sw, sf);
    process.stderr.write(`running ${h.file} › ${TITLE} (stdio)\n`);
    rows.push(...(await compare('stdio', sd, [{ label: '(trace-sync write)', client: sw }, { label: '(trace-sync fsync)', client: sf }])));

    // Streamable HTTP: client → server, and client → ward (--listen) → server (--upstream-url).
    const [, port] = await startAndWait([TINY, '--http', '0'], cwd, /\{"port":(\d+)\}/, 'stdout', procs);
    const upstream = `http://127.0.0.1:${port}/mcp`;
    const [, listenUrl] = await startAndWait(
      [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--listen', '127.0.0.1:0', '--upstream-url', upstream],
      cwd,
      /listening on (http:\/\/\S+)/,
      'stderr',
      procs,
    );
    const hd = await httpClient(upstream);
    const hp = await httpClient(listenUrl);
    clients.push(hd, hp);
    process.stderr.write(`running ${h.file} › ${TITLE} (streamable-http)\n`);
    rows.push(...(await compare('streamable-http', hd, [{ label: '', client: hp }])));
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.all(
      procs.map((p) => (p.exitCode === null ? new Promise((r) => (p.once('exit', r), p.kill('SIGTERM'))) : undefined)),
    );
    await new Promise((r) => setTimeout(r, 500)); // the stdio proxy flushes its traces after its client leaves
    try {
      rmSync(cwd, { recursive: true, force: true });
    } catch {
      // a proxy still finishing; the temp dir is left behind
    }
  }
  print(table(rows));
  // Same shape as harness suites (medianNs = proxied p50, ratio vs direct p50) so --json carries it.
  h.suites.push({
    title: TITLE,
    file: h.file,
    baseline: 'direct',
    results: rows.map((r) => ({ ...r, medianNs: r.proxiedP50Ms * 1e6, ratio: r.ratioP50 })),
  });
}
