import type { CliContext } from './context.js';

/**
 * Progress of a command that can take long (a store export of millions of entries, a large pack, a
 * regression suite), on stderr so stdout keeps its output for scripts. The first line is written
 * at once, so a person sees within a second that the command is working; counts follow at most
 * once a second.
 *
 * Shown when asked for (`--progress`, also with `--json`: stderr is not the JSON), or when stderr
 * is a terminal and the output is text. A pipe or a log file without `--progress` stays quiet, as
 * does `--json` without it.
 */
export interface Progress {
  /** A stage begins: one line at once. */
  stage(text: string): void;
  /** `done` of `total` units are finished: a line when a second has passed since the last one, and at the end. */
  count(done: number, total: number, unit: string): void;
  /** The command is finished: ends a rewritten terminal line. */
  end(): void;
}

export interface ProgressFlags {
  progress?: boolean;
  json?: boolean;
}

/** The help text of every `--progress` option. */
export const PROGRESS_HELP = 'progress lines on stderr (default: when stderr is a terminal and --json is not given)';

const INTERVAL_MS = 1_000;

/** No progress at all (a command run by a script). */
export const QUIET_PROGRESS: Progress = { stage: () => {}, count: () => {}, end: () => {} };

export function progressOf(ctx: CliContext, flags: ProgressFlags, command: string, now: () => number = Date.now): Progress {
  const terminal = ctx.stderrIsTTY === true;
  if (!flags.progress && (!terminal || flags.json)) return QUIET_PROGRESS;
  // On a terminal each line replaces the one before; elsewhere (a file, a CI log) lines accumulate.
  let open = false;
  const write = (text: string, final: boolean) => {
    if (terminal) {
      ctx.stderr(`\r\x1b[K${command}: ${text}${final ? '\n' : ''}`);
      open = !final;
    } else {
      ctx.stderr(`${command}: ${text}\n`);
    }
  };
  let last = -Infinity;
  return {
    stage(text) {
      write(text, false);
      last = now();
    },
    count(done, total, unit) {
      const finished = done >= total;
      if (!finished && now() - last < INTERVAL_MS) return;
      last = now();
      const percent = total > 0 ? ` (${Math.floor((done * 100) / total)}%)` : '';
      write(`${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit}${percent}`, false);
    },
    end() {
      if (open) ctx.stderr('\n');
      open = false;
    },
  };
}
