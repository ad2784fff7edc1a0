import { domainToASCII } from 'node:url';
import { goCleanPath, type JsonObject } from '../canon/index.js';
import type { ResolvedHosts } from './address.js';
import type { NormalizedIntent, PathView, Target } from './types.js';

/**
 * Canonical forms of what a target will touch (docs/canonical-targets.md). Rules and lists are
 * matched against these, never against the string as the agent spelled it: `../../etc/shadow`
 * under `/srv/app`, `/proc/self/root/etc/shadow` and `file:///etc/%73hadow` all become
 * `/etc/shadow`; `http://2852039166/`, `http:/169.254.169.254./` and full-width digits all become
 * the host `169.254.169.254`. Hosts go through the WHATWG URL parser, the one Node, browsers and
 * most HTTP clients use, so Ward sees the host the tool will connect to.
 *
 * The normalized intent (and so every digest) keeps the reference's values; this is a view beside
 * it. Anything that cannot be reduced is reported as a `problem`, and the callers fail closed on it.
 */
export interface CanonicalTarget {
  /** `path`: absolute, cleaned path. `url`: the WHATWG href without credentials or fragment. `host`: the host. Others: the value. */
  readonly value: string | undefined;
  /** The network host the target reaches ("" when the target has none, e.g. a path). */
  readonly host: string | undefined;
  /** The local file the target touches: `path` targets and `file:` URLs; "" for the rest. */
  readonly path: string | undefined;
  /** Why `value` or `host` is undefined. */
  readonly problem: string | undefined;
  /**
   * Other paths the same file is reached by, which must pass too: the path with symbolic links
   * resolved and hard links under denied roots, where the host resolved paths on the file system.
   */
  readonly aliases: readonly string[];
}

export type Canonical<T> = { ok: true; value: T } | { ok: false; problem: string };

const ok = <T>(value: T): Canonical<T> => ({ ok: true, value });
const fail = (problem: string): Canonical<never> => ({ ok: false, problem });

const cache = new WeakMap<Target, { workspace: string; view: PathView | undefined; canonical: CanonicalTarget }>();
const NO_ALIASES: readonly string[] = [];

/**
 * The canonical view of a normalized target, given the intent's (normalized) workspace and, where
 * the host resolved paths on the file system, its `path_view`. Memoized.
 */
export function canonicalTarget(target: Target, workspace: string, view?: PathView): CanonicalTarget {
  const hit = cache.get(target);
  if (hit && hit.workspace === workspace && hit.view === view) return hit.canonical;
  let canonical = computeCanonicalTarget(target, workspace);
  if (view && canonical.path) canonical = withFileSystemView(canonical, spelledPath(target.value, workspace), view);
  cache.set(target, { workspace, view, canonical });
  return canonical;
}

/** A lexical path the host did not resolve fails closed: the view must cover every path it evaluates. */
function withFileSystemView(c: CanonicalTarget, spelled: Canonical<string>, view: PathView): CanonicalTarget {
  const resolved = spelled.ok ? view.paths.get(spelled.value) : undefined;
  if (!resolved) return { ...c, value: undefined, path: undefined, problem: 'path was not resolved on the file system' };
  if (resolved.problem !== undefined) return { ...c, value: undefined, path: undefined, problem: resolved.problem };
  const aliases = [...c.aliases, ...resolved.names].filter((p, i, all) => p !== c.path && all.indexOf(p) === i);
  return aliases.length ? { ...c, aliases } : c;
}

/** Every path a canonical target must pass as: the spelled one and its aliases ([] for no path). */
export function canonicalPaths(c: CanonicalTarget): readonly string[] {
  if (!c.path) return NO_ALIASES;
  return c.aliases.length ? [c.path, ...c.aliases] : [c.path];
}

function computeCanonicalTarget(t: Target, workspace: string): CanonicalTarget {
  switch (t.kind) {
    case 'path': {
      const path = canonicalPathReadings(t.value, workspace);
      return path.ok
        ? { value: path.value[0], host: claimedHost(t), path: path.value[0], problem: undefined, aliases: path.value.slice(1) }
        : { value: undefined, host: claimedHost(t), path: undefined, problem: path.problem, aliases: NO_ALIASES };
    }
    case 'url': {
      const url = canonicalUrl(t.value);
      const isFile = /^file:/i.test(t.value);
      if (!url.ok) return { value: undefined, host: undefined, path: isFile ? undefined : '', problem: url.problem, aliases: NO_ALIASES };
      if (!isFile) return { value: url.value.href, host: url.value.host, path: '', problem: undefined, aliases: NO_ALIASES };
      const path = canonicalPathReadings(t.value, workspace);
      return path.ok
        ? { value: url.value.href, host: '', path: path.value[0], problem: undefined, aliases: path.value.slice(1) }
        : { value: undefined, host: '', path: undefined, problem: path.problem, aliases: NO_ALIASES };
    }
    case 'host': {
      const host = canonicalHostTarget(t.value);
      return host.ok
        ? { value: host.value, host: host.value, path: '', problem: undefined, aliases: NO_ALIASES }
        : { value: undefined, host: undefined, path: '', problem: host.problem, aliases: NO_ALIASES };
    }
    default: {
      const host = t.endpoint_domain === '' ? ok('') : canonicalHostname(t.endpoint_domain);
      return host.ok
        ? { value: t.value, host: host.value, path: '', problem: undefined, aliases: NO_ALIASES }
        : { value: t.value, host: undefined, path: '', problem: `endpoint_domain: ${host.problem}`, aliases: NO_ALIASES };
    }
  }
}

