import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { ERROR_CODES, WardError } from '../errors.js';
import { HttpError } from './http-error.js';

// One guard for every HTTP host (the daemon, `ward mcp serve`, `ward mcp proxy --listen`): which
// listen addresses are loopback, the bearer-token check and the Host/Origin checks of loopback
// listeners. Each rule is the strictest of the copies the hosts had; docs/daemon.md "Security"
// says which and why.

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Is a listen address loopback? `localhost`, 127.0.0.0/8 and ::1 in any spelling, brackets
 * allowed, and an IPv4-mapped loopback (`::ffff:127.0.0.1`, `::ffff:7f00:1`): it is the same
 * address, reachable only from this machine. Everything else is not, including `0.0.0.0`, `::`,
 * the empty host (all interfaces), short forms (`127.1`), zone ids and names other than localhost.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  const family = isIP(h);
  if (family === 0 || h.includes('%')) return false;
  return LOOPBACK.check(h, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a bearer check failed: no Authorization header, one that is not `Bearer <token>`, or the wrong token. */
export type BearerRefusal = 'absent' | 'malformed' | 'mismatch';

/**
 * `Authorization: Bearer <token>` (RFC 6750 §2.1): the scheme in any case (RFC 7235 §2.1), one or
 * more spaces, a token of visible ASCII (no spaces, no control or non-ASCII characters), nothing
 * after it. Both sides are hashed before a constant-time compare, so neither the comparison nor a
 * length check depends on how much of the token matched.
 */
export class BearerAuth {
  private readonly expected: Buffer;
  constructor(token: string) {
    if (!/^[\x21-\x7e]+$/.test(token)) {
      throw new WardError(ERROR_CODES.USAGE, 'the bearer token must be visible ASCII characters without spaces', {
        hint: 'e.g. export TOKEN=$(openssl rand -hex 32)',
      });
    }
    this.expected = digest(token);
  }

  /** undefined when the request may pass. */
  refusal(header: string | undefined): BearerRefusal | undefined {
    const match = /^Bearer +([\x21-\x7e]+)$/i.exec(header ?? '');
    const given = digest(match ? match[1]! : '');
    const equal = timingSafeEqual(given, this.expected);
    if (!header) return 'absent';
    if (!match) return 'malformed';
    return equal ? undefined : 'mismatch';
  }

  /** The daemon's 401 (`WWW-Authenticate: Bearer realm="ward"`). */
  check(req: IncomingMessage): void {
    const refused = this.refusal(req.headers.authorization);
    if (refused === undefined) return;
    throw new HttpError('auth', refused === 'absent' ? 'authorization required: send Authorization: Bearer <token>' : 'invalid bearer token', {
      hint: 'use the token from the variable named by ward serve --auth-token-env (clients: WARD_DAEMON_TOKEN)',
      headers: { 'www-authenticate': 'Bearer realm="ward"' },
    });
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Why a loopback listener refused a request's Host or Origin; `name` is the host name it read, lowercased. */
export type OriginRefusal =
  | { code: 'host_missing' }
  | { code: 'host'; header: string; name?: string }
  | { code: 'origin'; header: string; name?: string };

/**
 * The DNS-rebinding and cross-site guard of a loopback listener. A page on evil.example that
 * resolves to 127.0.0.1 still sends `Host: evil.example`; a page anywhere that posts to
 * http://127.0.0.1 sends its own `Origin`. Accepted: Host `localhost`, `127.0.0.1` or `[::1]` with
 * any port (or a name given with --allowed-host), exactly that (no trailing dot, no other spelling
 * of the address, a port of digits only); an Origin whose host is one of those names, or no
 * Origin (clients that are not browsers send none).
 */
export class LoopbackGuard {
  private readonly allowed: ReadonlySet<string>;
  constructor(extra: readonly string[] = []) {
    this.allowed = new Set(['localhost', '127.0.0.1', '::1', ...extra.map((h) => h.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1'))]);
  }

  /** undefined when the request may pass. */
  refusal(req: IncomingMessage): OriginRefusal | undefined {
    const host = req.headers.host;
    if (!host) return { code: 'host_missing' };
    const name = hostName(host);
    if (name === undefined || !this.allowed.has(name)) return { code: 'host', header: host, ...(name !== undefined ? { name } : {}) };
    const origin = req.headers.origin;
    if (origin === undefined || origin === '') return undefined;
    const originName = originHost(origin);
    if (originName === undefined || !this.allowed.has(originName)) return { code: 'origin', header: origin, ...(originName !== undefined ? { name: originName } : {}) };
    return undefined;
  }

  /** The daemon's 400/403. */
  check(req: IncomingMessage): void {
    const refused = this.refusal(req);
    if (refused === undefined) return;
    if (refused.code === 'host_missing') throw new HttpError('host_missing', 'missing Host header');
    const what = refused.code === 'host' ? 'Host' : 'Origin';
    throw new HttpError(refused.code, `${what} ${JSON.stringify(refused.header)} is not allowed on this loopback listener`, {
      hint: 'connect to localhost or 127.0.0.1, or start ward serve with --allowed-host NAME',
    });
  }
}

/** `name`, `name:port`, `[v6]` or `[v6]:port` → the name lowercased, without brackets; undefined when malformed. */
function hostName(host: string): string | undefined {
  const m = /^(?:\[([0-9a-f:.]+)\]|([^\s:[\]/@]+))(?::(\d{1,5}))?$/i.exec(host.trim());
  if (!m) return undefined;
  return (m[1] ?? m[2]!).toLowerCase();
}

/** The host of an `http(s)://host[:port]` Origin, as `hostName` reads a Host header; undefined for anything else (`null` included). */
function originHost(origin: string): string | undefined {
  const m = /^https?:\/\/([^/?#]+)$/i.exec(origin.trim());
  return m ? hostName(m[1]!) : undefined;
}
