import { accessSync, constants, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Where Ward keeps its state (keys, traces, the token ledger, rate limits, the store): one
 * directory per project, found the way git finds `.git` (spec, Ward decision 1). In order:
 *
 * 1. `--state-dir` (or the SDK's `stateDir` option), then `WARD_STATE_DIR` — `~` expanded;
 * 2. an existing `.ward/` directory in the working directory or any directory above it;
 * 3. an existing `.ward/` beside the `--policy` file;
 * 4. the per-user directory: `$XDG_STATE_HOME/ward`, else `~/.local/state/ward`.
 *
 * Nothing here creates a directory: the first command that writes state does (`ward init` makes
 * `.ward/` in a project up front).
 */
export type StateDirSource = 'flag' | 'env' | 'found' | 'policy' | 'user';

export interface StateDirResolution {
  /** Absolute path. */
  dir: string;
  source: StateDirSource;
  /** Why this directory, for people: "found upwards from /repo/sub", "--state-dir", … */
  reason: string;
}

export interface ResolveStateDirOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** An explicit directory (`--state-dir`, the SDK's `stateDir`); empty counts as unset. */
  explicit?: string | undefined;
  /** How the explicit value is spelled for people (default `--state-dir`). */
  explicitName?: string;
  /** The policy file in use, if any (relative to `cwd`). */
  policyPath?: string | undefined;
}

/** The state directory's name inside a project. */
export const STATE_DIR_NAME = '.ward';

/** How to choose the directory explicitly, for error messages. */
export const STATE_DIR_HINT =
  'choose the state directory explicitly: --state-dir /absolute/path/.ward or WARD_STATE_DIR=/absolute/path/.ward ' +
  '(in an MCP client config, add "--state-dir", "/absolute/path/.ward" to the args), or create .ward/ in the project with: ward init';

export function resolveStateDir(opts: ResolveStateDirOptions): StateDirResolution {
  const name = opts.explicitName ?? '--state-dir';
  if (opts.explicit) {
    return explicitStateDir(resolve(opts.cwd, expandHome(opts.explicit, opts.env, name)), 'flag', name);
  }
  const fromEnv = opts.env['WARD_STATE_DIR'];
  if (fromEnv) {
    return explicitStateDir(resolve(opts.cwd, expandHome(fromEnv, opts.env, 'WARD_STATE_DIR')), 'env', 'WARD_STATE_DIR');
  }
  const cwd = resolve(opts.cwd);
  const found = findStateDirUpwards(cwd);
  if (found) return { dir: found, source: 'found', reason: `found upwards from ${cwd}` };
  if (opts.policyPath) {
    const beside = join(dirname(resolve(cwd, expandHome(opts.policyPath, opts.env, '--policy'))), STATE_DIR_NAME);
    if (isDirectory(beside)) return { dir: beside, source: 'policy', reason: `beside the policy ${resolve(cwd, opts.policyPath)}` };
  }
  return userStateDir(opts.env, cwd);
}

/**
 * A directory Ward was pointed at is created when missing (`--state-dir "$PROJECT/.ward"` in a
 * fresh project's hook or MCP configuration), but only one level: when its parent is missing too,
 * the path is wrong (a typo, an unexpanded variable, an unmounted volume), and creating it would
 * quietly start a new signing key and a new trace history there.
 */
function explicitStateDir(dir: string, source: 'flag' | 'env', name: string): StateDirResolution {
  const parent = dirname(dir);
  if (!isDirectory(dir) && !isDirectory(parent)) {
    throw new WardError(ERROR_CODES.STATE_INVALID, `${name} ${dir}: neither it nor its parent directory ${parent} exists`, {
      hint: `check the path; Ward creates the state directory itself only inside an existing directory (mkdir -p ${parent} if this is the place, or run \`ward init\` in the project)`,
    });
  }
  return { dir, source, reason: name };
}

/** The nearest existing `.ward/` directory at or above `start`. */
export function findStateDirUpwards(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    const candidate = join(dir, STATE_DIR_NAME);
    if (isDirectory(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The per-user state directory: `$XDG_STATE_HOME/ward` (an absolute XDG_STATE_HOME only, as the
 * XDG spec says), else `$HOME/.local/state/ward`. Refuses, with a fix, when HOME is empty or not
 * absolute, or when the directory could not be created (e.g. HOME=/ for an ordinary user).
 */
export function userStateDir(env: NodeJS.ProcessEnv, cwd: string): StateDirResolution {
  const none = `no ${STATE_DIR_NAME}/ found upwards from ${cwd}, and no --state-dir or WARD_STATE_DIR`;
  const xdg = env['XDG_STATE_HOME'];
  let dir: string;
  let reason: string;
  if (xdg && isAbsolute(xdg)) {
    dir = join(xdg, 'ward');
    reason = `per-user ($XDG_STATE_HOME/ward): ${none}`;
  } else {
    const home = env['HOME'];
    if (!home || !isAbsolute(home)) {
      throw new WardError(
        ERROR_CODES.STATE_INVALID,
        `no state directory: ${none}; the per-user directory ($XDG_STATE_HOME/ward or ~/.local/state/ward) needs HOME, which is ${home ? `not absolute (${JSON.stringify(home)})` : 'empty'}`,
        { hint: STATE_DIR_HINT },
      );
    }
    dir = join(home, '.local', 'state', 'ward');
    reason = `per-user (~/.local/state/ward): ${none}`;
  }
  if (!creatable(dir)) {
    throw new WardError(ERROR_CODES.STATE_INVALID, `no usable state directory: ${none}, and the per-user directory ${dir} cannot be created by this user`, {
      hint: STATE_DIR_HINT,
    });
  }
  return { dir, source: 'user', reason };
}

/**
 * `~` and `~/…` become the home directory (MCP client configs pass arguments without a shell, so
 * `"--state-dir", "~/.ward"` arrives literally). `~user` forms are refused rather than taken as
 * a directory named `~user`.
 */
export function expandHome(path: string, env: NodeJS.ProcessEnv, what = '--state-dir'): string {
  if (path !== '~' && !path.startsWith('~/') && !path.startsWith('~\\')) {
    if (path.startsWith('~')) {
      throw new WardError(ERROR_CODES.USAGE, `${what} ${path}: only ~ and ~/… are expanded (not ~user); give an absolute path`);
    }
    return path;
  }
  const home = env['HOME'];
  if (!home || !isAbsolute(home)) {
    throw new WardError(ERROR_CODES.STATE_INVALID, `${what} ${path}: cannot expand ~ because HOME is ${home ? `not absolute (${JSON.stringify(home)})` : 'empty'}`, {
      hint: `give ${what} an absolute path`,
    });
  }
  return path === '~' ? home : join(home, path.slice(2));
}

/** One line for doctor and error messages: `/x/.ward (found upwards from /x/sub)`. */
export function describeStateDir(r: StateDirResolution): string {
  return `${r.dir} (${r.reason})`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The directory exists and is writable, or its nearest existing ancestor is. */
function creatable(dir: string): boolean {
  let p = dir;
  for (;;) {
    try {
      const st = statSync(p);
      if (!st.isDirectory()) return false;
      accessSync(p, constants.W_OK | constants.X_OK);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    }
    const parent = dirname(p);
    if (parent === p) return false;
    p = parent;
  }
}

// ---------------------------------------------------------------------------------------------
// The state directories this process resolved, for hosts that print commands about them (the MCP
// proxy's approve command knows its approval directory, not the state directory that holds the key).

const resolvedHere: StateDirResolution[] = [];

/** Record a resolution made for this process (the CLI does, for each command it runs). */
export function rememberStateDir(r: StateDirResolution): void {
  const i = resolvedHere.findIndex((x) => x.dir === r.dir);
  if (i >= 0) resolvedHere.splice(i, 1);
  resolvedHere.push(r);
}

/**
 * The state directory whose key signs approvals dropped into `approvalDir`: the resolved state
 * directory whose `approvals/` it is, else the one this process resolved last, else the directory
 * that holds `approvalDir` (the default layout `<state>/approvals`).
 */
export function stateDirForApprovalDir(approvalDir: string): string {
  const target = resolve(approvalDir);
  const own = resolvedHere.find((r) => join(r.dir, 'approvals') === target);
  if (own) return own.dir;
  const last = resolvedHere[resolvedHere.length - 1];
  return last ? last.dir : dirname(target);
}