/** For a path target, an explicit `endpoint_domain` claim is all there is to go on. */
function claimedHost(t: Target): string | undefined {
  if (t.endpoint_domain === '') return '';
  const host = canonicalHostname(t.endpoint_domain);
  return host.ok ? host.value : undefined;
}

/**
 * What the trace records about canonicalisation: each target (top-level and script steps) whose
 * canonical form differs from its value as written, or that could not be reduced, and each path
 * target the file system adds names for (`aliases`) or that was read without a file system
 * (`resolution: "lexical"`: the host could not see the disk the tool will use). Empty for the
 * ordinary intent whose targets are already canonical and resolved, so such traces stay as they were.
 */
export function canonicalTargetNotes(intent: NormalizedIntent, resolved?: ResolvedHosts): JsonObject[] {
  const workspace = intent.context.workspace;
  const view = intent.path_view;
  const all = [...intent.targets, ...(intent.script?.steps.flatMap((step) => step.targets) ?? [])];
  const notes: JsonObject[] = [];
  const seen = new Set<string>();
  for (const t of all) {
    const key = `${t.kind}\0${t.value}\0${t.endpoint_domain}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const c = canonicalTarget(t, workspace, view);
    const hostDiffers = c.host !== undefined && c.host !== '' && c.host !== t.endpoint_domain;
    const resolution = c.host ? resolved?.get(c.host) : undefined;
    const lexical = view === undefined && c.path !== undefined && c.path !== '';
    if (c.problem === undefined && c.value === t.value && !hostDiffers && !resolution && !lexical && c.aliases.length === 0) continue;
    const note: JsonObject = { kind: t.kind, value: t.value };
    if (c.value !== undefined && c.value !== t.value) note['canonical_value'] = c.value;
    if (hostDiffers) note['canonical_host'] = c.host!;
    if (c.aliases.length) note['aliases'] = [...c.aliases];
    if (lexical) note['resolution'] = 'lexical';
    if (c.problem !== undefined) note['problem'] = c.problem;
    if (resolution) {
      if ('addresses' in resolution) note['resolved_addresses'] = [...resolution.addresses];
      else note['resolution_error'] = resolution.error;
    }
    notes.push(note);
  }
  return notes;
}

// ---------------------------------------------------------------------------------------------
// Paths

const WINDOWS_DRIVE = /^[A-Za-z]:\//;
const PROCESS_DIR = /^(?:self|thread-self|[0-9]+)$/;
const PROCESS_LINKS = new Set(['cwd', 'fd', 'exe', 'map_files']);
const FD_DEVICES = new Set(['fd', 'stdin', 'stdout', 'stderr']);

export function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || WINDOWS_DRIVE.test(p);
}

/**
 * The absolute path a file tool will open. Relative paths are joined to the workspace; `..` is
 * resolved (never kept above the root); `\` separates like `/`, as the reference cleans paths;
 * `file://` URLs become their path; `/proc/<pid>/root/` is the root it names. Refused: NUL bytes,
 * `~` (the home directory is the tool's, not Ward's, to know), `/proc/<pid>/cwd|fd|…` (they point
 * wherever the process happens to be), a `..` stepping back out of a /proc process directory (the
 * kernel takes it from where the link points, not from the text), a `file://` URL whose path as
 * written differs from its parsed path, remote `file://` hosts, and relative
 * paths without an absolute workspace. This is the lexical reading; where the file system is
 * visible, the host adds what the disk makes of the path (`PathView`, docs/canonical-targets.md).
 */
export function canonicalPath(value: string, workspace: string): Canonical<string> {
  const spelled = spelledPath(value, workspace);
  if (!spelled.ok) return spelled;
  const p = spelled.value;
  return WINDOWS_DRIVE.test(p) ? ok(p.slice(0, 1).toUpperCase() + ':' + goCleanPath(p.slice(2))) : walkPosix(p);
}

/**
 * The path as the kernel walks it, then the path a tool reaches that cleans `..` as text first
 * (Node's `path.resolve`, Go's `filepath.Clean`) when that differs: `/proc/self/root/../X` is `/X`
 * to the kernel and `/proc/self/X` once cleaned. Both must pass; either refused refuses the path.
 */
function canonicalPathReadings(value: string, workspace: string): Canonical<readonly string[]> {
  const walked = canonicalPath(value, workspace);
  if (!walked.ok) return walked;
  const spelled = spelledPath(value, workspace);
  if (!spelled.ok || WINDOWS_DRIVE.test(spelled.value) || !spelled.value.includes('..')) return ok([walked.value]);
  const cleaned = walkPosix(goCleanPath(spelled.value));
  if (!cleaned.ok) return cleaned;
  return ok(cleaned.value === walked.value ? [walked.value] : [walked.value, cleaned.value]);
}

/**
 * The absolute path a target spells, before `.` and `..` are walked: a `file:` URL's path, `\`
 * as `/`, a relative path joined to the workspace. What the file system is asked about
 * (decision/path-view.ts), and the key of an intent's `path_view`.
 */
export function spelledPath(value: string, workspace: string): Canonical<string> {
  let p = value;
  if (p.includes('\0')) return fail('path contains a NUL byte');
  if (/^file:/i.test(p)) {
    const file = fileUrlPath(p);
    if (!file.ok) return file;
    p = file.value;
  }
  p = p.replaceAll('\\', '/');
  if (p.startsWith('~')) return fail('path starts with ~ (home directory of an unknown user)');
  if (!isAbsolutePath(p)) {
    const base = workspace.replaceAll('\\', '/');
    if (!isAbsolutePath(base)) return fail('relative path and the workspace is not absolute');
    if (base.includes('\0')) return fail('workspace contains a NUL byte');
    p = `${base}/${p}`;
  }
  return ok(p);
}

/**
 * Clean an absolute POSIX path the way the kernel walks it, for the names whose meaning is known
 * without a disk. `/proc/<pid>/root` (nested too) is `/`, and the walk goes on from there, so
 * `/proc/self/root/../etc` is `/etc`, as the kernel makes it (`..` at a root stays there). A `..`
 * that would step back out of a /proc process directory is refused: `/proc/self`, `/proc/net` and
 * the entries below them are links, and the kernel takes `..` from where they point, not from the
 * text. The links to wherever a process happens to be (`cwd`, `fd`, `exe`, `map_files`,
 * `/dev/fd`, `/dev/stdin`…) are refused outright.
 */
function walkPosix(p: string): Canonical<string> {
  const stack: string[] = [];
  for (const segment of p.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (stack[0] === 'proc' && stack.length >= 2) {
        return fail(`\`..\` after /proc/${stack[1]} (the kernel resolves it from where the link points, not from the text)`);
      }
      stack.pop();
      continue;
    }
    stack.push(segment);
    if (stack.length === 2 && stack[0] === 'dev' && FD_DEVICES.has(segment)) return fail(`/dev/${segment} points wherever the process is`);
    if (stack[0] !== 'proc' || stack.length < 3 || !PROCESS_DIR.test(stack[1]!)) continue;
    const entryAt = stack[2] === 'task' && stack.length >= 4 && /^[0-9]+$/.test(stack[3]!) ? 4 : 2;
    if (stack.length !== entryAt + 1) continue;
    if (segment === 'root') stack.length = 0; // `/proc/self/root/proc/1/root/etc` nests
    else if (PROCESS_LINKS.has(segment)) return fail(`/proc/*/${segment} points wherever that process is`);
  }
  return ok(`/${stack.join('/')}`);
}

function fileUrlPath(raw: string): Canonical<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('file URL does not parse');
  }
  if (url.hostname !== '' && url.hostname !== 'localhost') return fail(`file URL names a remote host (${url.hostname})`);
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return fail('file URL has invalid percent-encoding');
  }
  if (path.includes('\0')) return fail('path contains a NUL byte');
  // The URL parser removes `..` as text (`file:///proc/self/root/../etc` parses as `/proc/self/etc`),
  // but a tool that strips the scheme hands the kernel the `..`: the path as written must be the same path.
  const written = writtenFileUrlPath(raw);
  if (written === undefined) return fail('file URL has invalid percent-encoding');
  const asWritten = walkPosix(written);
  if (!asWritten.ok) return asWritten;
  const asParsed = walkPosix(path);
  if (asParsed.ok && asParsed.value !== asWritten.value) {
    return fail(`file URL names ${asWritten.value} as written but ${asParsed.value} once parsed`);
  }
  // WHATWG keeps a Windows drive as "/C:/…".
  return ok(/^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path);
}

