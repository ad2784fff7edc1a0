// Golden outputs of the `ward serve` daemon: POST /v1/gate/eval (+ batch) and the MCP decision
// service routes /v1/evaluate(/sse, /stream) it mounts (see golden.ts for masks and regeneration).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromHourBoundary, expectGolden, golden, Masker, parseJsonText, REPO, runWard, tracePathsIn, auditFile, auditPathsIn, fixture, traceFile, traceObject, WARD, WARD_ENV, workDir, guardInputs } from './golden.js';

guardInputs();

const POLICY = golden('inputs/policy.yaml');
const intentOf = (name: string) => JSON.parse(readFileSync(golden(`inputs/${name}.json`), 'utf8')) as Record<string, unknown>;
const callOf = (name: string) => JSON.parse(readFileSync(golden(`inputs/calls/${name}.json`), 'utf8')) as Record<string, unknown>;
const TIME = '2026-03-12T12:00:00Z';

let dir: string;
let key: string;
let url: string;
let proc: ChildProcess;

beforeAll(async () => {
  ({ dir, key } = workDir('daemon'));
  proc = spawn(
    process.execPath,
    [WARD, 'serve', '--listen', '127.0.0.1:0', '--json', '--policy', POLICY, '--key-mode', 'prod', '--private-key', key, '--state-dir', join(dir, '.ward'), '--ingest-interval-ms', '0', '--no-watch'],
    { cwd: dir, env: { ...process.env, ...WARD_ENV }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    proc.on('exit', (code) => reject(new Error(`daemon exited ${code}: ${stdout} ${stderr}`)));
  });
});

afterAll(async () => {
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
});

/** Headers that carry the wall clock or connection handling; everything else is pinned. */
const UNPINNED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length']);

interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
}

async function post(path: string, body: unknown, method = 'POST', requestHeaders: Record<string, string> = { 'content-type': 'application/json' }): Promise<Reply> {
  const res = await fetch(url + path, {
    method,
    headers: requestHeaders,
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!UNPINNED_HEADERS.has(k)) headers[k] = v;
  });
  // content-length varies with masked values' lengths; it must still be the body's exact length.
  if (res.headers.get('content-length') !== null) expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
  return { status: res.status, headers, text };
}

function masker(): Masker {
  // x-request-id starts with a per-process random prefix; a request without correlation_id gets it as its correlation id.
  // The store entry's ingest time, emission time, size and file digest follow from the masked trace fields.
  return new Masker({ 'x-request-id': '<REQUEST_ID>', ingested_at: '<INGESTED_AT>', time: '<OBSERVED_AT>', size: '<SIZE>', digest: '<FILE_DIGEST>' })
    .substitute(dir, '<WORK>')
    .substitute(REPO.replace(/\/$/, ''), '<REPO>')
    .pattern(/trace__\d{8}T\d{6}\.\d+\.json/g, 'trace__<OBSERVED_AT_COMPACT>.json');
}

/** The stored trace behind a `store:trace/<event_id>` path, as GET /v1/traces/<id> returns it. */
async function storedTrace(tracePath: string): Promise<Record<string, unknown>> {
  const id = tracePath.slice('store:trace/'.length);
  const r = await post(`/v1/traces/${id}`, undefined, 'GET');
  const { format, value } = parseJsonText(r.text, 'GET /v1/traces');
  const body = value as Record<string, unknown>;
  return { status: r.status, headers: r.headers, format, entry: body['entry'], ok: body['ok'], ...traceObject(body['trace'] as Record<string, unknown>, 'store') };
}

