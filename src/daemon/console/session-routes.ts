import { sendJson } from '../http.js';
import type { Handler, Route } from '../routes.js';
import type { ConsoleParts } from './parts.js';
import { ConsoleSessions } from './session.js';

/*
 * `/ui/session`: the console page's sign-in. POST exchanges the API's credential (the bearer
 * token in the Authorization header, or nothing on a loopback listener without a token) for an
 * HttpOnly, SameSite=Strict session cookie and returns the CSRF token; GET tells the page whether
 * its cookie is valid (and the CSRF token again, after a reload); DELETE signs out.
 */

const create =
  (parts: ConsoleParts): Handler =>
  async (_ctx, ex) => {
    const s = parts.sessions.create();
    ex.status = 201;
    sendJson(ex.res, 201, { ok: true, csrf_token: s.csrfToken, expires_at: s.expiresAt, csrf_header: 'X-Ward-CSRF' }, { 'set-cookie': s.cookie, 'x-ward-exit-code': '0' });
  };

const status =
  (parts: ConsoleParts): Handler =>
  async (_ctx, ex) => {
    const s = parts.sessions.lookup(ex.req);
    ex.status = 200;
    sendJson(ex.res, 200, { ok: true, authenticated: s !== undefined, ...(s ? { csrf_token: s.csrf, expires_at: new Date(s.expiresAt).toISOString() } : {}) }, { 'x-ward-exit-code': '0' });
  };

const end =
  (parts: ConsoleParts): Handler =>
  async (_ctx, ex) => {
    parts.sessions.end(ex.req);
    ex.status = 200;
    sendJson(ex.res, 200, { ok: true }, { 'set-cookie': ConsoleSessions.clearCookie, 'x-ward-exit-code': '0' });
  };

export function sessionRoutes(parts: ConsoleParts): Route[] {
  return [{ name: 'ui.session', segments: ['ui', 'session'], methods: { POST: create(parts), GET: status(parts), DELETE: end(parts) }, console: true }];
}
