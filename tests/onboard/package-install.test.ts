// Ward as a package: `npm pack` makes a tarball with dist/ prebuilt and no install scripts, and
// a fresh project that installs it runs the CLI, the SDK, the hook and `ward init` from
// node_modules — never from this checkout, and without building anything.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../cli/run.js';
import { tempDir } from '../cli/run.js';

const PACKAGE = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string; files: string[] };
/** The environment of a user's shell: none of the npm variables `npm test` sets for this process. */
const SHELL_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_') && k !== 'INIT_CWD' && k !== 'WARD_STATE_DIR'));

function run(cmd: string, args: string[], opts: SpawnSyncOptions & { cwd: string; input?: string }) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: SHELL_ENV, timeout: 180_000, ...opts });
  return { code: r.status ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

let tarball = '';
let project = '';
let installLog = '';

beforeAll(() => {
  // Pack a copy of what `files` ships, so the checkout's package.json and dist/ are never
  // rewritten while other test files run from them; WARD_PREBUILT skips prepack's build.
  const stage = tempDir('ward-pack-stage-');
  for (const f of [...PACKAGE.files, 'package.json', 'README.md', 'scripts/pack-manifest.js']) {
    if (existsSync(join(REPO, f))) cpSync(join(REPO, f), join(stage, f), { recursive: true });
  }
  const out = tempDir('ward-pack-');
  const packed = run('npm', ['pack', '--pack-destination', out, '--silent'], { cwd: stage, env: { ...SHELL_ENV, WARD_PREBUILT: '1' } });
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(out, `ward-${PACKAGE.version}.tgz`);
  expect(existsSync(join(stage, '.package.json.prepack')), 'postpack restores the manifest').toBe(false);

  project = tempDir('ward-consumer-');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  const installed = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project });
  installLog = installed.stdout + installed.stderr;
  expect(installed.code, installLog).toBe(0);
}, 300_000);

describe('the packed tarball', () => {
  it('carries dist/ and a manifest without scripts or devDependencies', () => {
    const listed = run('tar', ['tzf', tarball], { cwd: REPO }).stdout.split('\n');
    expect(listed).toContain('package/dist/index.js');
    expect(listed).toContain('package/dist/cli/main.js');
    expect(listed).toContain('package/bin/ward.js');
    // The command bundles, without the staleness records a checkout needs (bin/ward.js runs them as they are).
    expect(listed).toContain('package/dist/cli/fast-hook.cjs');
    expect(listed.filter((f) => f.endsWith('.inputs') || f.endsWith('.tsbuildinfo'))).toEqual([]);
    expect(listed.some((f) => f.startsWith('package/src/') || f.startsWith('package/tests/'))).toBe(false);
    const manifest = JSON.parse(run('tar', ['xzf', tarball, '-O', 'package/package.json'], { cwd: REPO }).stdout) as Record<string, unknown>;
    expect(manifest['scripts']).toBeUndefined();
    expect(manifest['devDependencies']).toBeUndefined();
    expect(manifest['bin']).toEqual({ ward: 'bin/ward.js' });
  });

  it('installs without an install script of its own to approve', () => {
    expect(installLog).not.toMatch(/ward@\S+ \((prepare|install|postinstall)/);
    expect(readdirSync(join(project, 'node_modules', 'ward'))).toEqual(expect.arrayContaining(['dist', 'bin', 'policies']));
  });
});

describe('a project that installed the tarball', () => {
  it('runs ward from node_modules/.bin and through npx', () => {
    const bin = run(join(project, 'node_modules', '.bin', 'ward'), ['--version'], { cwd: project });
    expect(bin.code, bin.stderr).toBe(0);
    expect(bin.stdout.trim()).toBe(PACKAGE.version);
    const npx = run('npx', ['--no', '--', 'ward', '--version'], { cwd: project });
    expect(npx.code, npx.stderr).toBe(0);
    expect(npx.stdout.trim()).toBe(PACKAGE.version);
  });

  it('`npx ward init` prints next commands that work when pasted into a plain shell', () => {
    const dir = join(project, 'app');
    mkdirSync(dir);
    const init = run('npx', ['--no', '--', 'ward', 'init', '--json'], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    const next = (JSON.parse(init.stdout) as { next_commands: string[] }).next_commands;
    const installed = join(project, 'node_modules', 'ward', 'bin', 'ward.js');
    for (const command of next.filter((c) => !c.includes('<'))) {
      expect(command).toContain(installed);
      const pasted = run('sh', ['-c', command], { cwd: dir });
      expect([0, 1], `${command}\n${pasted.stderr}`).toContain(pasted.code);
      expect(pasted.stderr).not.toMatch(/not found|Cannot find module/);
    }
  });

  it('imports the SDK: guardTool runs an allowed call and blocks a denied one', () => {
    writeFileSync(
      join(project, 'guard.mjs'),
      `import { Ward, WardBlockedError, intent } from 'ward';
const ward = new Ward({ policy: 'node_modules/ward/policies/baseline-highrisk.yaml', stateDir: '.ward-sdk' });
const describe = (path) => intent.tool('fs.delete_file').args({ path }).target({ kind: 'path', value: path, operation: 'delete' })
  .provenance('$.path', 'user').context({ identity: 'agent', workspace: '/workspace', risk_class: 'high' }).build();
const del = ward.guardTool(async (path) => 'deleted ' + path, describe);
try { await del('/workspace/prod.db'); console.log('ran'); } catch (err) { console.log(err instanceof WardBlockedError ? 'blocked ' + err.verdict : 'error ' + err); }
`,
    );
    const r = run(process.execPath, ['guard.mjs'], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('blocked block');
  });

  it('runs the Claude Code hook from the installed package', () => {
    const event = {
      session_id: 's1',
      transcript_path: '/dev/null',
      cwd: project,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /' },
    };
    const hook = run(
      process.execPath,
      [join(project, 'node_modules', 'ward', 'bin', 'ward.js'), 'hook', 'claude-code', '--policy', join(project, 'node_modules', 'ward', 'policies', 'baseline-highrisk.yaml'), '--state-dir', join(project, '.ward-hook')],
      { cwd: project, input: JSON.stringify(event) },
    );
    expect(hook.code, hook.stderr).toBe(0);
    const reply = JSON.parse(hook.stdout) as { hookSpecificOutput: { permissionDecision: string } };
    expect(reply.hookSpecificOutput.permissionDecision).toBe('deny');
  });
});
