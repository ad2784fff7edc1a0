/**
 * What a canonical host (canonical.ts `canonicalHostname`: dotted-decimal IPv4, compressed IPv6
 * without brackets, or a lowercase ASCII name) is as a network destination: an address and the
 * classes it falls in (`loopback`, `private`, `link_local`, `metadata`, `unspecified`), and the
 * CIDR ranges policy lists may name (docs/canonical-targets.md, "Address classes"). Pure.
 */

import { parseOriginEntry } from './host-entry.js';

export type AddressFamily = 4 | 6;

/** An IP address as bytes (4 or 16). */
export interface IpAddress {
  readonly family: AddressFamily;
  readonly bytes: readonly number[];
}

/** A CIDR range. */
export interface IpRange {
  readonly family: AddressFamily;
  readonly bytes: readonly number[];
  readonly prefix: number;
}

export const ADDRESS_CLASSES = ['link_local', 'loopback', 'metadata', 'private', 'unspecified'] as const;
export type AddressClass = (typeof ADDRESS_CLASSES)[number];

/** How a policy list names a class: `class:loopback`. A host name never contains `:`, and `class:…` is no IPv6 address. */
export const CLASS_PREFIX = 'class:';

/** Dotted-decimal IPv4 only: canonical hosts have no other IPv4 spelling. */
export function parseIpv4(s: string): IpAddress | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const p of parts) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return { family: 4, bytes };
}

/** An IPv6 address in any RFC 4291 text form (no brackets, no zone), including a trailing dotted IPv4. */
export function parseIpv6(s: string): IpAddress | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.length > 45) return undefined;
  let text = s;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = parseIpv4(text.slice(lastColon + 1));
    if (!v4) return undefined;
    tail.push(...v4.bytes);
    text = text.slice(0, lastColon + 1) + '0:0';
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string): number[] | undefined => {
    if (h === '') return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !rest) return undefined;
  let all: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return undefined;
    all = [...head, ...new Array<number>(missing).fill(0), ...rest];
  } else all = head;
  if (all.length !== 8) return undefined;
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return { family: 6, bytes };
}

/** A canonical host as an address, or undefined for a name. */
export function parseAddress(host: string): IpAddress | undefined {
  return host.includes(':') ? parseIpv6(host) : parseIpv4(host);
}

/** `10.0.0.0/8`, `fd00::/8`; a bare address is its own /32 or /128. Undefined when it is not one. */
export function parseRange(text: string): IpRange | undefined {
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const addr = parseAddress(addrText.startsWith('[') && addrText.endsWith(']') ? addrText.slice(1, -1) : addrText);
  if (!addr) return undefined;
  const max = addr.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > max) return undefined;
    prefix = Number(p);
  }
  return { family: addr.family, bytes: addr.bytes, prefix };
}

export function rangeContains(range: IpRange, addr: IpAddress): boolean {
  if (range.family !== addr.family) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((range.bytes[i]! & mask) !== (addr.bytes[i]! & mask)) return false;
  }
  return true;
}

/**
 * The addresses a packet to `addr` may really be for: itself, and for IPv6 forms that carry an
 * IPv4 address (IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) that IPv4 address too, so `[::ffff:127.0.0.1]` or `[64:ff9b::a9fe:a9fe]` cannot
 * step around an IPv4 range.
 */
export function addressViews(addr: IpAddress): IpAddress[] {
  if (addr.family === 4) return [addr];
  const b = addr.bytes;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (from: number): IpAddress => ({ family: 4, bytes: b.slice(from, from + 4) });
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return [addr, v4(12)];
  if (zero(0, 12) && b[12] !== 0) return [addr, v4(12)]; // IPv4-compatible, never for ::/104
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return [addr, v4(12)];
  if (b[0] === 0x20 && b[1] === 0x02) return [addr, v4(2)];
  return [addr];
}

const ranges = (...texts: string[]): IpRange[] => texts.map((t) => parseRange(t)!);

