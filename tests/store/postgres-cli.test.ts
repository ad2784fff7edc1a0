import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/program.js';
import { spoolTrace } from '../../src/store/index.js';
import { openZipFile } from '../../src/zip/index.js';
import { REPO } from '../cli/run.js';
import { DEMO_RECORD, workdir } from '../pack/cli.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { trace } from './traces.js';

/*
 * Every CLI path that reads the store, run on the same evidence against the local LevelDB store and
 * against PostgreSQL (WARD_STORE_URL, so argv — and the correlation id — are the same): stdout,
 * stderr and exit codes must be identical once the working directory and ingest times are blanked.
 */

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.destroy();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function ward(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const ctx: CliContext = {
    argv: ['ward', ...args],
    cwd,
    env,
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    readStdin: async () => '',
    isTTY: false,
    exitCode: 0,
  };
  const code = await runCli(args, ctx);
  return { code, stdout, stderr };
}

const json = (r: Run) => JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, any>;

function blank(r: Run, cwd: string): Run {
  const clean = (s: string) =>
    s
      .replaceAll(cwd, '<cwd>')
      .replace(/"ingested_at":"[^"]*"/g, '"ingested_at":"-"')
      .replace(/"applied_at":"[^"]*"/g, '"applied_at":"-"');
  return { code: r.code, stdout: clean(r.stdout), stderr: clean(r.stderr) };
}

const HIGHRISK = join(REPO, 'policies/baseline-highrisk.yaml');
const ALLOW_ALL = join(REPO, 'fixtures/policies/default-allow.yaml');
const QUICKSTART = ['read-report', 'delete-database', 'write-config'].map((n) => join(REPO, 'examples/quickstart', `${n}.json`));

/** A project with decisions (traces and captures), a recorded run and spooled synthetic traces. */
async function evidence(): Promise<string> {
  const cwd = workdir();
  for (const intent of QUICKSTART) expect([0, 3, 4]).toContain((await ward(['gate', 'eval', '--policy', HIGHRISK, '--intent', intent, '--capture-intents', '--json'], cwd)).code);
  expect((await ward(['run', 'record', '--input', DEMO_RECORD, '--json'], cwd)).code).toBe(0);
  for (let n = 0; n < 12; n++) spoolTrace(join(cwd, '.ward'), trace(n));
  return cwd;
}

/** The same state directory twice: one for LevelDB, one for PostgreSQL (a migrated, empty database). */
async function twins(): Promise<{ level: string; pg: string; env: NodeJS.ProcessEnv }> {
  const level = await evidence();
  const pg = workdir();
  cpSync(join(level, '.ward'), join(pg, '.ward'), { recursive: true });
  const env = { WARD_STORE_URL: await server.createDatabase() };
  const migrated = await ward(['store', 'migrate', '--json'], pg, env);
  expect(migrated.code).toBe(0);
  return { level, pg, env };
}

