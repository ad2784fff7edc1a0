// MCP proxy availability (issue 27, finding 7): one `ward mcp proxy --listen` serves two sessions;
// a victim session makes small tools/calls one after another while an attacker session sends, back
// to back, the worst call the default limits allow — 2,048 argument keys, or 1 MiB of arguments —
// and the 4.8 MB, 250,000-key call that once stalled every session for ~20 s (now refused by
// --max-call-bytes before it is read as an intent). Two proxies run side by side: the default
// (large calls decided on the decision thread) and `--no-decision-thread` (every call decided on
// the event loop, as before the thread), each with its own victim. The baseline is each victim
// with the attacker idle, in the same run: phases alternate (thread idle, keys, bytes, 250k, inline
// idle, keys, bytes, thread idle, ...) so drift hits all alike. The attacker is a process of its
// own (writing 4.8 MB would otherwise hold the measuring loop too). Reported: the victim's latency
// p50 / p99 / max per phase (all its calls of the phase, over every round) and the attacker's
// median time per call. The idle rows are also the common case: a small call never goes to the
// thread, so the two idle p50s should agree within noise.
// Needs the build (dist/) and fixtures/mcp/tiny-server.mjs; about 60 s.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WARD = path.join(repo, 'bin', 'ward.js');
const TINY = path.join(repo, 'fixtures', 'mcp', 'tiny-server.mjs');
const TITLE = 'mcp proxy --listen · another session while one sends the worst allowed call';
const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const print = (text) => (json ? process.stderr : process.stdout).write(text + '\n');
const ROUNDS = quick ? 2 : 4;
const PHASE_MS = quick ? 1000 : 2000;

const keys = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
const ATTACKS = [
  // 2,048 entries in params: name, arguments and 2,046 argument keys.
  { label: 'worst keys (2,048 in params)', body: () => ({ name: 'echo', arguments: { text: 'x', ...keys(2045) } }) },
  // Just under 1 MiB as sent.
  { label: 'worst bytes (1 MiB arguments)', body: () => ({ name: 'echo', arguments: { text: 'y'.repeat(1024 * 1024 - 200) } }) },
  { label: '4.8 MB, 250k keys (refused)', body: () => ({ name: 'echo', arguments: keys(250_000) }), threadOnly: true },
];
const MODES = [
  { label: 'thread', args: [] },
  { label: 'inline', args: ['--no-decision-thread'] },
];

function pct(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN;
}

/** Start the attacker on `body`; resolves once its session is open, with a stop() that returns its per-call times. */
async function startAttacker(url, bodyFile) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--attacker', url, bodyFile], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d.toString();
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`attacker exited ${code}`)));
  });
  return async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin.write('stop\n');
    await exited;
    return out.split('\n').slice(1).filter(Boolean).map(Number);
  };
}

async function session(url) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const post = async (text) => {
    const res = await fetch(url, { method: 'POST', headers, body: text });
    const sid = res.headers.get('mcp-session-id');
    if (sid) headers['mcp-session-id'] = sid;
    return res.text();
  };
  await post(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }));
  await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return post;
}

