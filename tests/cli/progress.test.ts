import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/program.js';
import { progressOf } from '../../src/cli/progress.js';
import { ward, workdir } from '../pack/cli.js';

/** A context whose stderr is collected, a terminal or not. */
function context(stderrIsTTY: boolean): CliContext & { err: string[] } {
  const err: string[] = [];
  return { argv: ['ward'], cwd: '/', env: {}, stdout: () => {}, stderr: (s) => void err.push(s), readStdin: async () => '', isTTY: false, stderrIsTTY, exitCode: 0, err };
}

describe('progressOf: when progress is shown, and how often', () => {
  it('is quiet on a pipe or file unless --progress is given; --json alone is quiet even on a terminal', () => {
    for (const [tty, flags] of [
      [false, {}],
      [false, { json: true }],
      [true, { json: true }],
    ] as const) {
      const ctx = context(tty);
      const p = progressOf(ctx, flags, 'store export');
      p.stage('opening the store');
      p.count(10, 10, 'entries');
      p.end();
      expect(ctx.err).toEqual([]);
    }
  });

  it('--progress writes whole lines (a log keeps them all), also with --json; counts at most once a second, and the last one always', () => {
    let clock = 0;
    const ctx = context(false);
    const p = progressOf(ctx, { progress: true, json: true }, 'store export', () => clock);
    p.stage('listing entries');
    p.count(1, 100, 'entries written'); // within the second of the stage line: not shown
    clock = 1_000;
    p.count(50, 100, 'entries written');
    clock = 1_500;
    p.count(60, 100, 'entries written'); // half a second later: not shown
    p.count(100, 100, 'entries written'); // finished: shown at once
    p.end();
    expect(ctx.err).toEqual(['store export: listing entries\n', 'store export: 50/100 entries written (50%)\n', 'store export: 100/100 entries written (100%)\n']);
  });

  it('on a terminal each line replaces the last, and the end closes the line', () => {
    let clock = 0;
    const ctx = context(true);
    const p = progressOf(ctx, {}, 'store import', () => clock);
    p.stage('opening the store');
    clock = 2_000;
    p.count(1_500, 3_000, 'entries stored');
    p.end();
    p.end(); // twice is harmless
    expect(ctx.err).toEqual(['\r\x1b[Kstore import: opening the store', '\r\x1b[Kstore import: 1,500/3,000 entries stored (50%)', '\n']);
  });
});

describe('long commands say at once what they are doing (--progress), and keep stdout for their output', () => {
  let cwd: string;
  beforeAll(async () => {
    // ward demo records a runpack, a pack and traces: evidence for every command below.
    cwd = workdir();
    expect((await ward(['demo', '--json'], cwd)).code).toBe(0);
    expect((await ward(['store', 'ingest', '.ward/demo/runpack_run_ward_demo.zip', '.ward/demo/pack_run_ward_demo.zip', '--json'], cwd)).code).toBe(0);
  });

  const firstLine = (stderr: string) => stderr.split('\n')[0];

  it('store export and import: stages, then the count of entries to the last one', async () => {
    const out = await ward(['store', 'export', '--out', 'all.zip', '--json', '--progress'], cwd);
    expect(out.code).toBe(0);
    expect(out.json).toMatchObject({ ok: true });
    const count = out.json['count'] as number;
    expect(count).toBeGreaterThan(1);
    const lines = out.stderr.trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual(['store export: opening the store', 'store export: ingesting the spool', 'store export: listing entries']);
    expect(lines.at(-1)).toBe(`store export: ${count}/${count} entries written (100%)`);

    const target = workdir();
    const imported = await ward(['store', 'import', join(cwd, 'all.zip'), '--json', '--progress'], target);
    expect(imported.json).toMatchObject({ ok: true, stored: count });
    expect(imported.stderr.trimEnd().split('\n')).toEqual([
      'store import: opening the store',
      'store import: ingesting the spool',
      `store import: checking ${join(cwd, 'all.zip')}`,
      `store import: ${count}/${count} entries stored (100%)`,
    ]);
    // Without --progress (stderr is not a terminal here) the same command is quiet.
    const quiet = await ward(['store', 'import', join(cwd, 'all.zip'), '--json'], workdir());
    expect(quiet.json).toMatchObject({ ok: true, stored: count });
    expect(quiet.stderr).toBe('');
  });

  it('store ingest and gc', async () => {
    const ingest = await ward(['store', 'ingest', '.ward/demo/pack_run_ward_demo.zip', '--json', '--progress'], cwd);
    expect(ingest.json).toMatchObject({ ok: true, duplicates: 1 });
    expect(ingest.stderr).toBe('store ingest: reading 1 path\nstore ingest: opening the store\nstore ingest: ingesting the spool\nstore ingest: storing 1 entries\n');
    const gc = await ward(['store', 'gc', '--max-age', '3650d', '--json', '--progress'], cwd);
    expect(gc.json).toMatchObject({ ok: true, removed: 0 });
    expect(gc.stderr).toBe('store gc: opening the store\nstore gc: ingesting the spool\nstore gc: removing expired entries\n');
  });

  it('pack build and verify', async () => {
    const built = await ward(['pack', 'build', '--from', '.ward/demo/runpack_run_ward_demo.zip', '--out', 'p.zip', '--json', '--progress'], cwd);
    expect(built.json).toMatchObject({ ok: true, operation: 'build' });
    expect(built.stderr).toMatch(/^pack build: reading \.ward\/demo\/runpack_run_ward_demo\.zip\npack build: building from [\d,]+ bytes\npack build: writing [\d,]+ bytes\n$/);
    const verified = await ward(['pack', 'verify', 'p.zip', '--json', '--progress'], cwd);
    expect(verified.json).toMatchObject({ ok: true, operation: 'verify' });
    expect(verified.stderr).toMatch(/^pack verify: reading p\.zip\npack verify: verifying [\d,]+ bytes\n$/);
  });

  it('regress run: the config, then fixtures loaded and graded', async () => {
    expect((await ward(['regress', 'bootstrap', '--from', '.ward/demo/runpack_run_ward_demo.zip', '--json'], cwd)).code).toBe(0);
    const run = await ward(['regress', 'run', '--json', '--progress'], cwd);
    expect(run.json).toMatchObject({ ok: true, status: 'pass' });
    expect(run.stderr).toBe('regress run: reading ward.yaml\nregress run: 1/1 fixtures loaded (100%)\nregress run: 1/1 fixtures graded (100%)\n');
  });

  it('doctor: a line before the checks and before the store check', async () => {
    const doctor = await ward(['doctor', '--json', '--progress'], cwd);
    expect(JSON.parse(doctor.stdout)).toHaveProperty('checks');
    expect(doctor.stderr).toBe('doctor: checking Node and the state directory\ndoctor: checking the store\n');
  });

  it('a terminal on stderr gets progress without asking; a failing command still ends its line', async () => {
    const ctx = { ...context(true), cwd, argv: ['ward', 'pack', 'verify', 'missing.zip'] };
    const code = await runCli(['pack', 'verify', 'missing.zip'], ctx);
    expect(code).not.toBe(0);
    expect(ctx.err[0]).toBe('\r\x1b[Kpack verify: reading missing.zip');
    expect(ctx.err[1]).toBe('\n');
    expect(firstLine(ctx.err.slice(2).join(''))).toMatch(/missing\.zip/);
  });
});
