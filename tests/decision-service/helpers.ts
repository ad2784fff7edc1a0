import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliContext } from '../../src/cli/context.js';
import { EXIT, type ExitCode } from '../../src/contract/exit-codes.js';
import { describeFailure } from '../../src/cli/output.js';
import { runMcpCall, type McpCallFlags } from '../../src/cli/commands/mcp-call.js';
import { fixture, tempDir } from '../cli/run.js';

export const compat = (name: string) => fixture(join('mcp-compat', name));
export const POLICY = compat('policy.yaml');

export interface InProcess {
  ctx: CliContext;
  out: () => string;
  err: () => string;
}

export function inProcess(cwd: string, opts: { stdin?: string; env?: Record<string, string> } = {}): InProcess {
  let out = '';
  let err = '';
  const ctx: CliContext = {
    argv: ['ward', 'mcp', 'proxy'],
    cwd,
    env: { ...process.env, WARD_STATE_DIR: '', ...opts.env },
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    readStdin: async () => opts.stdin ?? '',
    isTTY: false,
    exitCode: EXIT.OK,
  };
  return { ctx, out: () => out, err: () => err };
}

export interface CallRun {
  code: ExitCode;
  json: Record<string, unknown>;
  stdout: string;
  cwd: string;
}

/** Run `mcp proxy --call` in-process with `--json`; failures come back as the CLI would print them. */
export async function callJson(flags: Partial<McpCallFlags>, opts: { cwd?: string; stdin?: string; env?: Record<string, string> } = {}): Promise<CallRun> {
  const cwd = opts.cwd ?? tempDir('ward-mcp-compat-');
  const p = inProcess(cwd, opts);
  try {
    await runMcpCall(p.ctx, { policy: POLICY, json: true, ...flags });
    return { code: p.ctx.exitCode, json: JSON.parse(p.out()) as Record<string, unknown>, stdout: p.out(), cwd };
  } catch (err) {
    const failure = describeFailure(err);
    return { code: failure.exitCode, json: failure.json, stdout: '', cwd };
  }
}

export function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}