async function pinGate(name: string, body: Record<string, unknown>, m = masker()): Promise<Record<string, unknown>> {
  const full: Record<string, unknown> = { evaluation_time: TIME, ...body };
  const r = await post('/v1/gate/eval', full);
  const { format, value } = parseJsonText(r.text, `${name} body`);
  const out = value as Record<string, unknown>;
  const traces = [];
  for (const p of tracePathsIn(out)) traces.push(await storedTrace(p));
  const audits = auditPathsIn(out).map(auditFile);
  // The intent is a fixture and minted tokens hold their minting time: the request is pinned without them.
  const options = {
    ...full,
    intent: undefined,
    approval_tokens: full['approval_tokens'] ? '<MINTED_TOKENS>' : undefined,
    delegation_tokens: full['delegation_tokens'] ? '<MINTED_TOKENS>' : undefined,
    context_envelope: full['context_envelope'] ? '<fixtures/envelopes/v7-envelope.json>' : undefined,
  };
  expectGolden(`daemon/${name}`, { request: { path: '/v1/gate/eval', options }, status: r.status, headers: r.headers, body_format: format, body: out, traces, ...(audits.length ? { audits } : {}) }, m);
  return out;
}

describe('golden: ward serve POST /v1/gate/eval', () => {
  it('allow (correlation id from the request id)', async () => {
    expect((await pinGate('gate-allow', { intent: intentOf('read') }))['verdict']).toBe('allow');
  });

  it('block by rule, with a correlation id', async () => {
    expect((await pinGate('gate-block-rule', { intent: intentOf('delete'), correlation_id: 'golden-correlation-1' }))['verdict']).toBe('block');
  });

  it('require_approval, then allow with a valid token', async () => {
    const d = await pinGate('gate-approval-missing', { intent: intentOf('write'), correlation_id: 'golden-approval-1' });
    expect(d['verdict']).toBe('require_approval');
    const tokenPath = join(dir, 'approval-token.json');
    const minted = runWard(
      [
        'approve', '--intent-digest', String(d['intent_digest']), '--policy-digest', String(d['policy_digest']), '--scope', 'tool:tool.write',
        '--ttl', '1h', '--approver', 'golden-approver', '--reason-code', 'golden-change', '--key-mode', 'prod', '--private-key', key, '--out', tokenPath, '--json',
      ],
      { cwd: dir },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const token = JSON.parse(readFileSync(tokenPath, 'utf8')) as Record<string, unknown>;
    const m = masker().substitute(String(token['token_id']), '<APPROVAL_TOKEN_ID>');
    const granted = await pinGate('gate-approval-granted', { intent: intentOf('write'), approval_tokens: [token], correlation_id: 'golden-approval-2' }, m);
    expect(granted['verdict']).toBe('allow');
  });

  it('delegation required, token missing', async () => {
    expect((await pinGate('gate-delegation-missing', { intent: intentOf('deploy'), correlation_id: 'golden-delegation-1' }))['verdict']).toBe('block');
  });

  it('delegation granted with a valid token', async () => {
    const tokenPath = join(dir, 'delegation-token.json');
    const minted = runWard(
      ['delegate', 'mint', '--delegator', 'agent.lead', '--delegate', 'agent.worker', '--scope', 'deploy', '--scope-class', 'deploy', '--ttl', '1h', '--key-mode', 'prod', '--private-key', key, '--out', tokenPath, '--json'],
      { cwd: dir },
    );
    expect(minted.code, minted.stderr).toBe(0);
    const token = JSON.parse(readFileSync(tokenPath, 'utf8')) as Record<string, unknown>;
    const m = masker().substitute(String(token['token_id']), '<DELEGATION_TOKEN_ID>');
    const out = await pinGate('gate-delegation-granted', { intent: intentOf('deploy'), delegation_tokens: [token], correlation_id: 'golden-delegation-2' }, m);
    expect(out['verdict']).toBe('allow');
  });

  it('context envelope text bound to the intent (the V7 envelope; the golden policy needs no evidence)', async () => {
    const envelope = readFileSync(fixture('envelopes/v7-envelope.json'), 'utf8');
    const out = await pinGate('gate-context-envelope', { intent: JSON.parse(readFileSync(fixture('intents/v1-approval-valid.json'), 'utf8')), context_envelope: envelope, correlation_id: 'golden-envelope-1' });
    expect(out['ok']).toBeDefined();
  });

  it('rate limit: first call allowed, second exceeded', async () => {
    await awayFromHourBoundary();
    expect((await pinGate('gate-rate-limit-first', { intent: intentOf('search'), correlation_id: 'golden-rate-1' }))['verdict']).toBe('allow');
    expect((await pinGate('gate-rate-limit-exceeded', { intent: intentOf('search'), correlation_id: 'golden-rate-2' }))['verdict']).toBe('block');
  });

  it('unevaluable intent in a fail-closed risk class blocks, traced', async () => {
    expect((await pinGate('gate-unevaluable', { intent: intentOf('unevaluable'), correlation_id: 'golden-unevaluable-1' }))['verdict']).toBe('block');
  });

  it('script intent', async () => {
    expect((await pinGate('gate-script', { intent: intentOf('script'), correlation_id: 'golden-script-1' }))['script']).toBe(true);
  });

  it('simulate and explain', async () => {
    expect((await pinGate('gate-simulate', { intent: intentOf('delete'), simulate: true, correlation_id: 'golden-simulate-1' }))['simulate_mode']).toBe(true);
    expect((await pinGate('gate-explain', { intent: intentOf('write'), explain: true, correlation_id: 'golden-explain-1' }))['schema_id']).toBe('gait.gate.policy_explain');
  });

  it('invalid intent: 400 with the CLI error envelope', async () => {
    expect((await pinGate('gate-intent-invalid', { intent: { tool_name: 'tool.read' }, correlation_id: 'golden-invalid-1' }))['ok']).toBe(false);
  });

  it('unknown body field and malformed JSON: 400', async () => {
    const unknown = await post('/v1/gate/eval', { intent: intentOf('read'), nope: 1 });
    const malformed = await post('/v1/gate/eval', '{"intent": ');
    expectGolden('daemon/gate-bad-bodies', { unknown_field: unknown, malformed }, masker());
  });

  it('batch: one decision per request, errors per item', async () => {
    const body = {
      requests: [
        { intent: intentOf('read'), evaluation_time: TIME, correlation_id: 'golden-batch-1' },
        { intent: intentOf('delete'), evaluation_time: TIME, correlation_id: 'golden-batch-2' },
        { intent: { tool_name: 'tool.read' }, correlation_id: 'golden-batch-3' },
      ],
    };
    const r = await post('/v1/gate/eval/batch', body);
    const { format, value } = parseJsonText(r.text, 'batch body');
    const out = value as { results: Record<string, unknown>[] };
    const traces = [];
    for (const p of tracePathsIn(out)) traces.push(await storedTrace(p));
    expectGolden('daemon/gate-batch', { status: r.status, headers: r.headers, body_format: format, body: out, traces }, masker());
  });
});

describe('golden: ward serve /v1/evaluate (MCP decision service)', () => {
  async function pinEvaluate(name: string, path: string, body: unknown): Promise<void> {
    const r = await post(path, body);
    let parsed: Record<string, unknown> = { body_text: r.text };
    let out: Record<string, unknown> | undefined;
    if (path === '/v1/evaluate/sse') {
      const m = /^event: evaluate\ndata: (.*)\n\n$/s.exec(r.text);
      expect(m, `sse framing: ${r.text}`).not.toBeNull();
      const p = parseJsonText(m![1]!, `${name} data`);
      out = p.value as Record<string, unknown>;
      parsed = { framing: 'event: evaluate\\ndata: <body>\\n\\n', body_format: p.format, body: out };
    } else if (r.status === 200 || r.text.startsWith('{')) {
      const p = parseJsonText(r.text, `${name} body`);
      out = p.value as Record<string, unknown>;
      parsed = { body_format: p.format, body: out };
    }
    const traces = tracePathsIn(out).map(traceFile);
    expectGolden(`daemon/${name}`, { request: { path, body }, status: r.status, headers: r.headers, ...parsed, traces }, masker());
  }

  it('allow, block, require_approval, script, fail-closed and invalid calls', async () => {
    await pinEvaluate('evaluate-allow', '/v1/evaluate', { call: callOf('read') });
    await pinEvaluate('evaluate-block', '/v1/evaluate', { call: callOf('delete') });
    await pinEvaluate('evaluate-approval', '/v1/evaluate', { call: callOf('write') });
    await pinEvaluate('evaluate-script', '/v1/evaluate', { call: callOf('script') });
    await pinEvaluate('evaluate-fail-closed', '/v1/evaluate', { call: callOf('high-risk-missing') });
    await pinEvaluate('evaluate-openai', '/v1/evaluate', { adapter: 'openai', call: callOf('openai') });
    await pinEvaluate('evaluate-invalid', '/v1/evaluate', { call: { args: {} } });
  });

  it('sse and stream framings', async () => {
    await pinEvaluate('evaluate-sse', '/v1/evaluate/sse', { call: callOf('read') });
    await pinEvaluate('evaluate-stream', '/v1/evaluate/stream', { call: callOf('delete') });
  });
});

describe('golden: ward serve HTTP edge (errors before any decision)', () => {
  it('unknown route, wrong method, wrong content type, oversized body, foreign Host', async () => {
    const { request } = await import('node:http');
    /** A raw request, for a Host header fetch would not send. */
    const raw = (path: string, headers: Record<string, string>, body: string) =>
      new Promise<Reply>((resolve, reject) => {
        const u = new URL(url);
        const req = request({ host: u.hostname, port: u.port, path, method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => {
            const h: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers)) if (!UNPINNED_HEADERS.has(k) && v !== undefined) h[k] = String(v);
            resolve({ status: res.statusCode ?? 0, headers: h, text });
          });
        });
        req.on('error', reject);
        req.end(body);
      });
    const big = JSON.stringify({ intent: { pad: 'x'.repeat(1_100_000) } });
    const replies = {
      unknown_route: await post('/v1/nope', {}),
      gate_get: await post('/v1/gate/eval', undefined, 'GET'),
      gate_text_plain: await post('/v1/gate/eval', 'x', 'POST', { 'content-type': 'text/plain' }),
      gate_too_large: await post('/v1/gate/eval', big),
      gate_foreign_host: await raw('/v1/gate/eval', { host: 'evil.example', 'content-type': 'application/json' }, JSON.stringify({ intent: intentOf('read') })),
      evaluate_get: await post('/v1/evaluate', undefined, 'GET'),
      evaluate_text_plain: await post('/v1/evaluate', 'x', 'POST', { 'content-type': 'text/plain' }),
      evaluate_too_large: await post('/v1/evaluate', big),
      evaluate_foreign_host: await raw('/v1/evaluate', { host: 'evil.example', 'content-type': 'application/json' }, JSON.stringify({ call: callOf('read') })),
    };
    expectGolden('daemon/edge-errors', replies, masker());
  });

  it('ward gate eval --daemon: the CLI asks the daemon', async () => {
    const run = runWard(['gate', 'eval', '--daemon', url, '--policy', POLICY, '--intent', golden('inputs/delete.json'), '--evaluation-time', TIME, '--json'], { cwd: dir });
    const { format, value } = parseJsonText(run.stdout, 'gate eval --daemon');
    const traces = [];
    for (const p of tracePathsIn(value)) traces.push(await storedTrace(p));
    // The CLI makes up a random correlation id and sends it to the daemon.
    const m = new Masker({ ...masker().extraKeys, correlation_id: '<CORRELATION_ID>' }).substitute(dir, '<WORK>').substitute(url, '<DAEMON_URL>');
    expectGolden('daemon/cli-daemon-client', { exit_code: run.code, stdout_format: format, stdout: value, stderr: run.stderr, traces }, m);
  });
});
