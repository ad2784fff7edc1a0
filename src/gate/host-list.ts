import { withDiscoveredTargets } from '../intent/discover.js';
import {
  CLASS_PREFIX,
  addressInClass,
  addressViews,
  hostClasses,
  isAddressClass,
  nameInClass,
  parseAddress,
  parseRange,
  rangeContains,
  type AddressClass,
  type IpAddress,
  type IpRange,
} from '../intent/address.js';
import { canonicalHostname, canonicalTarget } from '../intent/canonical.js';
import { parseOriginEntry, urlOrigin } from '../intent/host-entry.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { NormalizedPolicy } from '../policy/types.js';
import { goPathMatch, hasGlobMeta } from './glob.js';

/**
 * A policy host list (`endpoint.domain_allowlist` / `domain_denylist`) compared with canonical
 * hosts (docs/canonical-targets.md, "Address classes"). An entry is one of:
 * - `class:<name>`: every address (and name, e.g. `foo.localhost`) in that class;
 * - a CIDR range, `10.0.0.0/8`, `fd00::/8`: every address in it, in any spelling, IPv4 inside
 *   IPv6 included;
 * - an origin, `https://api.github.com`, `http://[::1]:8080`: the host part as below, and in an
 *   allowlist only on that scheme and port (the scheme's default port when none is written); a
 *   target with no scheme (a bare `host` target) cannot be shown to be on it and is not allowed.
 *   In a denylist the scheme and port are ignored: the entry denies the host on every scheme and
 *   port, because a deny narrower than the host leaves the same server reachable over `http:` or
 *   another port, and narrowing is what allowlists are for (docs/policies.md, "Scheme and port");
 * - a host, address or glob, compared in canonical form. In a denylist, a literal that is itself a
 *   loopback or metadata host denies its whole class: a list that denies `127.0.0.1` or `localhost`
 *   means "this machine" and denies `0`, `[::]` and `127.0.0.2` too; `169.254.169.254` means the
 *   metadata service and denies `metadata.google.internal`. Allowlists are never widened: they
 *   allow what they spell.
 *
 * A host name is also judged by the addresses it resolves to, when the host passed them in
 * (`resolved`): a denylist denies a name when any of its addresses is denied; an allowlist allows a
 * name that is not listed when every one of its addresses is.
 */

/** The scheme and port a target reaches (`https`, `443`), or undefined when it names no scheme. */
export interface TargetOrigin {
  readonly scheme: string;
  readonly port: string;
}

type Entry =
  | { kind: 'origin'; origin: TargetOrigin; host: Entry }
  | { kind: 'class'; cls: AddressClass }
  | { kind: 'range'; range: IpRange; widen: readonly AddressClass[]; literal: boolean }
  | { kind: 'pattern'; pattern: string; widen: readonly AddressClass[] }
  /** Refused by policy validation; if one ever gets here it denies everything and allows nothing. */
  | { kind: 'invalid' };

interface HostList {
  entries: readonly Entry[];
  /** Whether some entry names an address, a range or a class: then a host name's addresses matter. */
  namesAddresses: boolean;
  /** Whether some entry is a `class:` or a CIDR range (value lists: `target_values`, …). */
  classOrRange: boolean;
}

const domainPatterns = new Map<string, string>();

/**
 * A policy domain pattern in the form target hosts are compared in. Globs keep their text (only
 * a trailing dot goes); a literal host or IP is canonicalized like a target's, so a denylist entry
 * `169.254.169.254.` or `[::ffff:a9fe:a9fe]` means the address itself.
 */