/** The path of a `file:` URL as written: no dot-segment removal, percent-decoded; undefined when it does not decode. */
function writtenFileUrlPath(raw: string): string | undefined {
  let rest = raw.slice('file:'.length).replace(/[?#].*$/s, '');
  const authority = /^[/\\]{2}[^/\\]*/.exec(rest);
  if (authority) rest = rest.slice(authority[0].length);
  try {
    rest = decodeURIComponent(rest);
  } catch {
    return undefined;
  }
  return `/${rest.replaceAll('\\', '/')}`;
}

// ---------------------------------------------------------------------------------------------
// Hosts and URLs

/** A URL target: the WHATWG parse, with its host reduced to canonical form. */
export function canonicalUrl(raw: string): Canonical<{ href: string; host: string }> {
  if (raw.includes('\0')) return fail('URL contains a NUL byte');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('URL does not parse (a scheme and a host are required)');
  }
  if (url.hostname === '') {
    if (url.protocol === 'file:') return ok({ href: url.href, host: '' });
    return fail(`URL has no host`);
  }
  const host = canonicalHostname(url.hostname);
  if (!host.ok) return host;
  if (url.hostname !== host.value && !host.value.includes(':')) url.hostname = host.value;
  // Credentials and the fragment do not change what is reached: the fragment is never sent.
  if (url.username !== '') url.username = '';
  if (url.password !== '') url.password = '';
  if (url.hash !== '') url.hash = '';
  return ok({ href: url.href, host: host.value });
}

/**
 * A `host` target: a bare host (`example.org`, `example.org:443`, `[::1]`) or an http(s) URL, as
 * the reference accepts. Anything else is read as a host name under http, the way tools do.
 */
export function canonicalHostTarget(raw: string): Canonical<string> {
  if (raw.includes('\0')) return fail('host contains a NUL byte');
  const withScheme = /^https?:/i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return fail('host does not parse');
  }
  if (url.hostname === '') return fail('host is empty');
  return canonicalHostname(url.hostname);
}

