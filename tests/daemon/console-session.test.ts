import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, consoleDaemon, evalIntent, intentFor, pendingFor, reportOf, signTemplate } from './console-helpers.js';
import { call } from './helpers.js';

afterEach(closeAll);

const TOKEN = 'console-test-token-0123456789abcdef';
const bearer = { authorization: `Bearer ${TOKEN}` };

function cookieOf(setCookie: string | string[] | undefined): string {
  const line = Array.isArray(setCookie) ? setCookie[0]! : setCookie!;
  return line.split(';', 1)[0]!;
}

describe('auth on console routes', () => {
  it('with a token: every console route needs the bearer (or a session); none accepts a token in the URL', async () => {
    const { d } = await consoleDaemon({ authToken: TOKEN });
    expect((await call(d.url, '/v1/approvals')).status).toBe(401);
    expect((await call(d.url, `/v1/approvals?token=${TOKEN}`)).status).toBe(401);
    expect((await call(d.url, `/v1/approvals?token=${TOKEN}`, { headers: bearer })).status).toBe(400);
    expect((await call(d.url, '/v1/approvals', { headers: bearer })).status).toBe(200);
    expect((await call(d.url, '/v1/approvals/pending', { body: {} })).status).toBe(401);
    expect((await call(d.url, '/v1/decisions/stream')).status).toBe(401);
    expect((await call(d.url, '/ui/session', { method: 'POST' })).status).toBe(401);
  });
});

describe('POST /ui/session: cookie session and CSRF', () => {
  it('exchanges the bearer for an HttpOnly SameSite=Strict cookie; the cookie reads, and changes state only with X-Ward-CSRF', async () => {
    const { d, alice } = await consoleDaemon({ authToken: TOKEN });
    const origin = d.url;
    const s = await call(d.url, '/ui/session', { method: 'POST', headers: { ...bearer, origin } });
    expect(s.status).toBe(201);
    const setCookie = String(s.headers['set-cookie']);
    expect(setCookie).toMatch(/^ward_console=[A-Za-z0-9_-]+; HttpOnly; SameSite=Strict; Path=\//);
    expect(setCookie).not.toContain(TOKEN);
    const cookie = cookieOf(s.headers['set-cookie']);
    const csrf = s.json.csrf_token as string;
    const status = await call(d.url, '/ui/session', { headers: { cookie } });
    expect(status.json).toMatchObject({ authenticated: true, csrf_token: csrf });
    // Reads with the cookie alone, on console and API routes.
    expect((await call(d.url, '/v1/approvals', { headers: { cookie } })).status).toBe(200);
    expect((await call(d.url, '/v1/policy', { headers: { cookie } })).status).toBe(200);
    // A cookie never authorizes a state change outside the console (the API's POSTs keep their rules).
    expect((await evalIntent(d.url, intentFor('fs.write_file', '/w/a'), {}, { cookie, origin, 'x-ward-csrf': csrf })).status).toBe(401);
    await evalIntent(d.url, intentFor('fs.write_file', '/w/a'), {}, bearer);
    const e = await pendingFor(d.url, 'fs.write_file', bearer);
    const body = await signTemplate(d.url, e.id, alice, { headers: { cookie } });
    // CSRF refusals: no header, a wrong header, a foreign Origin.
    const none = await call(d.url, `/v1/approvals/${e.id}/approve`, { body, headers: { cookie, origin } });
    expect(none.status).toBe(403);
    expect(none.json.error).toContain('X-WARD-CSRF');
    expect((await call(d.url, `/v1/approvals/${e.id}/approve`, { body, headers: { cookie, origin, 'x-ward-csrf': 'x' + csrf } })).status).toBe(403);
    expect((await call(d.url, `/v1/approvals/${e.id}/approve`, { body, headers: { cookie, origin: 'http://127.0.0.1:1', 'x-ward-csrf': csrf } })).status).toBe(403);
    const ok = await call(d.url, `/v1/approvals/${e.id}/approve`, { body, headers: { cookie, origin, 'x-ward-csrf': csrf } });
    expect(ok.status).toBe(200);
    // Sign out: the cookie no longer works.
    const out = await call(d.url, '/ui/session', { method: 'DELETE', headers: { cookie, origin, 'x-ward-csrf': csrf } });
    expect(out.status).toBe(200);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await call(d.url, '/v1/approvals', { headers: { cookie } })).status).toBe(401);
  });

  it('on loopback without a token: a session needs no credential, but browser state changes still need the CSRF header', async () => {
    const { d } = await consoleDaemon();
    const origin = d.url;
    const report = await reportOf(d.url, intentFor('fs.write_file', '/workspace/x'));
    // A browser (Origin, or Sec-Fetch-Site) without a session is refused; a plain client is not.
    expect((await call(d.url, '/v1/approvals/pending', { body: report, headers: { origin } })).status).toBe(403);
    expect((await call(d.url, '/v1/approvals/pending', { body: report, headers: { 'sec-fetch-site': 'same-origin' } })).status).toBe(403);
    expect((await call(d.url, '/v1/approvals/pending', { body: report })).status).toBe(201);
    const s = await call(d.url, '/ui/session', { method: 'POST', headers: { origin } });
    expect(s.status).toBe(201);
    const cookie = cookieOf(s.headers['set-cookie']);
    const r = await call(d.url, '/v1/approvals/pending', { body: await reportOf(d.url, intentFor('fs.write_file', '/workspace/y')), headers: { origin, cookie, 'x-ward-csrf': s.json.csrf_token } });
    expect(r.status).toBe(201);
    // A foreign page cannot even create a session (the loopback guard refuses its Origin).
    expect((await call(d.url, '/ui/session', { method: 'POST', headers: { origin: 'http://evil.example' } })).status).toBe(403);
  });
});