describe('ward CLI on PostgreSQL answers as on LevelDB', () => {
  it('store list/show/gc/export, pack build/inspect, verify, regress replay --from store, trace verify store', async () => {
    const { level, pg, env } = await twins();
    const firstTrace = json(await ward(['store', 'list', '--kind', 'trace', '--order', 'asc', '--limit', '1', '--json'], level)).entries[0];
    const signedTrace = json(await ward(['store', 'list', '--kind', 'trace', '--limit', '1', '--json'], level)).entries[0]; // a gate eval decision
    const codes: number[] = [];
    const commands: string[][] = [
      ['store', 'list'],
      ['store', 'list', '--json'],
      ['store', 'list', '--verdict', 'block', '--json'],
      ['store', 'list', '--tool', 'fs.write', '--order', 'asc', '--limit', '3'],
      ['store', 'list', '--kind', 'capture', '--json'],
      ['store', 'list', '--since', '2026-02-18T00:00:05Z', '--until', '2026-02-18T00:00:09Z', '--json'],
      ['store', 'list', '--run', 'run_demo', '--json'],
      ['store', 'show', trace(3)['trace_id'] as string, '--json'],
      ['store', 'show', (trace(3)['event_id'] as string).slice(0, 23)],
      ['store', 'show', 'event00000000000000000', '--json'], // ambiguous
      ['store', 'show', 'run_demo', '--kind', 'runpack', '--json'],
      ['store', 'show', firstTrace.id, '--kind', 'trace', '--json'],
      ['store', 'show', 'nothing-like-this', '--json'],
      ['verify', 'run_demo', '--json'],
      ['pack', 'build', '--from', 'run_demo', '--out', 'demo-pack.zip', '--json'],
      ['store', 'list', '--kind', 'pack', '--json'],
      ['regress', 'replay', '--policy', ALLOW_ALL, '--from', 'store', '--json'],
      ['regress', 'replay', '--policy', ALLOW_ALL, '--from', 'store', '--tool', 'fs.delete_file'],
      ['trace', 'verify', 'store', '--json'],
      ['trace', 'verify', 'store'],
      ['trace', 'verify', `store:${firstTrace.id}`, '--json'],
      ['trace', 'verify', `store:${signedTrace.id}`],
      ['store', 'export', '--out', 'all.zip', '--json'],
      ['store', 'gc', '--max-count', '2', '--kind', 'trace', '--json'],
      ['store', 'list', '--json'],
      ['store', 'import', 'all.zip', '--json'],
      ['store', 'list', '--order', 'asc'],
      ['store', 'ingest', join(level, '.ward', 'traces'), '--json'],
      ['regress', 'init', '--from', (json(await ward(['store', 'list', '--kind', 'runpack', '--json'], level)).entries[0].id as string).slice(0, 16), '--json'],
    ];
    for (const args of commands) {
      const a = blank(await ward(args, level), level);
      const b = blank(await ward(args, pg, env), pg);
      expect({ args, ...b }).toEqual({ args, ...a });
      codes.push(a.code);
    }
    // The cases are meaningful: most succeed, the ambiguous and unknown lookups fail, replays find loosening, unsigned traces fail.
    expect(codes).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 0, 0, 6, 0, 0, 0, 5, 5, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    const pack = json(await ward(['store', 'list', '--kind', 'pack', '--json'], level)).entries[0];
    expect(pack).toBeDefined();
    for (const args of [['pack', 'inspect', pack.id.slice(0, 12), '--json'], ['pack', 'verify', pack.id, '--json']]) {
      expect(blank(await ward(args, pg, env), pg)).toEqual(blank(await ward(args, level), level));
    }
    // The exports are the same archive, byte for byte.
    expect(readFileSync(join(pg, 'all.zip')).equals(readFileSync(join(level, 'all.zip')))).toBe(true);
  }, 60_000);

  it('store migrate reports the schema; doctor reports the PostgreSQL store and never its password', async () => {
    const url = await server.createDatabase();
    const cwd = workdir();
    const status = await ward(['store', 'migrate', '--status', '--json'], cwd, { WARD_STORE_URL: url });
    expect(status.code).toBe(2);
    expect(json(status)).toMatchObject({ ok: false, version: 0 });
    const refused = await ward(['store', 'list', '--json'], cwd, { WARD_STORE_URL: url });
    expect(refused.code).toBe(1);
    expect(json(refused).hint).toContain('ward store migrate');
    const doctorBefore = await ward(['doctor', '--json'], cwd, { WARD_STORE_URL: url });
    const storeCheck = (r: Run) => (json(r).checks as { name: string; status: string; message: string; fix_command?: string }[]).find((c) => c.name === 'store')!;
    expect(storeCheck(doctorBefore)).toMatchObject({ status: 'fail', fix_command: expect.stringContaining('store migrate') });
    const migrated = await ward(['store', 'migrate'], cwd, { WARD_STORE_URL: url });
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/schema version \d+ \(this Ward: \d+\)\napplied 1, 2, 3, 4/);
    expect(json(await ward(['store', 'migrate', '--json'], cwd, { WARD_STORE_URL: url }))).toMatchObject({ ok: true, ran: [] });
    const doctor = await ward(['doctor', '--json'], cwd, { WARD_STORE_URL: url });
    expect(storeCheck(doctor)).toMatchObject({ status: 'pass', message: expect.stringMatching(/^PostgreSQL store postgres:\/\/ward_test:\*\*\*@.*: schema version 4 \(0 entries\)$/) });
    expect(doctor.stdout).not.toContain(server.password);
    // Unreachable: a clear failure, no password.
    const down = await ward(['doctor', '--json'], cwd, { WARD_STORE_URL: `postgres://ward:hunter2@127.0.0.1:1/none` });
    expect(storeCheck(down)).toMatchObject({ status: 'fail', message: expect.stringContaining('unreachable') });
    expect(down.stdout).not.toContain('hunter2');
    // A location that is not a PostgreSQL URL is a failed check, not a crash.
    const bad = await ward(['doctor', '--json'], cwd, { WARD_STORE_URL: 'mysql://x' });
    expect(bad.code).toBe(0);
    expect(storeCheck(bad)).toMatchObject({ status: 'fail', message: expect.stringContaining('not a postgres:// URL') });
    // The local store has nothing to migrate; a password on the command line is refused.
    expect((await ward(['store', 'migrate', '--json'], cwd)).code).toBe(6);
    expect((await ward(['store', 'list', '--store', url, '--json'], cwd)).code).toBe(6);
  }, 30_000);

  it('export from LevelDB, import into PostgreSQL, export again, import into a fresh LevelDB: every entry survives', async () => {
    const source = await evidence();
    await ward(['pack', 'build', '--from', 'run_demo', '--json'], source);
    const exported = await ward(['store', 'export', '--out', 'level.zip', '--json'], source);
    expect(json(exported)).toMatchObject({ ok: true });
    // PostgreSQL named by --store without a password; the password from a file.
    const url = new URL(await server.createDatabase());
    const password = decodeURIComponent(url.password);
    url.password = '';
    const pwFile = join(mkdtempSync(join(tmpdir(), 'ward-pw-')), 'pw');
    writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
    const pgFlags = ['--store', url.toString(), '--store-password-file', pwFile];
    const middle = workdir();
    expect((await ward(['store', 'migrate', ...pgFlags], middle)).code).toBe(0);
    const intoPg = await ward(['store', 'import', join(source, 'level.zip'), ...pgFlags, '--json'], middle);
    expect(json(intoPg)).toMatchObject({ ok: true, duplicates: 0, conflicts: [] });
    expect((await ward(['store', 'export', '--out', 'pg.zip', ...pgFlags, '--json'], middle)).code).toBe(0);
    const target = workdir();
    const intoLevel = await ward(['store', 'import', join(middle, 'pg.zip'), '--json'], target);
    expect(json(intoLevel)).toMatchObject({ ok: true, stored: json(intoPg).stored, duplicates: 0, conflicts: [] });
    expect((await ward(['store', 'export', '--out', 'back.zip', '--json'], target)).code).toBe(0);

    const facts = async (cwd: string, flags: string[] = []) =>
      (json(await ward(['store', 'list', '--limit', '100000', ...flags, '--json'], cwd)).entries as { kind: string; id: string; digest: string; size: number }[])
        .map((e) => `${e.kind}/${e.id}/${e.digest}/${e.size}`)
        .sort();
    const original = await facts(source);
    expect(original.length).toBeGreaterThan(15);
    expect(original.filter((f) => f.startsWith('pack/'))).toHaveLength(1);
    expect(await facts(middle, pgFlags)).toEqual(original);
    expect(await facts(target)).toEqual(original);
    // The three archives are the same bytes: nothing lost or changed either way.
    const bytes = (p: string) => readFileSync(p);
    expect(bytes(join(middle, 'pg.zip')).equals(bytes(join(source, 'level.zip')))).toBe(true);
    expect(bytes(join(target, 'back.zip')).equals(bytes(join(source, 'level.zip')))).toBe(true);
    const zip = openZipFile(join(target, 'back.zip'));
    try {
      expect(zip.entries.length).toBe(original.length);
    } finally {
      zip.close();
    }
  }, 60_000);
});
