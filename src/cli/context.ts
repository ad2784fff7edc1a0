import { basename, relative, resolve } from 'node:path';
import type { ExitCode } from '../contract/exit-codes.js';

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
  /** Set by a command to choose the process exit code. */
  exitCode: ExitCode;
}

/**
 * Ward's state directory: `--state-dir`, else `WARD_STATE_DIR`, else `.ward` in the working
 * directory. An empty value counts as unset, so `WARD_STATE_DIR=` never means "the cwd itself".
 */
export function stateDir(ctx: CliContext, flag?: string): string {
  return resolve(ctx.cwd, flag || ctx.env['WARD_STATE_DIR'] || '.ward');
}

/** How the user ran Ward, for the commands we suggest: `ward` when on PATH, else `node <path to bin/ward.js>`. */
export function wardInvocation(ctx: CliContext): string {
  const script = ctx.argv[0] ?? 'ward';
  if (basename(script) === 'ward') return 'ward';
  const rel = relative(ctx.cwd, script);
  return `node ${rel.startsWith('..') ? script : rel}`;
}
