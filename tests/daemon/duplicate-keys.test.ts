import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../cli/run.js';
import { call, intent, startDaemon, workdir, type DaemonChild } from './helpers.js';

/**
 * Every JSON route body of `ward serve` refuses a key repeated in one object, at any depth, with a
 * 400 that names the key and where it is; and a context envelope dated in the future is refused.
 */
let d: DaemonChild;

beforeAll(async () => {
  const w = workdir();
  d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
}, 20_000);

afterAll(async () => {
  expect(await d.stop()).toBe(0);
});

const intentText = JSON.stringify(intent('read-report'));
const post = (path: string, raw: string) => call(d.url, path, { raw, headers: { 'content-type': 'application/json' } });

function expectDuplicate(r: Awaited<ReturnType<typeof call>>, message: string, key: string, path: string): void {
  expect(r.status).toBe(400);
  expect(r.headers['x-ward-exit-code']).toBe('6');
  expect(r.json).toMatchObject({ ok: false, error: message, duplicate_key: key, duplicate_key_path: path, error_code: 'invalid_input' });
  expect(r.json.hint).toContain(JSON.stringify(key));
}

describe('POST /v1/gate/eval', () => {
  it('"simulate":false,"simulate":true is refused, not decided as either', async () => {
    const r = await post('/v1/gate/eval', `{"intent":${intentText},"simulate":false,"simulate":true}`);
    expectDuplicate(r, 'invalid JSON body: duplicate key "simulate" at $', 'simulate', '$.simulate');
  });

  it('two targets inside the intent: the path says where', async () => {
    const twice = intentText.replace('"targets":', '"targets":[],"targets":');
    const r = await post('/v1/gate/eval', `{"intent":${twice}}`);
    expectDuplicate(r, 'invalid JSON body: duplicate key "targets" at $.intent', 'targets', '$.intent.targets');
  });

  it('deeper: a repeated argument inside args', async () => {
    const twice = intentText.replace('"args":{"path":', '"args":{"path":"/etc/shadow","path":');
    const r = await post('/v1/gate/eval', `{"intent":${twice}}`);
    expectDuplicate(r, 'invalid JSON body: duplicate key "path" at $.intent.args', 'path', '$.intent.args.path');
  });

  it('a key spelled with an escape is the same key', async () => {
    const r = await post('/v1/gate/eval', `{"intent":${intentText},"simulate":true,"simul\\u0061te":false}`);
    expectDuplicate(r, 'invalid JSON body: duplicate key "simulate" at $', 'simulate', '$.simulate');
  });

  it('a context envelope sent as text is parsed as strictly as a file', async () => {
    const envelope = readFileSync(fixture('envelopes/v7-envelope.json'), 'utf8').replace('"records":', '"records":[],"records":');
    const r = await call(d.url, '/v1/gate/eval', { body: { intent: intent('read-report'), context_envelope: envelope } });
    expectDuplicate(r, 'parse context envelope: duplicate key "records" at $', 'records', '$.records');
  });

  it('the same body without the repeat is decided', async () => {
    const r = await post('/v1/gate/eval', `{"intent":${intentText},"simulate":true}`);
    expect(r.status).toBe(200);
    expect(r.json.verdict).toBe('allow');
  });
});

describe('the other JSON routes', () => {
  it('POST /v1/gate/eval/batch: in the list or in one request', async () => {
    expectDuplicate(
      await post('/v1/gate/eval/batch', `{"requests":[{"intent":${intentText}}],"requests":[]}`),
      'invalid JSON body: duplicate key "requests" at $',
      'requests',
      '$.requests',
    );
    const twice = intentText.replace('"tool_name":', '"tool_name":"fs.delete","tool_name":');
    expectDuplicate(
      await post('/v1/gate/eval/batch', `{"requests":[{"intent":${intentText}},{"intent":${twice}}]}`),
      'invalid JSON body: duplicate key "tool_name" at $.requests[1].intent',
      'tool_name',
      '$.requests[1].intent.tool_name',
    );
  });

  it('POST /v1/trace/verify and POST /v1/packs/diff', async () => {
    expectDuplicate(await post('/v1/trace/verify', '{"trace":{},"trace":{"verdict":"allow"}}'), 'invalid JSON body: duplicate key "trace" at $', 'trace', '$.trace');
    expectDuplicate(await post('/v1/packs/diff', '{"left":"a","right":"b","left":"c"}'), 'invalid JSON body: duplicate key "left" at $', 'left', '$.left');
  });

  it('POST /v1/evaluate (the reference decision service) names the key too', async () => {
    const callJson = readFileSync(fixture('mcp-compat/call-mcp-read.json'), 'utf8');
    for (const path of ['/v1/evaluate', '/v1/evaluate/sse', '/v1/evaluate/stream']) {
      const r = await post(path, `{"call":${callJson},"call":{}}`);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ ok: false, error: 'decode request: duplicate key "call" at $', duplicate_key: 'call', duplicate_key_path: '$.call' });
    }
  });

  it('refusals are counted as rejected requests with reason duplicate_key', async () => {
    const metrics = (await call(d.url, '/metrics')).text;
    const line = metrics.split('\n').find((l) => l.startsWith('ward_http_rejected_total{reason="duplicate_key"}'));
    expect(Number(line?.split(' ').pop())).toBeGreaterThanOrEqual(8);
  });
});

describe('a context envelope dated in the future', () => {
  const envelope = readFileSync(fixture('envelopes/v7-envelope.json'), 'utf8');
  const withRisk = (risk: string) => ({ ...intent('read-report'), context: { ...(intent('read-report')['context'] as object), risk_class: risk } });

  it('is refused outside fail-closed risk classes (400, exit 6), naming the record and the skew', async () => {
    // ctx-a was retrieved at 11:59:55Z: 59m55s after this evaluation time.
    const r = await call(d.url, '/v1/gate/eval', { body: { intent: withRisk('low'), context_envelope: envelope, evaluation_time: '2026-03-12T11:00:00Z' } });
    expect(r.status).toBe(400);
    expect(r.headers['x-ward-exit-code']).toBe('6');
    expect(r.json).toMatchObject({
      ok: false,
      error:
        'context envelope retrieved_at is in the future: record "ctx-a" retrieved_at 2026-03-12T11:59:55Z is after the evaluation time 2026-03-12T11:00:00Z by more than the allowed clock skew (300s)',
      envelope_problem: 'retrieved_at_in_future',
      ref_id: 'ctx-a',
      clock_skew_seconds: 300,
    });
  });

  it('is a traced block under a fail-closed risk class', async () => {
    const r = await call(d.url, '/v1/gate/eval', { body: { intent: withRisk('high'), context_envelope: envelope, evaluation_time: '2026-03-12T11:00:00Z' } });
    expect(r.status).toBe(200);
    expect(r.json.verdict).toBe('block');
    expect(r.json.reason_codes).toContain('fail_closed_intent_invalid');
    expect(r.json.trace_id).toMatch(/^[0-9a-f]+$/);
  });

  it('within the five-minute clock skew it is bound (age 0 for the newest record)', async () => {
    const r = await call(d.url, '/v1/gate/eval', { body: { intent: withRisk('low'), context_envelope: envelope, evaluation_time: '2026-03-12T11:55:00Z' } });
    expect(r.status).toBe(200);
    expect(r.json.verdict).toBe('allow');
  });
});
