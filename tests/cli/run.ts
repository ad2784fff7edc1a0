import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const WARD = join(REPO, 'bin', 'ward.js');
export const fixture = (p: string) => join(REPO, 'fixtures', p);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `ward` as a user would: a fresh process in `cwd`, with a clean WARD_STATE_DIR. */
export function ward(args: string[], opts: { cwd: string; input?: string; env?: Record<string, string> }): CliResult {
  const r = spawnSync(process.execPath, [WARD, ...args], {
    cwd: opts.cwd,
    input: opts.input ?? '',
    encoding: 'utf8',
    env: { ...process.env, WARD_STATE_DIR: '', ...opts.env },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function wardAsync(args: string[], opts: { cwd: string }): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WARD, ...args], { cwd: opts.cwd, env: { ...process.env, WARD_STATE_DIR: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/**
 * A fresh project directory: like one after `ward init`, it holds `.ward/`, so every `ward`
 * command run in it (or below it) keeps its state there. Use `bareDir()` for a directory without.
 */
export function tempDir(prefix = 'ward-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, '.ward'));
  return dir;
}

/** A fresh directory with no `.ward/`: Ward looks upwards, beside the policy, then per user. */
export function bareDir(prefix = 'ward-bare-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * The V7 test private key as a 0600 copy: git checks files out 0644, and Ward (rightly) refuses
 * private keys that others can read.
 */
export function v7PrivateKeyFile(): string {
  const path = join(tempDir('ward-key-'), 'v7_private.key');
  copyFileSync(fixture('keys/v7_TEST_ONLY_private.key'), path);
  chmodSync(path, 0o600);
  return path;
}

/** A policy that asks for one approval before `fs.write_file` and blocks everything else. */
export const APPROVAL_POLICY = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: approve-writes
    priority: 10
    effect: require_approval
    match:
      tool_names: [fs.write_file]
`;
