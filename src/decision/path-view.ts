import { lstatSync, readdirSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, posix } from 'node:path';
import { goPathMatch, hasGlobMeta } from '../gate/glob.js';
import { resolvePathPattern } from '../gate/target-match.js';
import { canonicalPaths, canonicalTarget, spelledPath } from '../intent/canonical.js';
import { normalizeIntent } from '../intent/normalize.js';
import type { NormalizedIntent, PathView, ResolvedPath, Target } from '../intent/types.js';
import type { NormalizedPolicy } from '../policy/types.js';

/**
 * Paths as the kernel will resolve them, where the host sees the file system the tool uses (the
 * hook, the SDK, `gate eval`, the local MCP proxy): docs/canonical-targets.md "Links". The core
 * reads paths as text; this edge module adds, before evaluation, what the disk makes of each one:
 *
 * - symbolic links: the `realpath` of the longest existing prefix, with the rest appended (a
 *   dangling link on the way is refused: the kernel would follow it, even to create its target);
 * - hard links: a regular file with more than one link is looked for under the roots the policy
 *   denies (same device and inode), in a bounded walk; reaching the bound fails the path closed;
 * - denylist patterns whose directories are themselves links (`/var/run` → `/run`) on the real
 *   directories too.
 *
 * The result is the intent's `path_view`; the rules then require every name of a file to pass.
 * What is checked is the disk at decision time: a link made between the check and the tool's use
 * is not seen (time of check, time of use), which only confinement of the tool can close.
 */

/** Whether a host resolves paths on its file system or reads them as text (a daemon deciding for another machine). */
export type PathResolution = 'filesystem' | 'lexical';

/** Entries the hard-link search may look at per decision before it gives up (and fails the path closed). */
export const HARD_LINK_SEARCH_BOUND = 20_000;

export interface PathViewOptions {
  /** Entries the hard-link search may look at (default HARD_LINK_SEARCH_BOUND). */
  searchBound?: number;
}

/** The file-system view of every path the readings of a call name; undefined when none names a path (or none normalizes). */
export function pathViewOf(readings: readonly unknown[], policy: NormalizedPolicy, options: PathViewOptions = {}): PathView | undefined {
  const intents: NormalizedIntent[] = [];
  for (const raw of readings) {
    try {
      intents.push(normalizeIntent(raw));
    } catch {
      // evaluation reports (or fails closed on) an intent that does not normalize
    }
  }
  return pathViewOfNormalized(intents, policy, options);
}

/** `pathViewOf` for readings already normalized (evaluation.ts normalizes each reading once per decision). */
export function pathViewOfNormalized(intents: readonly NormalizedIntent[], policy: NormalizedPolicy, options: PathViewOptions = {}): PathView | undefined {
  // spelled path → its lexical readings, per workspace (the denied roots depend on it)
  const byWorkspace = new Map<string, Map<string, readonly string[]>>();
  for (const intent of intents) {
    const workspace = intent.context.workspace;
    for (const t of allTargets(intent)) {
      const readings = canonicalPaths(canonicalTarget(t, workspace));
      if (readings.length === 0 || !readings[0]!.startsWith('/')) continue; // refused, or a Windows drive: not this file system
      const spelled = spelledPath(t.value, workspace);
      if (!spelled.ok) continue;
      let paths = byWorkspace.get(workspace);
      if (!paths) byWorkspace.set(workspace, (paths = new Map()));
      paths.set(spelled.value, readings);
    }
  }
  if (byWorkspace.size === 0) return undefined;
  const paths = new Map<string, ResolvedPath>();
  const deniedPatterns = new Map<string, string>();
  const bound = options.searchBound ?? HARD_LINK_SEARCH_BOUND;
  const budget: Budget = { left: bound, bound };
  for (const [workspace, spelledPaths] of byWorkspace) {
    const roots = deniedRoots(policy, workspace);
    for (const [pattern, real] of roots) if (real !== pattern) deniedPatterns.set(pattern, real);
    const searchRoots = [...new Set([...roots.keys(), ...roots.values()])];
    for (const [spelled, readings] of spelledPaths) {
      if (!paths.has(spelled)) paths.set(spelled, resolvePath(spelled, readings, searchRoots, budget));
    }
  }
  return { paths, deniedPatterns };
}

function allTargets(intent: NormalizedIntent): Target[] {
  return [...intent.targets, ...(intent.script?.steps.flatMap((s) => s.targets) ?? [])];
}

/**
 * The denied roots of a policy under one workspace, kept as long as the policy (a long-running host
 * decides many calls under one policy): the directories a policy names are not the agent's to move,
 * and a pattern is the boundary whatever the disk holds, so resolving them once is enough.
 */
const rootsCache = new WeakMap<NormalizedPolicy, Map<string, Map<string, string>>>();

/** Every path pattern the policy denies (denylists and listed target values), each with its literal directories resolved. */
function deniedRoots(policy: NormalizedPolicy, workspace: string): Map<string, string> {
  let byWorkspace = rootsCache.get(policy);
  if (!byWorkspace) rootsCache.set(policy, (byWorkspace = new Map()));
  let roots = byWorkspace.get(workspace);
  if (!roots) {
    if (byWorkspace.size >= 64) byWorkspace.clear(); // a daemon-like caller with many workspaces: bounded
    byWorkspace.set(workspace, (roots = computeDeniedRoots(policy, workspace)));
  }
  return roots;
}

