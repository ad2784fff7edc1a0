import { basename, relative, resolve as resolvePath } from 'node:path';
import { rememberApprovalSigner, wardCommand, type ApprovalSigner } from '../decision/approval-command.js';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError, isWardError } from '../errors.js';
import { describeStateDir, expandHome, rememberStateDir, resolveStateDir, type StateDirResolution } from '../state/state-dir.js';

/** What a command needs from its process, injectable so commands can run in-process in tests. */
export interface CliContext {
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads all of standard input (for `-` arguments). */
  readStdin: () => Promise<string>;
  isTTY: boolean;
  /** Whether stderr is a terminal (progress is shown there by default; src/cli/progress.ts). */
  stderrIsTTY?: boolean;
  /** Set by a command to choose the process exit code. */
  exitCode: ExitCode;
  /** The state directory the command resolved (set by `stateDir`), named in errors about state. */
  state?: StateDirResolution;
}

/** The help text of every `--state-dir` option: how the directory is found when it is not given. */
export const STATE_DIR_HELP = 'Ward state directory (default: $WARD_STATE_DIR, the nearest .ward/ upwards, .ward/ beside --policy, ~/.local/state/ward)';

/**
 * Ward's state directory (src/state/state-dir.ts): `--state-dir`, else `WARD_STATE_DIR` (`~`
 * expanded; an empty value counts as unset), else the nearest existing `.ward/` upwards from the
 * working directory, else `.ward/` beside the command's `--policy` file, else the per-user
 * directory. Throws a usage error that says how to choose one when none is usable.
 */
export function stateDir(ctx: CliContext, flag?: string): string {
  return stateDirResolution(ctx, flag).dir;
}

export function stateDirResolution(ctx: CliContext, flag?: string): StateDirResolution {
  const r = resolveStateDir({ cwd: ctx.cwd, env: ctx.env, explicit: flag, policyPath: policyArg(ctx.argv) });
  ctx.state = r;
  rememberStateDir(r);
  rememberApprovalSigner(r.dir, approvalSignerOf(ctx, r.dir));
  return r;
}

/** The command line's `--policy` value (also `-policy`, `--policy=…`), before any `--`. */
export function policyArg(argv: readonly string[]): string | undefined {
  return flagArg(argv, 'policy');
}

/** A `--name value` / `-name value` / `--name=value` of the command line, before any `--`. */
export function flagArg(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (a === `--${name}` || a === `-${name}`) return argv[i + 1] || undefined;
    if (a.startsWith(`--${name}=`) || a.startsWith(`-${name}=`)) return a.slice(a.indexOf('=') + 1) || undefined;
  }
  return undefined;
}

/**
 * How an approval for this command's decisions must be signed, from its key flags: approvers'
 * own keys when approval verify keys are configured, else the command's explicit signing key,
 * else the state directory's key.
 */
function approvalSignerOf(ctx: CliContext, dir: string): ApprovalSigner {
  const has = (name: string) => flagArg(ctx.argv, name) !== undefined;
  if (['approval-public-key', 'approval-public-key-env', 'approval-jwks', 'approval-private-key', 'approval-private-key-env'].some(has)) {
    return { approverKey: true };
  }
  const key = flagArg(ctx.argv, 'private-key');
  if (key) return { privateKeyPath: resolvePath(ctx.cwd, key) };
  const env = flagArg(ctx.argv, 'private-key-env');
  if (env) return { privateKeyEnv: env };
  return { stateDir: dir };
}

/** How the user ran Ward, for the commands we suggest: through a bin link, as `wardCommand()` names it; from a checkout, `node <path to bin/ward.js>`. */
export function wardInvocation(ctx: CliContext): string {
  const script = ctx.argv[0] ?? 'ward';
  // Run through a bin link (`ward` on PATH, `npx ward`, node_modules/.bin/ward): name it the way
  // that works when pasted, which `ward` alone does not after npx.
  if (basename(script) === 'ward') return wardCommand();
  const rel = relative(ctx.cwd, script);
  return `node ${rel.startsWith('..') ? script : rel}`;
}

/** Errors about the state directory itself (creating, reading, locking what is in it). */
const STATE_ERROR_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.IO,
  ERROR_CODES.STATE_LOCK,
  ERROR_CODES.STATE_INVALID,
  ERROR_CODES.KEY_PERMISSIONS,
  ERROR_CODES.KEY_MISSING,
  ERROR_CODES.KEY_INVALID,
  ERROR_CODES.STORE_LOCKED,
  ERROR_CODES.STORE_INVALID,
]);

/**
 * An error that names a path in the resolved state directory gets one more line: which state
 * directory this is and why it was chosen, and how to choose another. Other errors pass through.
 */
export function withStateContext(err: unknown, state: StateDirResolution | undefined): unknown {
  if (!state || !(err instanceof Error) || !err.message.includes(state.dir)) return err;
  if (isWardError(err) ? !STATE_ERROR_CODES.has(err.code) || err.message.includes(describeStateDir(state)) : !(err as NodeJS.ErrnoException).code) {
    return err; // e.g. a failed verification of a trace in the state directory is not about the directory
  }
  const message = `${err.message}\nstate directory: ${describeStateDir(state)}`;
  const hint = 'choose another with --state-dir DIR or WARD_STATE_DIR=DIR, or create .ward/ in the project with: ward init';
  if (isWardError(err)) {
    return new WardError(err.code, message, {
      exitCode: err.exitCode,
      cause: err,
      hint: err.hint ? `${err.hint}; ${hint}` : hint,
      ...(err.details ? { details: err.details } : {}),
    });
  }
  return new WardError(ERROR_CODES.IO, message, { exitCode: EXIT.INTERNAL, cause: err, hint });
}

/**
 * A path given on the command line, absolute: `~` and `~/…` expanded (MCP clients start servers
 * without a shell, so `"--policy", "~/ward/policy.yaml"` arrives literally and would otherwise be
 * read as `<cwd>/~/ward/policy.yaml`), then resolved against the working directory.
 */
export function pathFlag(ctx: CliContext, value: string, flag: string): string {
  return resolvePath(ctx.cwd, expandHome(value, ctx.env, flag));
}
