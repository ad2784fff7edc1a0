import { compareUtf8, goLower, goTrim, oneOfHint, type JsonObject } from '../canon/index.js';
import type { Target } from './types.js';
import { readBool, readString } from './fields.js';
import { invalidIntent } from './invalid.js';
import { goUrlHostname } from './url.js';
import { canonicalHostTarget, canonicalHostname, canonicalUrl } from './canonical.js';
import { DISCOVERY_METHODS, ENDPOINT_CLASSES, TARGET_KINDS } from '../contract/vocabulary.js';

const READ_OPS = new Set(['read', 'get', 'list', 'open', 'cat', 'head', 'download', 'stat']);
const WRITE_OPS = new Set(['write', 'append', 'put', 'create', 'update', 'save', 'copy', 'move', 'rename']);
const DELETE_OPS = new Set(['delete', 'remove', 'rm', 'unlink', 'rmdir', 'drop', 'truncate']);
const DNS_OPS = new Set(['dns', 'resolve', 'lookup']);
const EXEC_OPS = new Set(['exec', 'spawn', 'run', 'shell', 'command']);
const DESTRUCTIVE_OPS = new Set(['delete', 'remove', 'rm', 'unlink', 'rmdir', 'drop', 'truncate', 'exec', 'spawn']);

/** Normalize one target (`gate.md` §1.2 target table, §1.4 inference). `toolName` is normalized. */
export function normalizeTarget(raw: JsonObject, toolName: string, path: string): Target {
  const kind = goLower(goTrim(readString(raw, 'kind', path)));
  const value = goTrim(readString(raw, 'value', path));
  const operation = goLower(goTrim(readString(raw, 'operation', path)));
  const sensitivity = goLower(goTrim(readString(raw, 'sensitivity', path)));
  let endpointClass = goLower(goTrim(readString(raw, 'endpoint_class', path)));
  let endpointDomain = goLower(goTrim(readString(raw, 'endpoint_domain', path)));
  let discovery = goLower(goTrim(readString(raw, 'discovery_method', path))).replace(/[- ]/g, '_');
  const destructive = readBool(raw, 'destructive', path);
  const readOnlyHint = readBool(raw, 'read_only_hint', path);
  const destructiveHint = readBool(raw, 'destructive_hint', path);
  const idempotentHint = readBool(raw, 'idempotent_hint', path);
  const openWorldHint = readBool(raw, 'open_world_hint', path);

  if (kind === '' || value === '') throw invalidIntent('targets require kind and value');
  if (!TARGET_KINDS.has(kind)) throw invalidIntent(`unsupported target kind: ${kind}`, oneOfHint(kind, TARGET_KINDS));
  // A C-based tool stops at the NUL, a Node one refuses it: either way the string is not what runs.
  if (value.includes('\0')) throw invalidIntent(`${path}value contains a NUL byte`);
  if (endpointClass === '') endpointClass = inferEndpointClass(kind, operation, toolName);
  else if (!ENDPOINT_CLASSES.has(endpointClass)) throw invalidIntent(`unsupported endpoint class: ${endpointClass}`, oneOfHint(endpointClass, ENDPOINT_CLASSES));
  else assertClassAgrees(kind, operation, endpointClass, path);
  if (endpointDomain === '') endpointDomain = inferEndpointDomain(kind, value);
  else assertDomainAgrees(kind, value, endpointDomain, path);
  if (discovery === '') discovery = 'unknown';
  if (!DISCOVERY_METHODS.has(discovery)) throw invalidIntent(`unsupported discovery method: ${discovery}`);

  return {
    kind,
    value,
    operation,
    sensitivity,
    endpoint_class: endpointClass,
    endpoint_domain: endpointDomain,
    destructive:
      destructive ||
      destructiveHint ||
      endpointClass === 'fs.delete' ||
      endpointClass === 'proc.exec' ||
      DESTRUCTIVE_OPS.has(operation),
    discovery_method: discovery,
    read_only_hint: readOnlyHint,
    destructive_hint: destructiveHint,
    idempotent_hint: idempotentHint,
    open_world_hint: openWorldHint,
  };
}

/**
 * An explicit `endpoint_class` is a claim; it is refused when the target itself says otherwise: an
 * operation that names a file class (`operation: delete` with `endpoint_class: fs.read`), or a
 * network target (`url`, `host`) given a non-network class. Otherwise the claim could lift a
 * target out of the rules written for what it really does.
 */
