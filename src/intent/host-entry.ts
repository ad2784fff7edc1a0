/**
 * A domain-list entry written as an origin (`https://api.github.com`, `http://[::1]:8080/`): the
 * scheme and port it names, and the host part, which is then read like any other entry. An entry
 * with a scheme means what a user means by it, the scheme on that port, or on the scheme's default
 * port when none is written (docs/policies.md, "Scheme and port"). Only schemes with a known
 * default port are accepted, so an entry never silently stands for "any port".
 */

export const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443', ws: '80', wss: '443' };

export interface OriginEntry {
  /** Lowercase, without `:`. */
  readonly scheme: string;
  /** Decimal, no leading zeros; the scheme's default port when the entry names none. */
  readonly port: string;
  /** The host part as written (a name, a glob, an IP literal, `[ipv6]`). */
  readonly host: string;
}

export type OriginParse = { ok: true; value: OriginEntry } | { ok: false; problem: string } | undefined;

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i;

/** The origin an entry names; undefined when it has no `scheme://` (a host-only entry). */
export function parseOriginEntry(entry: string): OriginParse {
  const m = SCHEME.exec(entry.trim());
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  const fail = (why: string) => ({ ok: false as const, problem: `${JSON.stringify(entry)} ${why}` });
  const defaultPort = DEFAULT_PORTS[scheme];
  if (defaultPort === undefined) return fail(`has scheme ${JSON.stringify(scheme)} (one of ${Object.keys(DEFAULT_PORTS).join(', ')})`);
  // A trailing `/` is how URLs are often copied; a path would suggest a path rule Ward does not have.
  const authority = m[2]!.endsWith('/') ? m[2]!.slice(0, -1) : m[2]!;
  if (/[/?#]/.test(authority)) return fail('names a path, query or fragment (domain entries name a scheme, host and port only)');
  if (authority.includes('@')) return fail('has user information (domain entries name a scheme, host and port only)');
  const hp = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/.exec(authority);
  if (!hp || hp[1] === '') return fail('does not name a host (scheme://host or scheme://host:port)');
  let port = defaultPort;
  if (hp[2] !== undefined) {
    const n = Number(hp[2]);
    if (n < 1 || n > 65535) return fail('has a port outside 1-65535');
    port = String(n);
  }
  return { ok: true, value: { scheme, port, host: hp[1]! } };
}

/** The scheme and port a URL reaches (`https://h/` → https, 443); undefined when it does not parse. */
export function urlOrigin(href: string): { scheme: string; port: string } | undefined {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  const scheme = url.protocol.slice(0, -1);
  const port = url.port !== '' ? url.port : (DEFAULT_PORTS[scheme] ?? '');
  return { scheme, port };
}
