import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { REPO, WARD, tempDir } from '../cli/run.js';

export const POLICY = join(REPO, 'policies', 'baseline-highrisk.yaml');
export const intentFile = (name: 'read-report' | 'write-config' | 'delete-database') => join(REPO, 'examples', 'quickstart', `${name}.json`);
export const intent = (name: 'read-report' | 'write-config' | 'delete-database'): Record<string, unknown> =>
  JSON.parse(readFileSync(intentFile(name), 'utf8')) as Record<string, unknown>;

export interface DaemonChild {
  url: string;
  pid: number;
  proc: ChildProcess;
  /** stderr so far (JSON log lines). */
  stderr: () => string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** A working directory with a copy of the baseline policy at `<dir>/policy.yaml`. */
export function workdir(): { dir: string; policy: string; state: string } {
  const dir = tempDir('ward-daemon-');
  const policy = join(dir, 'policy.yaml');
  copyFileSync(POLICY, policy);
  return { dir, policy, state: join(dir, '.ward') };
}

/** Start `ward serve` as a child process on a free loopback port; resolves once it listens. */
export function startDaemon(args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<DaemonChild> {
  const proc = spawn(process.execPath, [WARD, 'serve', '--listen', '127.0.0.1:0', '--json', ...args], {
    cwd: opts.cwd,
    env: { ...process.env, WARD_STATE_DIR: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      const ready = JSON.parse(line) as { ok: boolean; url: string; pid: number };
      if (!ready.ok) return reject(new Error(`daemon failed: ${line}`));
      resolve({
        url: ready.url,
        pid: ready.pid,
        proc,
        stderr: () => stderr,
        exited,
        stop: (signal = 'SIGTERM') => {
          proc.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`daemon exited (${code}) before listening: ${stdout} ${stderr}`)));
  });
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export async function call(url: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; raw?: string | Buffer } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers };
  const body = init.raw ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined);
  const res = await request(url + path, { method: (init.method ?? (body !== undefined ? 'POST' : 'GET')) as 'GET', headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

export const evalBody = (name: 'read-report' | 'write-config' | 'delete-database', extra: Record<string, unknown> = {}) => ({ intent: intent(name), ...extra });