function assertClassAgrees(kind: string, operation: string, claimed: string, path: string): void {
  let implied = '';
  if (kind === 'path') {
    if (READ_OPS.has(operation)) implied = 'fs.read';
    else if (WRITE_OPS.has(operation)) implied = 'fs.write';
    else if (DELETE_OPS.has(operation)) implied = 'fs.delete';
  } else if ((kind === 'url' || kind === 'host') && !claimed.startsWith('net.')) {
    implied = DNS_OPS.has(operation) ? 'net.dns' : 'net.http';
  }
  if (implied !== '' && implied !== claimed) {
    throw invalidIntent(`${path}endpoint_class ${claimed} contradicts the target (kind ${kind}${operation ? `, operation ${operation}` : ''} means ${implied})`);
  }
}

/**
 * An explicit `endpoint_domain` on a `url` or `host` target must name the host the value reaches
 * (both compared in canonical form); otherwise domain lists would judge one host while the tool
 * connects to another. A value whose host cannot be determined is left to the lists, which fail
 * closed on it.
 */
function assertDomainAgrees(kind: string, value: string, claimed: string, path: string): void {
  if (kind !== 'url' && kind !== 'host') return;
  let actualHost: string;
  if (kind === 'url') {
    const url = canonicalUrl(value);
    if (!url.ok) return;
    actualHost = url.value.host;
  } else {
    const host = canonicalHostTarget(value);
    if (!host.ok) return;
    actualHost = host.value;
  }
  const claim = canonicalHostname(claimed);
  if (!claim.ok || claim.value !== actualHost) {
    throw invalidIntent(`${path}endpoint_domain ${claimed} contradicts the target, which reaches ${actualHost === '' ? 'no host' : actualHost}`);
  }
}

export function inferEndpointClass(kind: string, operation: string, toolName: string): string {
  switch (kind) {
    case 'path': {
      if (READ_OPS.has(operation)) return 'fs.read';
      if (WRITE_OPS.has(operation)) return 'fs.write';
      if (DELETE_OPS.has(operation)) return 'fs.delete';
      const hint = goPathBase(toolName);
      if (/read|list|fetch|search/.test(hint)) return 'fs.read';
      if (/write|update|save|create/.test(hint)) return 'fs.write';
      if (/delete|remove|rm|drop/.test(hint)) return 'fs.delete';
      return 'other';
    }
    case 'host':
    case 'url':
      return DNS_OPS.has(operation) ? 'net.dns' : 'net.http';
    case 'other':
      if (EXEC_OPS.has(operation)) return 'proc.exec';
      return /exec|shell|command|spawn|run/.test(goPathBase(toolName)) ? 'proc.exec' : 'other';
    default:
      return 'other';
  }
}

export function inferEndpointDomain(kind: string, value: string): string {
  if (kind === 'host') {
    let host = goLower(value);
    if (host.startsWith('http://')) host = host.slice(7);
    else if (host.startsWith('https://')) host = host.slice(8);
    const slash = host.indexOf('/');
    if (slash >= 0) host = host.slice(0, slash);
    const colon = host.indexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
    return host;
  }
  if (kind === 'url') return goLower(goUrlHostname(value));
  return '';
}

/** Go `path.Base`. */
export function goPathBase(p: string): string {
  if (p === '') return '.';
  let end = p.length;
  while (end > 0 && p[end - 1] === '/') end--;
  if (end === 0) return '/';
  const trimmed = p.slice(0, end);
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** Dedupe on all 12 fields and sort in the reference's field order (`gate.md` §1.3 step 4). */
export function dedupeSortTargets(targets: Target[]): Target[] {
  if (targets.length < 2) return targets;
  const seen = new Map<string, Target>();
  for (const t of targets) seen.set(targetKey(t), t);
  return [...seen.values()].sort(compareTargets);
}

function targetKey(t: Target): string {
  return JSON.stringify([
    t.kind,
    t.value,
    t.operation,
    t.sensitivity,
    t.endpoint_class,
    t.endpoint_domain,
    t.destructive,
    t.discovery_method,
    t.read_only_hint,
    t.destructive_hint,
    t.idempotent_hint,
    t.open_world_hint,
  ]);
}

function compareTargets(a: Target, b: Target): number {
  return (
    compareUtf8(a.kind, b.kind) ||
    compareUtf8(a.value, b.value) ||
    compareUtf8(a.operation, b.operation) ||
    compareUtf8(a.sensitivity, b.sensitivity) ||
    compareUtf8(a.endpoint_class, b.endpoint_class) ||
    compareUtf8(a.endpoint_domain, b.endpoint_domain) ||
    compareBool(a.destructive, b.destructive) ||
    compareUtf8(a.discovery_method, b.discovery_method) ||
    compareBool(a.read_only_hint, b.read_only_hint) ||
    compareBool(a.destructive_hint, b.destructive_hint) ||
    compareBool(a.idempotent_hint, b.idempotent_hint) ||
    compareBool(a.open_world_hint, b.open_world_hint)
  );
}

function compareBool(a: boolean, b: boolean): number {
  return a === b ? 0 : a ? 1 : -1;
}
