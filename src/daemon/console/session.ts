import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../edge/http-error.js';

/*
 * The console's browser session and its CSRF defence (docs/console.md "Session and CSRF").
 *
 * - `POST /ui/session` exchanges what the API already accepts (the bearer token, or nothing on a
 *   loopback listener without a token) for a random session id in an HttpOnly, SameSite=Strict
 *   cookie. The bearer token is sent once, in a header, and never appears in a URL, a cookie or a
 *   log line. The answer carries a CSRF token the page keeps in memory.
 * - A request with a valid session cookie is authenticated for reads (GET) of every API route.
 *   State changes through a session are allowed only on console routes, and only with the
 *   `X-Ward-CSRF` header equal to the session's CSRF token and, when the browser sends `Origin`,
 *   an Origin equal to the request's own scheme and Host. A cross-site page can neither read the
 *   token nor set the header without a CORS preflight, which the daemon never grants.
 * - Any browser request to a state-changing console route (one with a cookie, an `Origin` or a
 *   `Sec-Fetch-Site` header) must pass that check, even on a loopback listener without a token.
 *   Clients that are not browsers send none of those headers and authenticate as for every route.
 *
 * Sessions live in memory (a restart logs everyone out) and are stored by the sha256 of their id.
 */

export const SESSION_COOKIE = 'ward_console';
export const CSRF_HEADER = 'x-ward-csrf';
const SESSION_TTL_MS = 12 * 3600 * 1000;
const MAX_SESSIONS = 256;

export interface Session {
  csrf: string;
  expiresAt: number;
}

export interface NewSession {
  cookie: string;
  csrfToken: string;
  expiresAt: string;
}

/** The parts of a route the guard reads. */
export interface GuardedRoute {
  name: string;
  public?: boolean;
  /** A console route: state changes through a browser session are allowed here (with the CSRF header). */
  console?: boolean;
}

export class ConsoleSessions {
  private readonly sessions = new Map<string, Session>();

  create(): NewSession {
    this.sweep();
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    const expiresAt = Date.now() + SESSION_TTL_MS;
    this.sessions.set(hash(id), { csrf, expiresAt });
    return {
      cookie: `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`,
      csrfToken: csrf,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  /** The session a request's cookie names, if it is valid. */
  lookup(req: IncomingMessage): Session | undefined {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (!id) return undefined;
    const s = this.sessions.get(hash(id));
    if (!s) return undefined;
    if (s.expiresAt <= Date.now()) {
      this.sessions.delete(hash(id));
      return undefined;
    }
    return s;
  }

  end(req: IncomingMessage): void {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (id) this.sessions.delete(hash(id));
  }

  static readonly clearCookie = `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;

  /**
   * Runs after the Host/Origin guard and before the bearer check. Returns true when a session
   * authenticates the request (the bearer check is then skipped); throws 403 `csrf` for a browser
   * state change without a valid session and CSRF header; false otherwise (the usual rules apply).
   */
  check(req: IncomingMessage, route: GuardedRoute | undefined): boolean {
    if (!route || route.public) return false;
    const method = req.method ?? 'GET';
    const changes = method !== 'GET' && method !== 'HEAD';
    const hasCookie = cookieValue(req.headers.cookie, SESSION_COOKIE) !== undefined;
    const browser = hasCookie || req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined;
    if (!changes) return this.lookup(req) !== undefined;
    if (!route.console || !browser) return false;
    sameOrigin(req);
    // Creating a session needs what the API needs (the bearer token, or a loopback listener without one).
    if (route.name === 'ui.session' && method === 'POST') return false;
    const s = this.lookup(req);
    if (!s) throw csrfError('no valid console session: sign in with POST /ui/session first');
    const given = req.headers[CSRF_HEADER];
    if (typeof given !== 'string' || !equal(given, s.csrf)) throw csrfError(`missing or wrong ${CSRF_HEADER.toUpperCase()} header`);
    return true;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(k);
  }
}

/** A browser's Origin (when sent) must be this daemon's own origin: same scheme-less host and port. */
function sameOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const host = req.headers.host ?? '';
  if (origin !== `http://${host}` && origin !== `https://${host}`) throw csrfError(`Origin ${JSON.stringify(origin)} is not this daemon's origin`);
}

function csrfError(message: string): HttpError {
  return new HttpError('csrf', message, { hint: `the console page sends its session cookie and the ${CSRF_HEADER.toUpperCase()} header; API clients send Authorization: Bearer and no cookie (docs/console.md)` });
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      const v = part.slice(i + 1).trim();
      return /^[A-Za-z0-9_-]{1,128}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}

function hash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

function equal(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}
