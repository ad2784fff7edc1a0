// MCP proxy overhead: per tools/call, the same SDK client and the same server, directly and through
// `ward mcp proxy`, in the same run, over stdio and Streamable HTTP, at concurrency 1, 8 and 32,
// with distinct arguments on every call. The proxy decides every call with the policy, signs the
// trace and queues it durably before the client gets the result: over stdio both with
// `--trace-sync write` (the default: journal write reached the OS) and `--trace-sync fsync`.
//
// Baselines measured in the same run (issue 17, target 3): over stdio a bare Node byte relay
// (bench/relay.mjs: spawns the server, pipes bytes both ways, parses nothing), the floor for any
// proxy in Node, and the same relay with --sign: each tools/call line parsed, hashed, signed with
// Ed25519 and the signature written to a journal before the line is forwarded — the least any
// proxy keeping Ward's rule (forward only what is decided, signed and written) pays; over Streamable HTTP the npm package `mcp-proxy` (a devDependency, 6.2.0: the
// newest release that installs on Node 20 without warnings), a peer bridge from Streamable HTTP to
// a stdio server, beside `ward mcp proxy --listen` bridging to the same stdio server; both against
// the stdio server reached directly. "added × base" is Ward's added p50 over the baseline's.
//
// Method: for each transport, every path is connected once; rounds alternate direct and proxied
// (D R P1 P2 D R P1 P2 ...) so machine drift hits all alike; every call's latency is recorded;
// p50/p99 are over all calls of a path at a concurrency. "added" = proxied − direct (same
// percentile), "×" = proxied / direct.
// Needs the build (dist/) and the devDependency servers; about 60–90 s.

import { spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { otlpSink } from './serve.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARD = path.join(repo, 'bin', 'ward.js');
const TINY = path.join(repo, 'fixtures', 'mcp', 'tiny-server.mjs');
const RELAY = path.join(repo, 'bench', 'relay.mjs');
const MCP_PROXY = path.join(repo, 'node_modules', 'mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs');
const TITLE = 'mcp proxy · added latency per tools/call';
const quick = process.argv.includes('--quick');
// WARD_BENCH_MCP=stdio or =http runs only that transport (profiling); both by default.
const only = process.env.WARD_BENCH_MCP;
// WARD_BENCH_MCP_OTHER=<path to another build's bin/ward.js> adds that build's proxy (stdio,
// --trace-sync write; and --listen → stdio) to the same rounds: before/after figures from one run.
const OTHER = process.env.WARD_BENCH_MCP_OTHER;
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

async function stdioClient(args, cwd, env = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd, stderr: 'ignore', env: { ...process.env, WARD_STATE_DIR: path.join(cwd, '.ward-state'), ...env } });
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
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, WARD_STATE_DIR: path.join(cwd, '.ward-state') }, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** A TCP port free on loopback right now (for a server that cannot report the port it bound). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Resolve once something accepts connections on the port (20 s at most). */
async function waitForPort(port) {
  const until = Date.now() + 20_000;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let seq = 0;
/** The stdio client of the server reached directly (set once connected). */
let stdioDirect;
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
  const directName = direct === stdioDirect ? 'stdio' : transport;
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
    const level = [];
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
      row.direct = directName;
      level.push([v, row]);
    }
    for (const [v, row] of level) {
      const base = v.baseline ? level.find(([b]) => b.label === v.baseline)?.[1] : undefined;
      if (base) {
        row.baseline = base.name;
        row.addedVsBaselineP50 = row.addedP50Ms / base.addedP50Ms;
      }
      rows.push(row);
      const vs = base ? `; ${row.addedVsBaselineP50.toFixed(2)}× the added p50 of ${v.baseline}` : '';
      print(`  ${row.name}: +${row.addedP50Ms.toFixed(3)} ms p50 (${row.ratioP50.toFixed(2)}×${vs})`);
    }
  }
  return rows;
}

