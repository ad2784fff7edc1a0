import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, ward } from '../cli/run.js';
import { call, evalBody, intentFile, startDaemon, workdir, type DaemonChild } from './helpers.js';

let daemon: DaemonChild;
let w: ReturnType<typeof workdir>;
let packIds: string[] = [];

beforeAll(async () => {
  w = workdir();
  // Two packs from the demo run record (spooled; the daemon ingests the spool at start).
  const record = ward(['run', 'record', '--input', intentRunRecord(), '--json'], { cwd: w.dir });
  expect(record.code).toBe(0);
  const runId = JSON.parse(record.stdout).run_id as string;
  const pack1 = ward(['pack', 'build', '--from', runId, '--json'], { cwd: w.dir });
  expect(pack1.code).toBe(0);
  packIds = [JSON.parse(pack1.stdout).pack_id as string];
  daemon = await startDaemon(['--policy', w.policy, '--ingest-interval-ms', '0'], { cwd: w.dir });
}, 30_000);

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

function intentRunRecord(): string {
  return fixture('runs/run_record_demo.json');
}

describe('POST /v1/gate/eval', () => {
  it('returns exactly what ward gate eval --json prints (apart from the trace location and correlation id)', async () => {
    const r = await call(daemon.url, '/v1/gate/eval', { body: evalBody('write-config') });
    expect(r.status).toBe(200);
    expect(r.headers['x-ward-exit-code']).toBe('4');
    const cli = ward(['gate', 'eval', '--policy', w.policy, '--intent', intentFile('write-config'), '--json', '--state-dir', join(w.dir, 'cli-state')], { cwd: w.dir });
    expect(cli.code).toBe(4);
    const fromCli = JSON.parse(cli.stdout);
    // The daemon signs with its own state's key, so only the key-independent fields are compared by value.
    for (const o of [fromCli, r.json]) {
      delete o.correlation_id;
      delete o.trace_path;
    }
    expect(Object.keys(r.json).sort()).toEqual(Object.keys(fromCli).sort());
    expect(r.json).toEqual(fromCli);
    expect(r.text.endsWith('\n')).toBe(true);
  });

  it('answers a block with 200 and verdict block; the trace is in the store and verifies', async () => {
    const r = await call(daemon.url, '/v1/gate/eval', { body: evalBody('delete-database', { correlation_id: 'abc-123' }) });
    expect(r.status).toBe(200);
    expect(r.json.verdict).toBe('block');
    expect(r.json.correlation_id).toBe('abc-123');
    expect(r.headers['x-ward-exit-code']).toBe('3');
    expect(r.json.trace_path).toMatch(/^store:trace\/[0-9a-f]{24}$/);
    const eventId = r.json.trace_path.slice('store:trace/'.length);
    const got = await call(daemon.url, `/v1/traces/${eventId}`);
    expect(got.status).toBe(200);
    expect(got.json.trace.trace_id).toBe(r.json.trace_id);
    expect(got.json.trace.correlation_id).toBe('abc-123');
    const v = await call(daemon.url, '/v1/trace/verify', { body: { trace: got.json.trace } });
    expect(v.status).toBe(200);
    expect(v.json).toMatchObject({ ok: true, signature_status: 'verified', trace_id: r.json.trace_id, verdict: 'block' });
    const tampered = { ...got.json.trace, verdict: 'allow' };
    const bad = await call(daemon.url, '/v1/trace/verify', { body: { traces: [got.json.trace, tampered] } });
    expect(bad.status).toBe(200);
    expect(bad.json.ok).toBe(false);
    expect(bad.json.summary).toEqual({ total: 2, verified: 1, failed: 1 });
    expect(bad.headers['x-ward-exit-code']).toBe('2');
  });

  it('simulate, explain and evaluation_time are accepted', async () => {
    const sim = await call(daemon.url, '/v1/gate/eval', { body: evalBody('delete-database', { simulate: true }) });
    expect(sim.json).toMatchObject({ simulate_mode: true, would_have_blocked: true });
    expect(sim.headers['x-ward-exit-code']).toBe('0');
    const ex = await call(daemon.url, '/v1/gate/eval', { body: evalBody('delete-database', { explain: true, evaluation_time: '2026-03-12T12:00:00Z' }) });
    expect(ex.status).toBe(200);
    expect(ex.json.schema_id).toBe('gait.gate.policy_explain');
  });

  it('an intent the CLI refuses (exit 6) is a 400 with the same error', async () => {
    const r = await call(daemon.url, '/v1/gate/eval', { body: { intent: { tool_name: 'x' } } });
    expect(r.status).toBe(400);
    expect(r.headers['x-ward-exit-code']).toBe('6');
    expect(r.json).toMatchObject({ ok: false, error: 'context.identity is required', error_code: 'invalid_input' });
  });

  it('batch: one decision per request, errors per item', async () => {
    const r = await call(daemon.url, '/v1/gate/eval/batch', {
      body: { requests: [evalBody('read-report'), evalBody('delete-database'), { intent: { tool_name: 'x' } }] },
    });
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(3);
    expect(r.json.results.map((x: any) => x.verdict ?? x.status)).toEqual(['allow', 'block', 400]);
    expect(r.json.results[1].exit_code).toBe(3);
    expect(r.json.ok).toBe(false);
    const bad = await call(daemon.url, '/v1/gate/eval/batch', { body: { requests: [evalBody('read-report'), { intent: {}, nope: 1 }] } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain('requests[1]');
    expect((await call(daemon.url, '/v1/gate/eval/batch', { body: { requests: [] } })).status).toBe(400);
  });
});

function intentFromFile(name: 'read-report'): unknown {
  return JSON.parse(readFileSync(intentFile(name), 'utf8'));
}

describe('the reference decision service (mounted from the MCP compat module)', () => {
  it('POST /v1/evaluate, /sse and /stream decide a tool call; other methods are 405', async () => {
    const body = { call: JSON.parse(readFileSync(fixture('mcp-compat/call-mcp-read.json'), 'utf8')) };
    const r = await call(daemon.url, '/v1/evaluate', { body });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, verdict: 'allow', tool_name: 'read_file', exit_code: 0 });
    const sse = await call(daemon.url, '/v1/evaluate/sse', { body });
    expect(sse.text).toMatch(/^event: evaluate\ndata: /);
    const stream = await call(daemon.url, '/v1/evaluate/stream', { body });
    expect(JSON.parse(stream.text.trim()).verdict).toBe('allow');
    expect((await call(daemon.url, '/v1/evaluate')).status).toBe(405);
    expect((await call(daemon.url, '/v1/evaluate', { raw: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
  });
});

describe('traces', () => {
  it('lists with filters and cursor pagination, newest first, without repeats', async () => {
    for (let i = 0; i < 5; i++) await call(daemon.url, '/v1/gate/eval', { body: evalBody('read-report') });
    const all = await call(daemon.url, '/v1/traces?limit=1000');
    expect(all.status).toBe(200);
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 100; page++) {
      const r = await call(daemon.url, `/v1/traces?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...r.json.entries.map((e: any) => e.id));
      if (!r.json.next_cursor) break;
      cursor = r.json.next_cursor;
    }
    expect(seen).toEqual(all.json.entries.map((e: any) => e.id));
    expect(new Set(seen).size).toBe(seen.length);
    const blocks = await call(daemon.url, '/v1/traces?verdict=block&tool=fs.delete_file');
    expect(blocks.json.entries.length).toBeGreaterThan(0);
    expect(blocks.json.entries.every((e: any) => e.verdict === 'block')).toBe(true);
    const asc = await call(daemon.url, '/v1/traces?order=asc&limit=2');
    expect(asc.json.entries[0].time <= asc.json.entries[1].time).toBe(true);
  });

  it('rejects unknown query parameters, bad limits, times and cursors', async () => {
    expect((await call(daemon.url, '/v1/traces?verdikt=block')).status).toBe(400);
    expect((await call(daemon.url, '/v1/traces?limit=0')).status).toBe(400);
    expect((await call(daemon.url, '/v1/traces?since=yesterday')).status).toBe(400);
    expect((await call(daemon.url, '/v1/traces?cursor=zzzz')).status).toBe(400);
  });

  it('404 for an unknown trace, 400 for a path-like id', async () => {
    expect((await call(daemon.url, '/v1/traces/ffffffffffffffffffffffff')).status).toBe(404);
    expect((await call(daemon.url, '/v1/traces/..%2F..%2Fetc%2Fpasswd')).status).toBe(400);
    expect([400, 404]).toContain((await call(daemon.url, '/v1/traces/%2e%2e')).status); // clients may resolve dot segments first
    expect((await call(daemon.url, '/v1/traces/a%5Cb')).status).toBe(400);
    expect((await call(daemon.url, '/v1/traces/%00')).status).toBe(400);
    const r = await call(daemon.url, '/v1/packs/..%2F..%2F..%2Fetc%2Fpasswd/download');
    expect(r.status).toBe(400);
    expect(r.text).not.toContain('root:');
  });
});

describe('packs', () => {
  it('lists, inspects, downloads, uploads and diffs packs in the store', async () => {
    const list = await call(daemon.url, '/v1/packs');
    expect(list.status).toBe(200);
    expect(list.json.entries.map((e: any) => e.id)).toContain(packIds[0]);
    const one = await call(daemon.url, `/v1/packs/${packIds[0]!.slice(0, 12)}`);
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ ok: true, operation: 'inspect', pack_id: packIds[0], schema_id: 'gait.pack.output' });
    const dl = await call(daemon.url, `/v1/packs/${packIds[0]}/download`);
    expect(dl.status).toBe(200);
    expect(dl.headers['content-type']).toBe('application/zip');
    const zip = await (await import('undici')).request(`${daemon.url}/v1/packs/${packIds[0]}/download`).then((r) => r.body.arrayBuffer());
    const again = await call(daemon.url, '/v1/packs', { raw: Buffer.from(zip), headers: { 'content-type': 'application/zip' } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ ok: true, kind: 'pack', stored: 0, duplicates: 1 });
    const notZip = await call(daemon.url, '/v1/packs', { raw: 'hello', headers: { 'content-type': 'application/zip' } });
    expect(notZip.status).toBe(400);
    const diff = await call(daemon.url, '/v1/packs/diff', { body: { left: packIds[0], right: packIds[0] } });
    expect(diff.status).toBe(200);
    expect(diff.json).toMatchObject({ ok: true, operation: 'diff' });
    expect(diff.json.diff.result.summary.changed).toBe(false);
    expect((await call(daemon.url, '/v1/packs/diff', { body: { left: '../x', right: packIds[0] } })).status).toBe(400);
    expect((await call(daemon.url, '/v1/packs/diff', { body: { left: 'f'.repeat(64), right: packIds[0] } })).status).toBe(404);
    expect((await call(daemon.url, '/v1/packs/ffffffffffff')).status).toBe(404);
  });
});

describe('operations', () => {
  it('policy, JWKS, health, readiness and metrics', async () => {
    const p = await call(daemon.url, '/v1/policy');
    expect(p.json).toMatchObject({ ok: true, source_path: w.policy, rule_count: 5 });
    expect(p.json.policy_digest).toMatch(/^[0-9a-f]{64}$/);
    const jwks = await call(daemon.url, '/.well-known/jwks.json');
    expect(jwks.json.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
    expect((await call(daemon.url, '/healthz')).json).toEqual({ ok: true });
    expect((await call(daemon.url, '/readyz')).json).toMatchObject({ ok: true, store: true, key: true, draining: false });
    const m = await call(daemon.url, '/metrics');
    expect(m.headers['content-type']).toContain('text/plain');
    for (const name of ['ward_decisions_total{verdict="block"}', 'ward_eval_duration_seconds_bucket', 'ward_trace_write_duration_seconds_count', 'ward_trace_queue_depth', 'ward_http_rejected_total', 'ward_policy_reloads_total']) {
      expect(m.text).toContain(name);
    }
  });

  it('404, 405, 413, 415 and 400 with the CLI error envelope', async () => {
    const nf = await call(daemon.url, '/v1/nope');
    expect(nf.status).toBe(404);
    expect(nf.json).toMatchObject({ ok: false, error_code: 'invalid_input', error_category: 'invalid_input', retryable: false });
    expect(typeof nf.json.hint).toBe('string');
    const m = await call(daemon.url, '/v1/gate/eval', { method: 'GET' });
    expect(m.status).toBe(405);
    expect(m.headers['allow']).toBe('POST');
    expect((await call(daemon.url, '/v1/gate/eval', { raw: 'x'.repeat(1024 * 1024 + 1), headers: { 'content-type': 'application/json' } })).status).toBe(413);
    expect((await call(daemon.url, '/v1/gate/eval', { raw: '{}', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect((await call(daemon.url, '/v1/gate/eval', { raw: '{"intent":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    const unknown = await call(daemon.url, '/v1/gate/eval', { body: { ...evalBody('read-report'), intnet: {} } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toContain('unknown field "intnet"');
    expect((await call(daemon.url, '/v1/gate/eval', { body: { simulate: true } })).status).toBe(400);
    expect((await call(daemon.url, '/v1/gate/eval', { body: evalBody('read-report', { simulate: 'yes' }) })).status).toBe(400);
    expect((await call(daemon.url, '/v1/gate/eval', { body: evalBody('read-report', { evaluation_time: 'noon' }) })).status).toBe(400);
  });

  it('logs one JSON line per request with no argument values', async () => {
    await call(daemon.url, '/v1/gate/eval', { body: { intent: { ...intentFromFile('read-report') as object, args: { secret: 'hunter2-do-not-log' } } } });
    await new Promise((r) => setTimeout(r, 50));
    const lines = daemon.stderr().trim().split('\n').map((l) => JSON.parse(l));
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.every((l) => typeof l.request_id === 'string' && typeof l.status === 'number' && typeof l.latency_ms === 'number')).toBe(true);
    expect(daemon.stderr()).not.toContain('hunter2');
  });
});