/**
 * A host name or IP literal in canonical form: IDNA (UTS #46) ASCII, lowercase, IPv4 in dotted
 * decimal whatever its spelling (`2852039166`, `0xa9.254.0251.254`), IPv6 compressed without
 * brackets, IPv4-mapped IPv6 (`::ffff:169.254.169.254`) as the IPv4 address it reaches, and no
 * trailing dot. Used on target hosts and on domain patterns alike.
 */
export function canonicalHostname(raw: string): Canonical<string> {
  let host = raw.trim();
  if (host === '') return fail('host is empty');
  if (isPlainDomain(host)) return ok(host);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.includes(':')) return canonicalIpv6(host);
  // domainToASCII percent-decodes, maps (full-width digits, case), applies IDNA and parses IPv4.
  const ascii = domainToASCII(host);
  if (ascii === '') return fail(`host ${JSON.stringify(raw)} is not a valid host name`);
  const trimmed = ascii.replace(/\.+$/, '');
  if (trimmed === '') return fail('host is empty');
  // "1.2.3.4." → "1.2.3.4" can make a numeric form appear: parse once more.
  if (trimmed !== ascii) {
    const again = domainToASCII(trimmed);
    if (again === '') return fail(`host ${JSON.stringify(raw)} is not a valid host name`);
    return ok(again);
  }
  return ok(trimmed);
}

/**
 * Lowercase letter-digit-hyphen labels whose last label is not a number: already canonical, and
 * most hosts are like this (the WHATWG parser has lowercased them). Numbers are left to the full
 * parse because `2852039166` and `0xa9.254.0251.254` are IPv4 addresses.
 */
function isPlainDomain(host: string): boolean {
  if (!/^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/.test(host) || host.includes('xn--')) return false;
  return !/^(?:[0-9]+|0x[0-9a-f]*)$/.test(host.slice(host.lastIndexOf('.') + 1));
}

function canonicalIpv6(host: string): Canonical<string> {
  let url: URL;
  try {
    url = new URL(`http://[${host}]/`);
  } catch {
    return fail(`host ${JSON.stringify(host)} is not a valid IPv6 address`);
  }
  const compressed = url.hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return ok(`${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`);
  }
  return ok(compressed);
}

// ---------------------------------------------------------------------------------------------
// Tool names

/**
 * Why a (trimmed, lowercased) tool name is not in the one form rules compare, or undefined when it
 * is. Full-width and other compatibility forms (`ｆｓ.ｄｅｌｅｔｅ`) would look like a name a rule
 * lists without being equal to it, and invisible or control characters hide what the name says:
 * both are refused rather than guessed at, so a rule never has to compare two spellings.
 */
export function toolNameProblem(name: string): string | undefined {
  // Printable ASCII is its own NFKC form and has nothing invisible.
  if (/^[\x20-\x7e]*$/.test(name)) return undefined;
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(name)) return 'contains control or invisible characters';
  const folded = name.normalize('NFKC').toLowerCase();
  if (folded !== name) return `is not in canonical form (NFKC, lowercase: ${JSON.stringify(folded)})`;
  return undefined;
}