function table(rows) {
  const header = ['path', 'calls', 'direct p50', 'via p50', 'added p50', 'direct p99', 'via p99', 'added p99', '× p50', 'added × base'];
  const f = (ms) => `${ms.toFixed(3)} ms`;
  const body = rows.map((r) => [
    r.name,
    String(r.calls),
    f(r.directP50Ms),
    f(r.proxiedP50Ms),
    f(r.addedP50Ms),
    f(r.directP99Ms),
    f(r.proxiedP99Ms),
    f(r.addedP99Ms),
    `${r.ratioP50.toFixed(2)}×`,
    r.addedVsBaselineP50 === undefined ? '' : `${r.addedVsBaselineP50.toFixed(2)}×`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [
    `\n${TITLE}`,
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map(line),
    '"direct": the server over stdio, except for --upstream-url (the server over Streamable HTTP). Baselines: the bare',
    'relay (stdio), mcp-proxy (HTTP → stdio). "added × base" = added p50 / the baseline\'s added p50, same run.',
  ].join('\n');
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

const STARTUP_TITLE = 'mcp proxy · start-up (stdio)';
const STARTUP_SERVER = path.join(repo, 'bench', 'startup-server.mjs');

/**
 * One launch: the process starts and is sent `initialize` at once (as a client does); resolves with
 * launch → server process began (its performance.timeOrigin, written to a file) and launch →
 * `initialize` answered, in ms. Then stdin is closed and the exit awaited.
 */
function launchOnce(args, cwd) {
  const mark = path.join(cwd, `mark-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const launched = performance.timeOrigin + performance.now();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, WARD_STATE_DIR: path.join(cwd, '.ward-state'), STARTUP_MARK: mark },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ward-bench', version: '1' } } }) + '\n');
  const exited = new Promise((r) => child.once('exit', r));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no initialize answer from ${args.join(' ')}`))), 30_000);
    let out = '';
    let answered = false;
    child.stdout.on('data', (d) => {
      out += d.toString();
      if (answered || !out.includes('\n')) return;
      answered = true;
      const answeredMs = performance.timeOrigin + performance.now() - launched;
      clearTimeout(timer);
      child.stdin.end();
      exited.then(() => {
        const spawnedMs = Number(readFileSync(mark, 'utf8')) - launched;
        rmSync(mark, { force: true });
        resolve({ spawnedMs, answeredMs });
      }, reject);
    });
  });
}

/**
 * Start-up, same run (issue 32): launch → server spawned and launch → `initialize` answered, for the
 * server alone, the bare relay (bench/relay.mjs) and `ward mcp proxy`, launches interleaved.
 */