/**
 * The classes, as ranges. `loopback` includes the unspecified addresses: a connection to `0.0.0.0`
 * or `::` reaches this machine (Linux and macOS), so `http://0:8080/` is a loopback call.
 * `metadata` is the cloud instance-metadata and platform services an agent has no business
 * calling (AWS IMDS v4/v6, ECS and EKS credential agents, Amazon Time Sync, GCP, Azure IMDS and
 * WireServer, Alibaba, Oracle, Tencent, OpenStack, DigitalOcean: most share 169.254.169.254).
 */
const CLASS_RANGES: Readonly<Record<AddressClass, readonly IpRange[]>> = {
  unspecified: ranges('0.0.0.0/8', '::/128'),
  loopback: ranges('127.0.0.0/8', '::1/128', '0.0.0.0/8', '::/128'),
  private: ranges('10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'),
  link_local: ranges('169.254.0.0/16', 'fe80::/10'),
  metadata: ranges(
    '169.254.169.254/32',
    '169.254.169.253/32',
    '169.254.169.123/32',
    '169.254.170.2/32',
    '169.254.170.23/32',
    '169.254.0.23/32',
    '100.100.100.200/32',
    '168.63.129.16/32',
    '192.0.0.192/32',
    'fd00:ec2::254/128',
    'fd00:ec2::253/128',
    'fd00:ec2::123/128',
    'fd00:ec2::23/128',
  ),
};

/** Names that are the loopback host wherever they resolve (RFC 6761 §6.3: `localhost` and `*.localhost`), and common /etc/hosts aliases. */
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

/** The cloud metadata services' own names (they resolve only inside their cloud). */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.azure.internal',
]);

export function addressInClass(addr: IpAddress, cls: AddressClass): boolean {
  return addressViews(addr).some((a) => CLASS_RANGES[cls].some((r) => rangeContains(r, a)));
}

/** Whether a canonical host name (not an address) names a class by itself. */
export function nameInClass(name: string, cls: AddressClass): boolean {
  if (cls === 'loopback') return LOOPBACK_NAMES.has(name) || name.endsWith('.localhost');
  if (cls === 'metadata') return METADATA_NAMES.has(name);
  return false;
}

/** The classes a canonical host (address or name) is in, sorted. */
export function hostClasses(host: string): AddressClass[] {
  const addr = parseAddress(host);
  return ADDRESS_CLASSES.filter((cls) => (addr ? addressInClass(addr, cls) : nameInClass(host, cls)));
}

/**
 * Why a policy host-list entry (lowercased) is not valid, or undefined. Only the two forms that
 * are not host names are checked: `class:<name>` must name a class, an origin (`https://host:port`)
 * must have a known scheme and nothing past the port (host-entry.ts), and any other entry with `/`
 * must be a CIDR range (no host name contains `/`, so it was never a host either).
 */
export function hostEntryProblem(entry: string): string | undefined {
  const text = entry.trim().toLowerCase();
  if (text.startsWith(CLASS_PREFIX)) {
    const cls = text.slice(CLASS_PREFIX.length);
    return isAddressClass(cls) ? undefined : `unknown address class ${JSON.stringify(cls)} (one of ${ADDRESS_CLASSES.join(', ')})`;
  }
  const origin = parseOriginEntry(text);
  if (origin !== undefined) return origin.ok ? undefined : origin.problem;
  if (text.includes('/') && !parseRange(text)) return `${JSON.stringify(entry)} is not a CIDR range (address/prefix)`;
  return undefined;
}

export function isAddressClass(name: string): name is AddressClass {
  return (ADDRESS_CLASSES as readonly string[]).includes(name);
}

/** What a host's resolver found for a host name: its addresses (canonical form), or why there are none. */
export type HostResolution = { readonly addresses: readonly string[] } | { readonly error: string };

/** Resolutions by canonical host name, passed into evaluation by the host that did the I/O. */
export type ResolvedHosts = ReadonlyMap<string, HostResolution>;
