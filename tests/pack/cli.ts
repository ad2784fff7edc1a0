import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/program.js';
import type { CliContext } from '../../src/cli/context.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DEMO_RECORD = join(REPO_ROOT, 'fixtures', 'runs', 'run_record_demo.json');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, any>;
}

/** Run the CLI in-process in `cwd` with its own state directory (`<cwd>/.ward`). */
export async function ward(args: string[], cwd: string): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const ctx: CliContext = {
    argv: ['ward', ...args],
    cwd,
    env: {},
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    readStdin: async () => '',
    isTTY: false,
    exitCode: 0,
  };
  const code = await runCli(args, ctx);
  let json: Record<string, any> = {};
  if (args.includes('--json')) json = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, any>;
  return { code, stdout, stderr, json };
}

/** A project directory holding `.ward/` (as after `ward init`), where the CLI keeps its state. */
export function workdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ward-cli-'));
  mkdirSync(join(dir, '.ward'));
  return dir;
}
