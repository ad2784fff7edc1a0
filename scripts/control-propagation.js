#!/usr/bin/env node
// How long a control-plane change takes from one `ward serve` replica to another (docs/kill-switch.md
// "In a cluster"): two real replicas on one PostgreSQL (fsync on), a kill-switch entry toggled N
// times through replica A's API, and replica B's view polled until it has the new version; every
// tenth change is also checked with a real decision on B. Once with LISTEN/NOTIFY (the default),
// once with polling alone (WARD_CONTROL_LISTEN=0, default 1 s interval). Not a test: a measurement.
//
//   npm run build && node scripts/control-propagation.js [changes=50]
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startPostgres } from './postgres-server.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const WARD = join(REPO, 'bin', 'ward.js');
const CHANGES = Number(process.argv[2] ?? 50);
const INTENT = JSON.parse(readFileSync(join(REPO, 'examples', 'quickstart', 'read-report.json'), 'utf8'));

function startReplica(storeUrl, name, env) {
  const dir = mkdtempSync(join(tmpdir(), 'ward-prop-'));
  copyFileSync(join(REPO, 'policies', 'baseline-lowrisk.yaml'), join(dir, 'policy.yaml'));
  const proc = spawn(process.execPath, [WARD, 'serve', '--listen', '127.0.0.1:0', '--json', '--policy', join(dir, 'policy.yaml'), '--state-dir', join(dir, '.ward'), '--replica', name], {
    cwd: dir,
    env: { ...process.env, WARD_STATE_DIR: '', WARD_STORE_URL: storeUrl, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ url: JSON.parse(line).url, proc });
    });
    proc.on('exit', (code) => reject(new Error(`replica ${name} exited ${code}`)));
  });
}

async function json(url, init) {
  const res = await fetch(url, init);
  return res.json();
}

const post = (url, body) => json(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function measure(server, label, env) {
  const url = await server.createDatabase();
  const a = await startReplica(url, 'a', env);
  const b = await startReplica(url, 'b', env);
  const delays = [];
  try {
    for (let i = 0; i < CHANGES; i++) {
      const enabled = i % 2 === 0;
      const t0 = performance.now();
      const set = await post(`${a.url}/v1/kill-switch`, { id: 'measure', enabled, tool_name: 'fs.read_file' });
      for (;;) {
        const view = await json(`${b.url}/v1/kill-switch`);
        if (view.version >= set.version) break;
      }
      delays.push(performance.now() - t0);
      if (i % 10 === 0) {
        const d = await post(`${b.url}/v1/gate/eval`, { intent: INTENT });
        if ((d.verdict === 'block') !== enabled) throw new Error(`replica b decided ${d.verdict} with the entry ${enabled ? 'enabled' : 'disabled'}`);
      }
      // Changes arrive at random phases of the 1 s poll interval, not in step with it.
      await new Promise((r) => setTimeout(r, Math.random() * 1000));
    }
  } finally {
    a.proc.kill('SIGTERM');
    b.proc.kill('SIGTERM');
  }
  delays.sort((x, y) => x - y);
  const q = (p) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))];
  const row = { mode: label, changes: delays.length, median_ms: +q(0.5).toFixed(1), p90_ms: +q(0.9).toFixed(1), max_ms: +delays[delays.length - 1].toFixed(1), min_ms: +delays[0].toFixed(1) };
  console.log(JSON.stringify(row));
  return row;
}

const server = await startPostgres({ fast: false });
try {
  await measure(server, 'listen+poll (default)', {});
  await measure(server, 'poll only, 1000 ms', { WARD_CONTROL_LISTEN: '0' });
} finally {
  await server.destroy();
}
