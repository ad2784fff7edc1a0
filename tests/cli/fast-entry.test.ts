import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO, fixture, tempDir, ward } from './run.js';

/**
 * bin/ward.js runs `gate`, `hook` and `--version` from one-file bundles (dist/cli/fast-*.cjs, built
 * by scripts/build-cli.js in `npm run build`) and everything else from the unbundled dist/. Each
 * command must answer the same either way: compare bin/ward.js with the unbundled CLI started
 * directly (dist/cli/main.js's `main()`), on the same inputs in separate state directories.
 */
function unbundled(args: string[], cwd: string, input = '') {
  const runner = join(cwd, 'unbundled.mjs');
  writeFileSync(runner, `const { main } = await import(${JSON.stringify(pathToFileURL(join(REPO, 'dist/cli/main.js')).href)});\nawait main();\n`);
  const r = spawnSync(process.execPath, [runner, ...args], { cwd, input, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The answer without what differs by process (correlation id: argv; trace path: state directory). */
const answer = (stdout: string) => {
  const { correlation_id: _c, trace_path: _t, ...rest } = JSON.parse(stdout) as Record<string, unknown>;
  return rest;
};

describe('bin/ward.js: bundled and unbundled CLI answer alike', () => {
  it('npm run build made a bundle, a code cache and an input list for gate, hook and --version', () => {
    for (const name of ['fast-gate', 'fast-hook', 'fast-version']) {
      expect(existsSync(join(REPO, 'dist/cli', `${name}.cjs`)), name).toBe(true);
      expect(existsSync(join(REPO, 'dist/cli', `${name}.cjs.cache`)), `${name} cache`).toBe(true);
      // the dist/ files it was built from, which bin/ward.js checks are not newer than the bundle
      const inputs = readFileSync(join(REPO, 'dist/cli', `${name}.cjs.inputs`), 'utf8').split('\n').filter(Boolean);
      expect(inputs).toContain('main.js');
      for (const input of inputs) expect(existsSync(join(REPO, 'dist/cli', input)), input).toBe(true);
    }
  });

  it('gate eval: same verdict, reasons, digests and exit code', () => {
    const cases: [string, string, number][] = [
      [fixture('policies/bench-typical.yaml'), fixture('intents/v1-approval-valid.json'), 4],
      [join(REPO, 'policies/baseline-highrisk.yaml'), join(REPO, 'examples/quickstart/delete-database.json'), 3],
      [join(REPO, 'policies/baseline-highrisk.yaml'), join(REPO, 'examples/quickstart/read-report.json'), 0],
    ];
    for (const [policy, intent, code] of cases) {
      const args = ['gate', 'eval', '--policy', policy, '--intent', intent, '--json'];
      const a = ward(args, { cwd: tempDir() });
      const b = unbundled(args, tempDir());
      expect(a.code, a.stderr).toBe(code);
      expect(b.code, b.stderr).toBe(code);
      expect(answer(a.stdout)).toEqual(answer(b.stdout));
    }
  });

  it('gate eval usage errors: same exit code and message', () => {
    const a = ward(['gate', 'eval', '--json'], { cwd: tempDir() });
    const b = unbundled(['gate', 'eval', '--json'], tempDir());
    expect(a.code).toBe(6);
    expect(a.code).toBe(b.code);
    expect(answer(a.stdout)).toEqual(answer(b.stdout));
  });

  it('hook claude-code: same reply for allowed and denied calls, and a bad command line still denies', () => {
    for (const event of ['pre-read', 'pre-bash-rm']) {
      const input = readFileSync(fixture(`claude-code/${event}.json`), 'utf8');
      const args = ['hook', 'claude-code', '--policy', fixture('claude-code/policy.yaml')];
      const a = ward(args, { cwd: tempDir(), input });
      const b = unbundled(args, tempDir(), input);
      expect(a.code).toBe(0);
      expect(a.code).toBe(b.code);
      const strip = (s: string) => s.replace(/trace [0-9a-f]{24}/, 'trace T');
      expect(strip(a.stdout)).toBe(strip(b.stdout));
    }
    const input = readFileSync(fixture('claude-code/pre-read.json'), 'utf8');
    const bad = ward(['hook', 'claude-code', '--polcy', 'x'], { cwd: tempDir(), input });
    expect(bad.code).toBe(0);
    expect(JSON.parse(bad.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(bad.stdout).toBe(unbundled(['hook', 'claude-code', '--polcy', 'x'], tempDir(), input).stdout);
  });

  it('hook and gate eval load none of the modules start-up was cut free of (perf_hooks, dns, fs/promises, tty, net)', () => {
    // bench/README.md "Whole-process start-up": each of these cost every one-shot call about 1-2 ms.
    const cwd = tempDir();
    const probe = join(cwd, 'probe.cjs');
    const cut = ['perf_hooks', 'dns', 'dns/promises', 'fs/promises', 'tty', 'net'].map((m) => `NativeModule ${m}`);
    writeFileSync(probe, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(join(cwd, 'loaded.json'))}, JSON.stringify(process.moduleLoadList)));\n`);
    const loadedBy = (args: string[], input = '') => {
      const r = spawnSync(process.execPath, ['--require', probe, join(REPO, 'bin/ward.js'), ...args], { cwd, input, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
      expect(r.status, r.stderr).toBe(0);
      const loaded = JSON.parse(readFileSync(join(cwd, 'loaded.json'), 'utf8')) as string[];
      expect(loaded).toContain('NativeModule fs');
      return cut.filter((m) => loaded.includes(m));
    };
    const hook = ['hook', 'claude-code', '--policy', fixture('claude-code/policy.yaml'), '--state-dir', join(cwd, '.ward')];
    expect(loadedBy(hook, readFileSync(fixture('claude-code/pre-read.json'), 'utf8'))).toEqual([]);
    expect(loadedBy(['gate', 'eval', '--policy', join(REPO, 'policies/baseline-lowrisk.yaml'), '--intent', join(REPO, 'examples/quickstart/read-report.json'), '--state-dir', join(cwd, '.ward')])).toEqual([]);
  });

  it('a bundle runs only while it is newer than tsc\'s last emit (dist/.tsbuildinfo); without that record, than each of its inputs; with neither (the npm package), always', () => {
    // A copy of bin/ and the --version bundle whose unbundled CLI only says that it ran.
    const root = tempDir('ward-stale-');
    cpSync(join(REPO, 'bin'), join(root, 'bin'), { recursive: true });
    const cli = join(root, 'dist', 'cli');
    mkdirSync(cli, { recursive: true });
    for (const f of ['fast-version.cjs', 'fast-version.cjs.cache']) cpSync(join(REPO, 'dist/cli', f), join(cli, f));
    writeFileSync(join(cli, 'fast-version.cjs.inputs'), 'main.js\n');
    writeFileSync(join(root, 'package.json'), JSON.stringify({ version: '9.9.9', type: 'module' }));
    writeFileSync(join(cli, 'main.js'), "export async function main() { process.stdout.write('unbundled\\n'); }\n");
    const info = join(root, 'dist', '.tsbuildinfo');
    writeFileSync(info, '{}');
    const at = (file: string, seconds: number) => utimesSync(file, seconds, seconds);
    const t = Math.floor(Date.now() / 1000);
    at(join(cli, 'fast-version.cjs'), t);
    at(join(cli, 'fast-version.cjs.cache'), t);
    const version = () => spawnSync(process.execPath, [join(root, 'bin', 'ward.js'), '--version'], { cwd: root, encoding: 'utf8' }).stdout;

    at(info, t - 10);
    at(join(cli, 'main.js'), t + 10); // newer, but tsc's record is what counts
    expect(version()).toBe('9.9.9\n'); // the bundle answered
    at(info, t + 10); // tsc emitted after the bundle was built
    expect(version()).toBe('unbundled\n');
    rmSync(info); // no record: each input is compared
    expect(version()).toBe('unbundled\n');
    at(join(cli, 'main.js'), t - 10);
    expect(version()).toBe('9.9.9\n');
    at(join(cli, 'main.js'), t + 10);
    rmSync(join(cli, 'fast-version.cjs.inputs')); // neither record, as in the npm package: the bundle runs
    expect(version()).toBe('9.9.9\n');
  });

  it('--version and --version --json print the package version', () => {
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    expect(ward(['--version'], { cwd: tempDir() }).stdout).toBe(`${version}\n`);
    expect(unbundled(['--version'], tempDir()).stdout).toBe(`${version}\n`);
    expect(JSON.parse(ward(['--version', '--json'], { cwd: tempDir() }).stdout)).toEqual({ ok: true, version });
  });
});
