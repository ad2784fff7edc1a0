/**
 * `url.Parse(value).Hostname()` as Go computes it, or "" when Go's parser would fail. The WHATWG
 * `URL` class differs (IDNA conversion, bracketed IPv6, no-scheme handling), and endpoint domains
 * feed policy matching and digests, so this follows Go's rules instead.
 */
export function goUrlHostname(raw: string): string {
  if (/[\x00-\x1f\x7f]/.test(raw)) return '';
  let rest = raw;
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length);
  else if (rest.startsWith(':')) return '';
  const query = rest.indexOf('?');
  if (query >= 0) rest = rest.slice(0, query);
  if (!rest.startsWith('//')) return '';
  let authority = rest.slice(2);
  const slash = authority.indexOf('/');
  if (slash >= 0) authority = authority.slice(0, slash);
  const at = authority.lastIndexOf('@');
  const host = at >= 0 ? authority.slice(at + 1) : authority;
  return hostnameOf(host);
}

function hostnameOf(host: string): string {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return '';
    if (!validOptionalPort(host.slice(close + 1))) return '';
    return unescapeHost(host.slice(1, close));
  }
  const colon = host.lastIndexOf(':');
  let name = host;
  if (colon >= 0) {
    if (!validOptionalPort(host.slice(colon))) return '';
    name = host.slice(0, colon);
  }
  return unescapeHost(name);
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

const HOST_FORBIDDEN = /[ "<>\\^`{|}]/;

function unescapeHost(host: string): string {
  if (HOST_FORBIDDEN.test(host)) return '';
  if (!host.includes('%')) return host;
  if (/%(?![0-9A-Fa-f]{2})/.test(host)) return '';
  try {
    return decodeURIComponent(host);
  } catch {
    return '';
  }
}
