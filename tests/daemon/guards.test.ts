import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type Daemon } from '../../src/daemon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { ward } from '../cli/run.js';
import { call, evalBody, workdir } from './helpers.js';

const open: Daemon[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.close();
});

async function daemon(extra: Partial<Parameters<typeof startDaemon>[0]> = {}): Promise<Daemon> {
  const w = workdir();
  const d = await startDaemon({ stateDir: w.state, policyPath: w.policy, host: '127.0.0.1', port: 0, signingKey: generateSigningKey(), logWrite: () => {}, ...extra });
  open.push(d);
  return d;
}

describe('auth', () => {
  it('a non-loopback listener refuses to start without --auth-token-env', () => {
    const w = workdir();
    const r = ward(['serve', '--policy', w.policy, '--listen', '0.0.0.0:0', '--json'], { cwd: w.dir });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout).error).toContain('without authentication');
  });

  it('a short token is refused', () => {
    const w = workdir();
    const r = ward(['serve', '--policy', w.policy, '--listen', '127.0.0.1:0', '--auth-token-env', 'TOK', '--json'], { cwd: w.dir, env: { TOK: 'short' } });
    expect(r.code).toBe(6);
  });

  it('with a token: 401 without or with a wrong bearer, 200 with the right one; health and JWKS stay public', async () => {
    const token = 'a-very-secret-token-0123456789';
    const d = await daemon({ authToken: token });
    const none = await call(d.url, '/v1/gate/eval', { body: evalBody('read-report') });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toContain('Bearer');
    expect(none.json).toMatchObject({ ok: false, error_code: 'invalid_input' });
    expect((await call(d.url, '/v1/policy', { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    expect((await call(d.url, '/metrics', { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    const ok = await call(d.url, '/v1/gate/eval', { body: evalBody('read-report'), headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(ok.json.verdict).toBe('allow');
    expect((await call(d.url, '/healthz')).status).toBe(200);
    expect((await call(d.url, '/readyz')).status).toBe(200);
    expect((await call(d.url, '/.well-known/jwks.json')).status).toBe(200);
    const metrics = await call(d.url, '/metrics', { headers: { authorization: `Bearer ${token}` } });
    expect(metrics.text).toContain('ward_http_rejected_total{reason="auth"} 3');
  });

  it('without a token on loopback, no auth is needed but foreign Host headers are refused', async () => {
    const d = await daemon();
    expect((await call(d.url, '/v1/policy')).status).toBe(200);
    expect((await call(d.url, '/v1/policy', { headers: { host: 'localhost:1234' } })).status).toBe(200);
    const evil = await call(d.url, '/v1/policy', { headers: { host: 'evil.example' } });
    expect(evil.status).toBe(403);
    expect(evil.json.error).toContain('evil.example');
    const d2 = await daemon({ allowedHosts: ['ward.internal'] });
    expect((await call(d2.url, '/v1/policy', { headers: { host: 'ward.internal:7433' } })).status).toBe(200);
  });
});

describe('backpressure and draining', () => {
  it('a full trace queue answers 429 with Retry-After and counts it; admitted decisions all complete', async () => {
    const d = await daemon({ queueCapacity: 2, commitDelayMs: 150 });
    const replies = await Promise.all(Array.from({ length: 12 }, () => call(d.url, '/v1/gate/eval', { body: evalBody('read-report') })));
    const statuses = replies.map((r) => r.status);
    expect(statuses).toContain(429);
    expect(statuses).toContain(200);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    const refused = replies.find((r) => r.status === 429)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json).toMatchObject({ ok: false, retryable: true, error_code: 'internal_failure' });
    const m = await call(d.url, '/metrics');
    const count = statuses.filter((s) => s === 429).length;
    expect(m.text).toContain(`ward_http_rejected_total{reason="overload"} ${count}`);
    expect(m.text).toContain(`ward_decisions_total{verdict="allow"} ${12 - count}`);
  });

  it('a draining daemon answers 503 with Retry-After; readiness says so', async () => {
    const d = await daemon();
    d.context.state.draining = true;
    const r = await call(d.url, '/v1/gate/eval', { body: evalBody('read-report') });
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    const ready = await call(d.url, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({ ok: false, draining: true });
    d.context.state.draining = false;
  });

  it('close() finishes in-flight decisions, then stops', async () => {
    const d = await daemon({ commitDelayMs: 200 });
    open.pop();
    const inflight = Promise.all(Array.from({ length: 4 }, () => call(d.url, '/v1/gate/eval', { body: evalBody('delete-database') })));
    await new Promise((r) => setTimeout(r, 50));
    await d.close();
    const replies = await inflight;
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await expect(call(d.url, '/healthz')).rejects.toThrow();
  });
});

describe('no trace durability (benchmark baseline)', () => {
  it('decides without storing, and says so', async () => {
    const w = workdir();
    const d = await startDaemon({ stateDir: join(w.dir, 's'), policyPath: w.policy, host: '127.0.0.1', port: 0, signingKey: generateSigningKey(), logWrite: () => {}, traceDurability: false });
    open.push(d);
    const r = await call(d.url, '/v1/gate/eval', { body: evalBody('read-report') });
    expect(r.json.trace_path).toMatch(/^discarded:/);
    expect((await call(d.url, '/readyz')).json.trace_durability).toBe(false);
  });
});
