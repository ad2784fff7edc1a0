// Figures for docs/console.md "Measured" (not a test, no assertions): the time from a
// require_approval decision to its `event: approval` arriving at an open decision stream
// (GET /v1/decisions/stream), on loopback, with `ward serve` in its own process as in production.
// `npm run build` first, then `node scripts/measure-console-latency.js [calls]`.
//
// Two figures per call: from sending the eval request to the event (what an approver watching
// the inbox waits after the agent asks), and from the eval answer to the event (negative: the
// event came first; the inbox entry is published before the answer leaves the daemon).

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const CALLS = Number(process.argv[2] ?? 200);
const WARD = fileURLToPath(new URL('../bin/ward.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ward-console-latency-'));
writeFileSync(
  join(dir, 'policy.yaml'),
  'schema_id: gait.gate.policy\nschema_version: 1.0.0\ndefault_verdict: allow\nrules:\n  - name: approve-writes\n    priority: 10\n    effect: require_approval\n    match:\n      tool_names: [fs.write_file]\n',
);

const daemon = spawn(process.execPath, [WARD, 'serve', '--policy', join(dir, 'policy.yaml'), '--state-dir', join(dir, '.ward'), '--listen', '127.0.0.1:0', '--json'], { stdio: ['ignore', 'pipe', 'ignore'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  daemon.stdout.on('data', (d) => {
    out += d;
    const line = out.split('\n').find((l) => l.startsWith('{'));
    if (line) resolve(JSON.parse(line).url);
  });
  daemon.on('exit', (code) => reject(new Error(`ward serve exited ${code}`)));
});

const waiting = new Map(); // trace id or path → resolve(time)
let buffer = '';
const stream = get(`${url}/v1/decisions/stream`, { headers: { accept: 'text/event-stream' } }, (res) => {
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    const at = performance.now();
    buffer += chunk;
    let i;
    while ((i = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      if (!block.startsWith('event: approval')) continue;
      const data = JSON.parse(block.slice(block.indexOf('data: ') + 6));
      const done = waiting.get(data.trace_id);
      if (done) done(at);
      else arrivedEarly.set(data.trace_id, at);
    }
  });
});
const arrivedEarly = new Map();
await new Promise((r) => setTimeout(r, 200));

function post(path, body) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      let out = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (out += d));
      res.on('end', () => resolve(JSON.parse(out)));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const fromSend = [];
const fromAnswer = [];
for (let n = 0; n < CALLS; n++) {
  const intent = {
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: '2026-11-25T00:00:00Z',
    producer_version: 'measure',
    tool_name: 'fs.write_file',
    args: { path: `/workspace/f${n}.txt` },
    targets: [{ kind: 'path', value: `/workspace/f${n}.txt`, operation: 'write' }],
    context: { identity: 'agent.measure', workspace: '/workspace', risk_class: 'low' },
  };
  const sent = performance.now();
  const answer = await post('/v1/gate/eval', { intent });
  const answered = performance.now();
  if (answer.verdict !== 'require_approval') throw new Error(`unexpected verdict ${answer.verdict}`);
  const at = arrivedEarly.get(answer.trace_id) ?? (await new Promise((resolve) => waiting.set(answer.trace_id, resolve)));
  fromSend.push(at - sent);
  fromAnswer.push(at - answered);
}

const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const f = (x) => `${x.toFixed(2)} ms`;
console.log(`${CALLS} require_approval decisions, ward serve on loopback, one SSE client`);
console.log(`request sent -> event: approval   median ${f(q(fromSend, 0.5))}, p95 ${f(q(fromSend, 0.95))}, max ${f(Math.max(...fromSend))}`);
console.log(`eval answered -> event: approval  median ${f(q(fromAnswer, 0.5))}, p95 ${f(q(fromAnswer, 0.95))}`);
stream.destroy();
daemon.kill('SIGTERM');