export function canonicalDomainPattern(pattern: string): string {
  let canonical = domainPatterns.get(pattern);
  if (canonical !== undefined) return canonical;
  if (/[*?[\\]/.test(pattern)) canonical = pattern.replace(/\.+$/, '');
  else {
    const host = canonicalHostname(pattern);
    canonical = host.ok ? host.value : pattern;
  }
  if (domainPatterns.size > 4096) domainPatterns.clear();
  domainPatterns.set(pattern, canonical);
  return canonical;
}

const WIDENING_CLASSES: readonly AddressClass[] = ['loopback', 'metadata'];

const compiled = new WeakMap<readonly string[], HostList>();

function compile(list: readonly string[]): HostList {
  let hit = compiled.get(list);
  if (!hit) {
    const entries = list.map(compileEntry);
    const hosts = entries.map((e) => (e.kind === 'origin' ? e.host : e));
    const namesAddresses = hosts.some((e) => e.kind === 'class' || e.kind === 'range' || (e.kind === 'pattern' && e.widen.length > 0));
    const classOrRange = entries.some((e) => e.kind === 'class' || (e.kind === 'range' && !e.literal));
    hit = { entries, namesAddresses, classOrRange };
    compiled.set(list, hit);
  }
  return hit;
}

function compileEntry(raw: string): Entry {
  const text = raw.trim().toLowerCase();
  const origin = parseOriginEntry(text);
  if (origin !== undefined) {
    if (!origin.ok) return { kind: 'invalid' };
    const { scheme, port, host } = origin.value;
    return { kind: 'origin', origin: { scheme, port }, host: compileEntry(host) };
  }
  if (text.startsWith(CLASS_PREFIX)) {
    const cls = text.slice(CLASS_PREFIX.length);
    return isAddressClass(cls) ? { kind: 'class', cls } : { kind: 'invalid' };
  }
  if (text.includes('/')) {
    const range = parseRange(text);
    return range ? { kind: 'range', range, widen: [], literal: false } : { kind: 'invalid' };
  }
  // `[::1]` is an address, not a glob character class.
  const bracketed = /^\[[0-9a-f:.]+\]$/.test(text) && parseAddress(text.slice(1, -1)) !== undefined;
  const pattern = canonicalDomainPattern(bracketed ? text.slice(1, -1) : text);
  const widen = hasGlobMeta(pattern) ? [] : hostClasses(pattern).filter((c) => WIDENING_CLASSES.includes(c));
  const range = parseAddress(pattern) ? parseRange(pattern) : undefined;
  return range ? { kind: 'range', range, widen, literal: true } : { kind: 'pattern', pattern, widen };
}

function inClass(host: string, addr: IpAddress | undefined, cls: AddressClass): boolean {
  return addr ? addressInClass(addr, cls) : nameInClass(host, cls);
}

/**
 * `addr`: `host` parsed as an address (undefined for a name), parsed once by the caller. `origin`:
 * the target's scheme and port, which only allowlist origin entries look at.
 */
function entryMatches(e: Entry, host: string, addr: IpAddress | undefined, deny: boolean, origin?: TargetOrigin): boolean {
  switch (e.kind) {
    case 'origin':
      if (!deny && (origin === undefined || origin.scheme !== e.origin.scheme || origin.port !== e.origin.port)) return false;
      return entryMatches(e.host, host, addr, deny);
    case 'class':
      return inClass(host, addr, e.cls);
    case 'invalid':
      return deny;
    case 'range':
      if (addr && addressViews(addr).some((a) => rangeContains(e.range, a))) return true;
      break;
    case 'pattern':
      if (domainPatternMatches(e.pattern, host)) return true;
      break;
  }
  return deny && e.widen.some((cls) => inClass(host, addr, cls));
}

/**
 * Whether a `class:` or CIDR entry of a value list (`target_values`, `destination_values`) covers a
 * canonical host. Literals are not widened there: those lists select rules, allow rules too.
 */
export function hostListNamesClassOrRange(list: readonly string[], host: string): boolean {
  const { entries, classOrRange } = compile(list);
  if (!classOrRange) return false;
  const addr = parseAddress(host);
  return entries.some((e) => (e.kind === 'class' || (e.kind === 'range' && !e.literal)) && entryMatches(e, host, addr, false));
}

export function domainPatternMatches(pattern: string, domain: string): boolean {
  if (pattern === domain) return true;
  if (pattern.startsWith('*.') && !/[*?[\\]/.test(pattern.slice(2))) return domain.endsWith(pattern.slice(1));
  return hasGlobMeta(pattern) && goPathMatch(pattern, domain);
}

/** Whether a host name's resolved addresses matter to this list (it names an address, range or class). */
export function hostListNamesAddresses(list: readonly string[]): boolean {
  return compile(list).namesAddresses;
}

/** How a denylist judges a canonical host: by the host itself, or (`resolved`) by one of its addresses. */
export function hostListDenies(list: readonly string[], host: string, resolved: readonly string[] = []): 'host' | 'address' | undefined {
  const { entries } = compile(list);
  const addr = parseAddress(host);
  if (entries.some((e) => entryMatches(e, host, addr, true))) return 'host';
  return resolved.some((a) => {
    const parsed = parseAddress(a);
    return entries.some((e) => entryMatches(e, a, parsed, true));
  })
    ? 'address'
    : undefined;
}

/**
 * Whether an allowlist allows a canonical host reached on `origin` (undefined: no scheme known):
 * listed itself, or every one of its resolved addresses is.
 */
export function hostListAllows(list: readonly string[], host: string, resolved: readonly string[] = [], origin?: TargetOrigin): boolean {
  const { entries } = compile(list);
  const addr = parseAddress(host);
  if (entries.some((e) => entryMatches(e, host, addr, false, origin))) return true;
  return (
    resolved.length > 0 &&
    resolved.every((a) => {
      const parsed = parseAddress(a);
      return entries.some((e) => entryMatches(e, a, parsed, false, origin));
    })
  );
}

const policyNamesAddresses = new WeakMap<NormalizedPolicy, boolean>();

/** Whether some endpoint domain list of the policy names an address, range or class. Memoized per policy. */
export function policyNeedsResolution(policy: NormalizedPolicy): boolean {
  let hit = policyNamesAddresses.get(policy);
  if (hit === undefined) {
    hit = policy.rules.some(
      (r) => r.endpoint.enabled && (hostListNamesAddresses(r.endpoint.domain_denylist) || hostListNamesAddresses(r.endpoint.domain_allowlist)),
    );
    policyNamesAddresses.set(policy, hit);
  }
  return hit;
}

/**
 * The host names (canonical, not addresses) of an intent's targets, script steps included, whose
 * addresses the policy's domain lists need: empty when no list names an address, range or class.
 * What the host resolves before evaluation (decision/host-resolution.ts).
 */
export function hostsToResolve(policy: NormalizedPolicy, intent: NormalizedIntent): string[] {
  if (!policyNeedsResolution(policy)) return [];
  const workspace = intent.context.workspace;
  // The targets the rules check: found in the arguments too (intent/discover.ts).
  let checked = intent;
  try {
    checked = withDiscoveredTargets(intent);
  } catch {
    // Arguments past discovery's bounds: evaluation refuses the intent; nothing more to resolve.
  }
  const all = [...checked.targets, ...(checked.script?.steps.flatMap((step) => step.targets) ?? [])];
  const names = new Set<string>();
  for (const t of all) {
    const host = canonicalTarget(t, workspace).host;
    if (host !== undefined && host !== '' && parseAddress(host) === undefined) names.add(host);
  }
  return [...names];
}

/**
 * The scheme and port a target reaches: a `url` target's (its canonical href), or a `host` target
 * spelled as an http(s) URL. Undefined for a bare host and every other kind: no scheme is known.
 */
export function targetOrigin(kind: string, value: string, canonicalValue: string | undefined): TargetOrigin | undefined {
  if (kind === 'url' && canonicalValue !== undefined) return urlOrigin(canonicalValue);
  if (kind === 'host' && /^https?:\/\//i.test(value)) return urlOrigin(value);
  return undefined;
}
