import {
  canonicalHostTarget,
  canonicalHostname,
  canonicalPath,
  isAbsolutePath,
  canonicalTarget,
  canonicalUrl,
} from '../intent/canonical.js';
import type { Target } from '../intent/types.js';

/**
 * How rules compare what they name with what a target will touch (docs/canonical-targets.md). A
 * value the policy lists matches a target when the strings are equal (the reference's test) or
 * when both reduce to the same canonical thing, the policy value read as the same kind of target
 * under the same workspace. So `target_values: [/etc/shadow]` catches `../../etc/shadow`, and no
 * spelling of a target can match fewer rules than its plain form.
 */
export function targetValueIn(list: readonly string[], target: Target, workspace: string): boolean {
  if (list.includes(target.value)) return true;
  const canonical = canonicalTarget(target, workspace).value;
  if (canonical === undefined) return false;
  for (const v of list) if (canonicalValueOf(target.kind, v, workspace) === canonical) return true;
  return false;
}

const policyValues = new Map<string, string | undefined>();

function canonicalValueOf(kind: string, value: string, workspace: string): string | undefined {
  const key = `${kind}\0${kind === 'path' ? workspace : ''}\0${value}`;
  if (policyValues.has(key)) return policyValues.get(key);
  let canonical: string | undefined;
  if (kind === 'path') {
    const p = canonicalPath(value, workspace);
    canonical = p.ok ? p.value : undefined;
  } else if (kind === 'url') {
    const u = canonicalUrl(value);
    canonical = u.ok ? u.value.href : undefined;
  } else if (kind === 'host') {
    const h = canonicalHostTarget(value);
    canonical = h.ok ? h.value : undefined;
  } else {
    canonical = value;
  }
  if (policyValues.size > 4096) policyValues.clear();
  policyValues.set(key, canonical);
  return canonical;
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

const resolvedPatterns = new Map<string, string>();

/**
 * A relative path pattern or prefix (`secrets/**`) names paths in the workspace, as a relative target does:
 * both are joined to it, so they keep matching each other now that targets are compared as
 * absolute paths. Absolute patterns, and any pattern when the workspace is not absolute, are used
 * as written.
 */
export function resolvePathPattern(pattern: string, workspace: string): string {
  if (isAbsolutePath(pattern) || pattern.startsWith('~') || !isAbsolutePath(workspace)) return pattern;
  const key = `${workspace}\0${pattern}`;
  let resolved = resolvedPatterns.get(key);
  if (resolved === undefined) {
    const joined = canonicalPath(pattern, workspace);
    resolved = joined.ok ? joined.value : pattern;
    if (resolvedPatterns.size > 4096) resolvedPatterns.clear();
    resolvedPatterns.set(key, resolved);
  }
  return resolved;
}