function computeDeniedRoots(policy: NormalizedPolicy, workspace: string): Map<string, string> {
  const roots = new Map<string, string>();
  const add = (value: string) => {
    const pattern = resolvePathPattern(value, workspace);
    if (pattern.startsWith('/') && !roots.has(pattern)) roots.set(pattern, realPattern(pattern));
  };
  for (const rule of policy.rules) {
    for (const p of rule.endpoint.path_denylist) add(p);
    if (rule.effect !== 'allow') for (const v of [...rule.match.target_values, ...rule.match.destination_values]) add(v);
  }
  return roots;
}

/** A pattern with its literal leading directories replaced by their real path (globs kept). */
function realPattern(pattern: string): string {
  const segments = pattern.split('/');
  const firstGlob = segments.findIndex((s) => hasGlobMeta(s));
  const literal = firstGlob < 0 ? pattern : segments.slice(0, firstGlob).join('/') || '/';
  const real = realPrefix(literal);
  if (!('real' in real) || real.real === literal) return pattern;
  return firstGlob < 0 ? real.real : `${real.real === '/' ? '' : real.real}/${segments.slice(firstGlob).join('/')}`;
}

/**
 * Every name the file is reached by: the real path from the spelled path (a tool that hands it to
 * the kernel as is) and from its lexical readings (a tool that cleans `..` as text first, as
 * Node's `path.resolve` does), and its hard links under the denied roots.
 */
function resolvePath(spelled: string, readings: readonly string[], roots: readonly string[], budget: Budget): ResolvedPath {
  const names: string[] = [];
  for (const p of new Set([...readings, spelled])) {
    const real = realPrefix(p);
    if ('problem' in real) return real;
    if (!names.includes(real.real)) names.push(real.real);
  }
  for (const real of [...names]) {
    let stat: Stats;
    try {
      stat = lstatSync(real);
    } catch {
      continue; // not there (yet): nothing else names it
    }
    if (!stat.isFile() || stat.nlink < 2) continue;
    const found: string[] = [];
    for (const root of roots) {
      if (findLinks(root, stat, budget, found) === 'bound') {
        return { problem: `hard-linked file (${stat.nlink} links): the search of the denied roots passed its bound of ${budget.bound} entries` };
      }
    }
    for (const link of found) if (!names.includes(link)) names.push(link);
  }
  return { names };
}

/**
 * `realpath` of the longest existing prefix, the rest appended: what the kernel reaches, as far as
 * it exists. A missing component that is a dangling symbolic link is refused.
 */
function realPrefix(path: string): { real: string } | { problem: string } {
  const rest: string[] = [];
  let head = path;
  for (;;) {
    try {
      const real = realpathSync.native(head);
      // What follows does not exist: no link is left to follow, and the rest is cleaned as text.
      return { real: rest.length === 0 ? real : posix.normalize(`${real}/${rest.reverse().join('/')}`).replace(/(.)\/$/, '$1') };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { problem: `path cannot be resolved on the file system (${code ?? 'error'})` };
      if (isSymbolicLink(head)) return { problem: `path goes through a dangling symbolic link (${head})` };
      if (head === '/') return { problem: 'path cannot be resolved on the file system (no root)' };
      rest.push(basename(head));
      head = dirname(head);
    }
  }
}

function isSymbolicLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

interface Budget {
  left: number;
  readonly bound: number;
}

/**
 * The paths under `pattern` (and under what it matches: a denylist denies contents too) that are
 * the file `target` (same device and inode). Directories are listed only where the pattern can
 * still match, links are not followed, and other devices are skipped (a hard link cannot cross one).
 */
function findLinks(pattern: string, target: Stats, budget: Budget, found: string[]): 'bound' | undefined {
  const segments = pattern.split('/').filter((s) => s !== '');
  const visit = (dir: string, i: number): 'bound' | undefined => {
    if (i === segments.length) return everythingUnder(dir);
    const segment = segments[i]!;
    if (segment === '**') return everythingUnder(dir);
    const names = hasGlobMeta(segment) ? listMatching(dir, segment) : [segment];
    if (names === 'bound') return 'bound';
    for (const name of names) {
      const child = `${dir === '/' ? '' : dir}/${name}`;
      const s = entry(child);
      if (s === 'bound') return 'bound';
      if (!s || s.dev !== target.dev) continue;
      if (s.isFile()) {
        if (i === segments.length - 1 && s.ino === target.ino) found.push(child);
      } else if (s.isDirectory()) {
        if (visit(child, i + 1) === 'bound') return 'bound';
      }
    }
    return undefined;
  };
  const everythingUnder = (path: string): 'bound' | undefined => {
    const s = entry(path);
    if (s === 'bound') return 'bound';
    if (!s || s.dev !== target.dev) return undefined;
    if (s.isFile()) {
      if (s.ino === target.ino) found.push(path);
      return undefined;
    }
    if (!s.isDirectory()) return undefined;
    const names = listMatching(path, undefined);
    if (names === 'bound') return 'bound';
    for (const name of names) if (everythingUnder(`${path === '/' ? '' : path}/${name}`) === 'bound') return 'bound';
    return undefined;
  };
  const entry = (path: string): Stats | undefined | 'bound' => {
    if (--budget.left < 0) return 'bound';
    try {
      return lstatSync(path);
    } catch {
      return undefined;
    }
  };
  const listMatching = (dir: string, glob: string | undefined): string[] | 'bound' => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    budget.left -= names.length;
    if (budget.left < 0) return 'bound';
    return glob === undefined ? names : names.filter((n) => goPathMatch(glob, n));
  };
  return visit('/', 0);
}
