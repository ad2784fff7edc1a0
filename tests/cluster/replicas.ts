/**
 * Real `ward serve` replicas on one PostgreSQL, for cluster tests (issue 18). Each replica is a
 * child process (`node bin/ward.js serve --listen 127.0.0.1:0 --json`) with its own state
 * directory (its daemon lock, logs and — unless a shared key is asked for — its own signing key in
 * `<state>/keys`), pointed at the database through `WARD_STORE_URL` (argv refuses passwords).
 * Run `npm run build` first: the replicas run `bin/ward.js` (dist/).
 *
 *   import { startPostgres } from '../support/postgres.js';
 *   import { startReplicas, stopReplicas, call, evalBody } from './replicas.js';
 *
 *   const server = await startPostgres();
 *   const url = await server.createDatabase();
 *   const [a, b] = await startReplicas(2, { storeUrl: url });   // started together: they migrate once
 *   const r = await call(a.url, '/v1/gate/eval', { body: evalBody('read-report') });
 *   await b.stop();          // SIGTERM, graceful; resolves with the exit code
 *   await a.kill();          // SIGKILL (kill -9)
 *   await stopReplicas([a, b]);   // in afterEach/afterAll: stops whatever still runs
 *
 * API (everything else in this file is private):
 * - `startReplica(options)` → `Replica`; `startReplicas(n, options)` starts n at once.
 *   Options: `storeUrl` (required), `policy` (a policy file; default the baseline policy, copied
 *   per replica), `sharedKey` (a private key file every replica of the call signs with; `true`: one
 *   is generated), `args` (extra `ward serve` flags, e.g. `['--store-pool', '1']`), `env`, `name`
 *   (the `--replica` name; default `replica-<i>`), `stateDir` (an existing state directory).
 * - `Replica`: `url`, `pid`, `name`, `keyId`, `stateDir`, `policy` (its policy file), `start` (the
 *   parsed JSON start line), `stderr()` (its JSON log so far), `exited` (exit code or signal),
 *   `stop(signal = 'SIGTERM')`, `kill()` (SIGKILL), `running`.
 * - `stopReplicas(list)`: SIGTERM each running replica, SIGKILL after 5 s.
 * - `clusterFixture()`: call at the top of a test file: one PostgreSQL for the file (`server`,
 *   started before the first test, destroyed after the last) and `replicas`, the replicas a test
 *   assigns there, stopped after each test.
 * - Re-exported from tests/daemon/helpers.ts: `call(url, path, init)` and `evalBody(name)`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { REPO, WARD, tempDir } from '../cli/run.js';

export { call, evalBody, intent, type Reply } from '../daemon/helpers.js';

export const BASELINE_POLICY = join(REPO, 'policies', 'baseline-highrisk.yaml');

export interface ReplicaOptions {
  storeUrl: string;
  policy?: string;
  /** A private key file (or `true`: generate one) that every replica started with these options signs with. */
  sharedKey?: string | boolean;
  args?: readonly string[];
  env?: Record<string, string>;
  name?: string;
  /** An existing state directory (e.g. with a rotated key ring); default a new one. */
  stateDir?: string;
}

export interface StartLine {
  ok: boolean;
  url: string;
  pid: number;
  state_dir: string;
  store?: string;
  replica?: string;
  key_id?: string;
  policy_digest: string;
  [key: string]: unknown;
}

export interface Replica {
  readonly url: string;
  readonly pid: number;
  readonly name: string;
  readonly keyId: string;
  readonly stateDir: string;
  readonly policy: string;
  readonly start: StartLine;
  readonly proc: ChildProcess;
  stderr(): string;
  readonly exited: Promise<number | string>;
  readonly running: boolean;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  kill(): Promise<number | string>;
}

let counter = 0;

/** A fresh Ed25519 private key file (PKCS#8 PEM, owner-only). */
export function writeSharedKey(dir = tempDir('ward-key-')): string {
  const file = join(dir, 'shared.key');
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return file;
}

export async function startReplicas(n: number, options: ReplicaOptions): Promise<Replica[]> {
  const sharedKey = options.sharedKey === true ? writeSharedKey() : options.sharedKey;
  const started = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => startReplica({ ...options, ...(sharedKey ? { sharedKey } : {}), name: options.name ? `${options.name}-${i}` : `replica-${counter++}` })),
  );
  const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stopReplicas(ok);
    throw failed.reason;
  }
  return ok;
}

export function startReplica(options: ReplicaOptions): Promise<Replica> {
  const dir = tempDir('ward-replica-');
  const stateDir = options.stateDir ?? join(dir, '.ward');
  const policy = join(dir, 'policy.yaml');
  copyFileSync(options.policy ?? BASELINE_POLICY, policy);
  const name = options.name ?? `replica-${counter++}`;
  const keyFile = options.sharedKey === true ? writeSharedKey(dir) : options.sharedKey || undefined;
  const args = [
    WARD, 'serve', '--listen', '127.0.0.1:0', '--json',
    '--policy', policy, '--state-dir', stateDir, '--replica', name,
    ...(keyFile ? ['--key-mode', 'prod', '--private-key', keyFile] : []),
    ...(options.args ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: dir,
    env: { ...process.env, WARD_STATE_DIR: '', WARD_STORE_URL: options.storeUrl, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let running = true;
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    proc.on('exit', (code, signal) => {
      running = false;
      resolve(code ?? signal ?? -1);
    }),
  );
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      const start = JSON.parse(line) as StartLine;
      if (!start.ok) return reject(new Error(`replica ${name} failed: ${line}`));
      const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
        if (running) proc.kill(signal);
        return exited;
      };
      resolve({
        url: start.url,
        pid: start.pid,
        name,
        keyId: start.key_id ?? '',
        stateDir,
        policy,
        start,
        proc,
        stderr: () => stderr,
        exited,
        get running() {
          return running;
        },
        stop,
        kill: () => stop('SIGKILL'),
      });
    });
    void exited.then((code) => reject(new Error(`replica ${name} exited (${code}) before listening: ${stdout} ${stderr}`)));
  });
}

export async function stopReplicas(replicas: readonly (Replica | undefined)[]): Promise<void> {
  await Promise.all(
    replicas.map(async (r) => {
      if (!r?.running) return;
      const timer = setTimeout(() => r.proc.kill('SIGKILL'), 5000);
      await r.stop();
      clearTimeout(timer);
    }),
  );
}

export interface ClusterFixture {
  readonly server: PgServer;
  replicas: Replica[];
}

export function clusterFixture(): ClusterFixture {
  let server: PgServer | undefined;
  const fixture = {
    get server(): PgServer {
      if (!server) throw new Error('the PostgreSQL server starts in beforeAll');
      return server;
    },
    replicas: [] as Replica[],
  };
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    await stopReplicas(fixture.replicas);
    fixture.replicas = [];
  });
  afterAll(async () => {
    await server?.destroy();
  });
  return fixture;
}
