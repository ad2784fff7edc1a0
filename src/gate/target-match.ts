import {
  canonicalHostTarget,
  canonicalPath,
  canonicalPaths,
  isAbsolutePath,
  canonicalTarget,
  canonicalUrl,
} from '../intent/canonical.js';
import type { PathView, Target } from '../intent/types.js';
import { hostListNamesClassOrRange } from './host-list.js';

/**
 * How rules compare what they name with what a target will touch (docs/canonical-targets.md). A
 * value the policy lists matches a target when the strings are equal (the reference's test) or
 * when both reduce to the same canonical thing, the policy value read as the same kind of target
 * under the same workspace. So `target_values: [/etc/shadow]` catches `../../etc/shadow`, and no
 * spelling of a target can match fewer rules than its plain form. A path target also matches
 * through the other names the file system gives its file (`view`: symbolic links, hard links).
 */
export function targetValueIn(list: readonly string[], target: Target, workspace: string, view?: PathView): boolean {
  if (list.includes(target.value)) return true;
  const c = canonicalTarget(target, workspace, view);
  if (c.value !== undefined) {
    const listed = canonicalValues(list, target.kind, workspace);
    if (listed.has(c.value)) return true;
    if (c.aliases.length > 0) {
      const paths = target.kind === 'path' ? listed : canonicalValues(list, 'path', workspace);
      if (canonicalPaths(c).some((p) => paths.has(p))) return true;
    }
  }
  // `class:metadata`, `10.0.0.0/8`: the host the target reaches, by its text (names are not resolved here).
  return c.host !== undefined && c.host !== '' && hostListNamesClassOrRange(list, c.host);
}

/**
 * The canonical forms of a policy list, per target kind (and workspace, for paths). Policy lists
 * live as long as their policy, so each is canonicalized once per kind and workspace, however many
 * rules the policy has.
 */
const canonicalLists = new WeakMap<readonly string[], Map<string, ReadonlySet<string>>>();

function canonicalValues(list: readonly string[], kind: string, workspace: string): ReadonlySet<string> {
  let byKind = canonicalLists.get(list);
  if (!byKind) canonicalLists.set(list, (byKind = new Map()));
  const key = kind === 'path' ? `path\0${workspace}` : kind;
  let set = byKind.get(key);
  if (!set) {
    set = new Set(list.map((v) => canonicalValueOf(kind, v, workspace)).filter((v): v is string => v !== undefined));
    // A daemon sees many workspaces: keep the per-list memory bounded.
    if (byKind.size >= 64) byKind.clear();
    byKind.set(key, set);
  }
  return set;
}

function canonicalValueOf(kind: string, value: string, workspace: string): string | undefined {
  if (kind === 'path') {
    const p = canonicalPath(value, workspace);
    return p.ok ? p.value : undefined;
  }
  if (kind === 'url') {
    const u = canonicalUrl(value);
    return u.ok ? u.value.href : undefined;
  }
  if (kind === 'host') {
    const h = canonicalHostTarget(value);
    return h.ok ? h.value : undefined;
  }
  return value;
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