/** Start a proxy; resolves with its URL and a stop(). */
async function startProxy(cwd, args) {
  const child = spawn(process.execPath, [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--listen', '127.0.0.1:0', ...args, '--', process.execPath, TINY], {
    cwd,
    env: { ...process.env, WARD_STATE_DIR: path.join(cwd, '.ward') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stop = () => (child.exitCode === null ? new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) : Promise.resolve());
  let err = '';
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`proxy did not listen: ${err}`)), 20_000);
      child.stderr.on('data', (d) => {
        err += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    return { url, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export default async function (h) {
  if (!h.matches(TITLE)) return;
  const cwd = mkdtempSync(path.join(tmpdir(), 'ward-bench-limits-'));
  writeFileSync(path.join(cwd, 'policy.yaml'), 'default_verdict: allow\nrules: []\n');
  const proxies = [];
  try {
    for (const mode of MODES) {
      const dir = path.join(cwd, mode.label);
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'policy.yaml'), 'default_verdict: allow\nrules: []\n');
      const proxy = await startProxy(dir, mode.args);
      proxies.push(proxy);
      mode.url = proxy.url;
      mode.victim = await session(proxy.url);
    }
    const bodies = ATTACKS.map((a, i) => {
      const file = path.join(cwd, `attack-${i}.json`);
      writeFileSync(file, JSON.stringify({ jsonrpc: '2.0', id: `a${i}`, method: 'tools/call', params: a.body() }));
      return { ...a, file };
    });
    const phases = MODES.flatMap((m) => [{ label: 'idle (baseline)', file: undefined }, ...bodies.filter((b) => !b.threadOnly || m.label === 'thread')].map((p) => ({ ...p, mode: m, key: `${m.label} · ${p.label}` })));
    const lat = new Map(phases.map((p) => [p.key, []]));
    const attack = new Map(phases.map((p) => [p.key, []]));
    let vid = 1;
    process.stderr.write(`running mcp-limits › ${TITLE}\n`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const phase of phases) {
        const stop = phase.file ? await startAttacker(phase.mode.url, phase.file) : async () => [];
        const until = performance.now() + PHASE_MS;
        while (performance.now() < until) {
          const t = performance.now();
          await phase.mode.victim(JSON.stringify({ jsonrpc: '2.0', id: vid++, method: 'tools/call', params: { name: 'echo', arguments: { text: `v${vid}` } } }));
          lat.get(phase.key).push(performance.now() - t);
        }
        attack.get(phase.key).push(...(await stop()));
      }
    }
    const idleP50 = new Map(MODES.map((m) => [m.label, pct([...lat.get(`${m.label} · idle (baseline)`)].sort((a, b) => a - b), 0.5)]));
    const rows = phases.map((p) => {
      const v = [...lat.get(p.key)].sort((a, b) => a - b);
      const a = [...attack.get(p.key)].sort((x, y) => x - y);
      return { label: p.key, calls: v.length, p50: pct(v, 0.5), p99: pct(v, 0.99), max: v[v.length - 1], ratio: pct(v, 0.5) / idleP50.get(p.mode.label), attackMs: pct(a, 0.5), attackCalls: a.length };
    });
    const fmt = (n) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 1) : '—');
    const lines = [
      TITLE,
      'decided · attacker sends                victim calls  p50 ms  p99 ms  max ms  × idle p50  attacker ms/call (median)',
      '--------------------------------------  ------------  ------  ------  ------  ----------  -------------------------',
      ...rows.map((r) =>
        [r.label.padEnd(38), String(r.calls).padStart(12), fmt(r.p50).padStart(6), fmt(r.p99).padStart(6), fmt(r.max).padStart(6), `${r.ratio.toFixed(2)}×`.padStart(10), `${fmt(r.attackMs)} (${r.attackCalls} calls)`.padStart(25)].join('  '),
      ),
      '× idle p50: against the same proxy\'s victim with the attacker idle. thread: large calls decided on the',
      'decision thread (the default); inline: --no-decision-thread, every call on the event loop.',
    ];
    print(lines.join('\n'));
    h.suites.push({ title: TITLE, file: h.file, baseline: 'thread · idle (baseline)', results: rows.map((r) => ({ ...r, name: r.label, medianNs: r.p50 * 1e6 })) });
  } finally {
    for (const p of proxies) await p.stop();
    try {
      rmSync(cwd, { recursive: true, force: true });
    } catch {
      // a proxy still finishing; the temp dir is left behind
    }
  }
}

/** The attacker process (`node mcp-limits.bench.js --attacker URL BODY_FILE`): posts the body back to back until stdin says stop; one line per call (ms). */
async function attackerMain(url, bodyFile) {
  const body = readFileSync(bodyFile, 'utf8');
  const post = await session(url);
  let running = true;
  process.stdin.on('data', () => (running = false));
  process.stdout.write('ready\n');
  while (running) {
    const t = performance.now();
    await post(body);
    process.stdout.write(`${performance.now() - t}\n`);
  }
  process.exit(0);
}

if (process.argv[2] === '--attacker' && process.argv[1] === fileURLToPath(import.meta.url)) await attackerMain(process.argv[3], process.argv[4]);