async function startup(h) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-start-'));
  writeFileSync(path.join(cwd, 'policy.yaml'), POLICY);
  const server = [STARTUP_SERVER];
  const paths = [
    { label: 'server alone (no proxy)', args: server },
    { label: 'bare relay (baseline)', args: [RELAY, '--', process.execPath, ...server] },
    { label: 'ward mcp proxy', args: [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--', process.execPath, ...server] },
    ...(OTHER ? [{ label: 'other build', args: [OTHER, 'mcp', 'proxy', '--policy', 'policy.yaml', '--', process.execPath, ...server] }] : []),
  ];
  const rounds = quick ? 5 : 15;
  const got = new Map(paths.map((p) => [p.label, { spawned: [], answered: [] }]));
  process.stderr.write(`running ${h.file} › ${STARTUP_TITLE}\n`);
  try {
    for (const p of paths) await launchOnce(p.args, cwd); // warm-up: .ward/ and its key exist afterwards
    for (let r = 0; r < rounds; r++) {
      for (const p of paths) {
        const { spawnedMs, answeredMs } = await launchOnce(p.args, cwd);
        got.get(p.label).spawned.push(spawnedMs);
        got.get(p.label).answered.push(answeredMs);
      }
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
  const median = (xs) => pct([...xs].sort((a, b) => a - b), 0.5);
  const base = got.get('bare relay (baseline)');
  const rows = paths.map((p) => {
    const g = got.get(p.label);
    return {
      name: p.label,
      launches: rounds,
      spawnedP50Ms: median(g.spawned),
      answeredP50Ms: median(g.answered),
      spawnedVsRelay: median(g.spawned) / median(base.spawned),
      answeredVsRelay: median(g.answered) / median(base.answered),
    };
  });
  const f = (ms) => `${ms.toFixed(1)} ms`;
  print(`\n${STARTUP_TITLE} · ${rounds} launches per path, interleaved, medians`);
  for (const r of rows) {
    print(`${r.name.padEnd(26)} spawned ${f(r.spawnedP50Ms).padStart(9)} (${r.spawnedVsRelay.toFixed(2)}× relay)   initialize answered ${f(r.answeredP50Ms).padStart(9)} (${r.answeredVsRelay.toFixed(2)}× relay)`);
  }
  print('"spawned": launch → the server process began; "answered": launch → the initialize reply on stdout (sent at launch).');
  h.suites.push({
    title: STARTUP_TITLE,
    file: h.file,
    baseline: 'bare relay (baseline)',
    results: rows.map((r) => ({ ...r, medianNs: r.answeredP50Ms * 1e6, ratio: r.answeredVsRelay })),
  });
}

export default async function (h) {
  if (!only) await components(h);
  if (!only && h.matches(STARTUP_TITLE, ['start-up'])) await startup(h);
  if (!h.matches(TITLE, ['stdio', 'streamable-http'])) return;
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-mcp-'));
  writeFileSync(path.join(cwd, 'policy.yaml'), POLICY);
  const procs = [];
  const clients = [];
  const rows = [];
  let collector;
  try {
    // stdio: client → server, client → bare relay → server, and client → ward → server (each
    // starts the server). Both trace-sync modes: answered once the journal write reached the OS
    // (default), or once it is fdatasynced.
    // The stdio server reached directly: the "direct" of every path that ends at a stdio server.
    const sd = await stdioClient([TINY], cwd);
    stdioDirect = sd;
    clients.push(sd);
    if (only !== 'http') {
      const relay = await stdioClient([RELAY, '--', process.execPath, TINY], cwd);
      const signingRelay = await stdioClient([RELAY, '--sign', path.join(cwd, 'relay-journal'), '--', process.execPath, TINY], cwd);
      const proxy = (sync) => stdioClient([WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--trace-sync', sync, '--', process.execPath, TINY], cwd);
      const sw = await proxy('write');
      const sf = await proxy('fsync');
      // The same proxy exporting a span per call (OTLP/HTTP protobuf, batch processor) to a
      // receiver in this process that accepts everything (docs/observability.md; issue 30 target:
      // ≤ 50 µs added p50 per proxied call against trace-sync write).
      collector = await otlpSink();
      const so = await stdioClient([WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--trace-sync', 'write', '--otel', '--', process.execPath, TINY], cwd, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint });
      clients.push(relay, signingRelay, sw, sf, so);
      const other = OTHER ? [{ label: '(other build, trace-sync write)', client: await stdioClient([OTHER, 'mcp', 'proxy', '--policy', 'policy.yaml', '--trace-sync', 'write', '--', process.execPath, TINY], cwd), baseline: '(bare relay, baseline)' }] : [];
      clients.push(...other.map((o) => o.client));
      process.stderr.write(`running ${h.file} › ${TITLE} (stdio)\n`);
      const RELAY_LABEL = '(bare relay, baseline)';
      rows.push(
        ...(await compare('stdio', sd, [
          { label: RELAY_LABEL, client: relay },
          { label: '(relay + sign + journal write, the rule\'s floor)', client: signingRelay, baseline: RELAY_LABEL },
          { label: '(trace-sync write)', client: sw, baseline: RELAY_LABEL },
          { label: '(trace-sync fsync)', client: sf, baseline: RELAY_LABEL },
          { label: '(trace-sync write, --otel)', client: so, baseline: '(trace-sync write)' },
          ...other,
        ])),
      );
    }

    // Streamable HTTP. The bridges to a stdio server (mcp-proxy, the baseline, and ward --listen)
    // are compared with the stdio server reached directly: what the bridge costs a client that
    // could have spawned the server itself, HTTP included. (The tiny server's own Streamable HTTP
    // endpoint is no fair "direct" for them: its SDK server transport is slower per request than
    // a stdio hop, so both bridges came out "faster than direct".) ward --listen --upstream-url is
    // compared with the HTTP server reached directly.
    if (only !== 'stdio') {
      const [, port] = await startAndWait([TINY, '--http', '0'], cwd, /\{"port":(\d+)\}/, 'stdout', procs);
      const upstream = `http://127.0.0.1:${port}/mcp`;
      const bridgePort = await freePort();
      const bridge = spawn(process.execPath, [MCP_PROXY, '--host', '127.0.0.1', '--port', String(bridgePort), '--server', 'stream', '--', process.execPath, TINY], {
        cwd,
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      procs.push(bridge);
      await waitForPort(bridgePort);
      const listenWard = (args, ward = WARD) => startAndWait([ward, 'mcp', 'proxy', '--policy', 'policy.yaml', '--listen', '127.0.0.1:0', ...args], cwd, /listening on (http:\/\/\S+)/, 'stderr', procs);
      const [, wardStdioUrl] = await listenWard(['--', process.execPath, TINY]);
      const [, wardHttpUrl] = await listenWard(['--upstream-url', upstream]);
      const hb = await httpClient(`http://127.0.0.1:${bridgePort}/mcp`);
      const hs = await httpClient(wardStdioUrl);
      clients.push(hb, hs);
      const BRIDGE_LABEL = '→ stdio (mcp-proxy, baseline)';
      const other = [];
      if (OTHER) {
        const [, otherUrl] = await listenWard(['--', process.execPath, TINY], OTHER);
        other.push({ label: '→ stdio (other build, --listen)', client: await httpClient(otherUrl), baseline: BRIDGE_LABEL });
        clients.push(other[0].client);
      }
      process.stderr.write(`running ${h.file} › ${TITLE} (streamable-http)\n`);
      rows.push(
        ...(await compare('streamable-http', sd, [
          { label: BRIDGE_LABEL, client: hb },
          { label: '→ stdio (ward --listen)', client: hs, baseline: BRIDGE_LABEL },
          ...other,
        ])),
      );
      const hd = await httpClient(upstream);
      const hp = await httpClient(wardHttpUrl);
      clients.push(hd, hp);
      rows.push(...(await compare('streamable-http', hd, [{ label: '→ http (ward --listen --upstream-url)', client: hp }])));
    }
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.all(
      procs.map((p) => (p.exitCode === null ? new Promise((r) => (p.once('exit', r), p.kill('SIGTERM'))) : undefined)),
    );
    await new Promise((r) => setTimeout(r, 500)); // the stdio proxy flushes its traces after its client leaves
    await collector?.close();
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
