import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http.js';

/** 127.0.0.0/8, ::1, ::ffff:127.x and `localhost` are loopback; everything else (0.0.0.0 included) is not. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h.startsWith('::ffff:')) return h.slice(7).startsWith('127.');
  return false;
}

/**
 * Bearer-token check in constant time: both sides are hashed first, so neither the comparison nor
 * its length check depends on how much of the token matched.
 */
export class BearerAuth {
  private readonly expected: Buffer;
  constructor(token: string) {
    this.expected = createHash('sha256').update(token, 'utf8').digest();
  }

  check(req: IncomingMessage): void {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(header);
    const given = createHash('sha256').update(match ? match[1]! : '', 'utf8').digest();
    if (!timingSafeEqual(given, this.expected) || !match) {
      throw new HttpError(401, header === '' ? 'authorization required: send Authorization: Bearer <token>' : 'invalid bearer token', {
        hint: 'use the token from the variable named by ward serve --auth-token-env (clients: WARD_DAEMON_TOKEN)',
        headers: { 'www-authenticate': 'Bearer realm="ward"' },
        reason: 'auth',
      });
    }
  }
}

/**
 * DNS-rebinding guard for loopback listeners: a browser page on evil.example that resolves to
 * 127.0.0.1 still sends `Host: evil.example`, which is refused. Allowed: localhost, 127.0.0.1,
 * [::1] (any port) and the names given with --allowed-host.
 */
export class HostGuard {
  private readonly allowed: Set<string>;
  constructor(extra: readonly string[] = []) {
    this.allowed = new Set(['localhost', '127.0.0.1', '::1', ...extra.map((h) => h.toLowerCase())]);
  }

  check(req: IncomingMessage): void {
    const host = req.headers.host;
    if (!host) throw new HttpError(400, 'missing Host header', { reason: 'host' });
    const name = hostName(host);
    if (!this.allowed.has(name)) {
      throw new HttpError(403, `Host ${JSON.stringify(host)} is not allowed on this loopback listener`, {
        hint: 'connect to localhost or 127.0.0.1, or start ward serve with --allowed-host NAME',
        reason: 'host',
      });
    }
  }
}

function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') === -1 ? undefined : h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}
