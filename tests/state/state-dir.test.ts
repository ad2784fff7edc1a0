import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWardError } from '../../src/errors.js';
import { describeStateDir, expandHome, findStateDirUpwards, resolveStateDir } from '../../src/state/state-dir.js';
import { spawnSync } from 'node:child_process';
import { REPO, bareDir, ward } from '../cli/run.js';
import { node, RawProxy, TINY, writePolicy } from '../mcp/proxy/helpers.js';

const POLICY = join(REPO, 'policies', 'baseline-highrisk.yaml');
const INTENT = (name: string) => join(REPO, 'examples', 'quickstart', `${name}.json`);

/** A project `<root>/.ward` with `<root>/a/b` below it, and a home directory of its own. */
function layout() {
  const root = bareDir('ward-sd-');
  mkdirSync(join(root, '.ward'));
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  const home = bareDir('ward-home-');
  return { root, sub: join(root, 'a', 'b'), home };
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

describe('resolveStateDir: the discovery order', () => {
  it('--state-dir wins over WARD_STATE_DIR, which wins over a .ward/ found upwards', () => {
    const { root, sub, home } = layout();
    const env = { HOME: home, WARD_STATE_DIR: '/srv/env-state' };
    expect(resolveStateDir({ cwd: sub, env, explicit: '/srv/flag-state' })).toMatchObject({ dir: '/srv/flag-state', source: 'flag' });
    expect(resolveStateDir({ cwd: sub, env })).toMatchObject({ dir: '/srv/env-state', source: 'env', reason: 'WARD_STATE_DIR' });
    expect(resolveStateDir({ cwd: sub, env: { HOME: home } })).toEqual({
      dir: join(root, '.ward'),
      source: 'found',
      reason: `found upwards from ${sub}`,
    });
  });

  it('an empty --state-dir or WARD_STATE_DIR counts as unset', () => {
    const { root, sub, home } = layout();
    expect(resolveStateDir({ cwd: sub, env: { HOME: home, WARD_STATE_DIR: '' }, explicit: '' }).dir).toBe(join(root, '.ward'));
  });

  it('a relative --state-dir is taken from the working directory', () => {
    const { sub, home } = layout();
    expect(resolveStateDir({ cwd: sub, env: { HOME: home }, explicit: 'state' }).dir).toBe(join(sub, 'state'));
  });

  it('the nearest .ward/ wins; a file named .ward is not a state directory', () => {
    const { root, sub } = layout();
    mkdirSync(join(root, 'a', '.ward'));
    writeFileSync(join(sub, '.ward'), 'not a directory');
    expect(findStateDirUpwards(sub)).toBe(join(root, 'a', '.ward'));
  });

  it('then .ward/ beside the --policy file, only when it exists there', () => {
    const nowhere = bareDir('ward-sd-cwd-');
    const project = bareDir('ward-sd-proj-');
    const home = bareDir('ward-home-');
    const policy = join(project, 'policy.yaml');
    const env = { HOME: home };
    // No .ward/ beside the policy: the per-user directory.
    expect(resolveStateDir({ cwd: nowhere, env, policyPath: policy }).source).toBe('user');
    mkdirSync(join(project, '.ward'));
    expect(resolveStateDir({ cwd: nowhere, env, policyPath: policy })).toEqual({
      dir: join(project, '.ward'),
      source: 'policy',
      reason: `beside the policy ${policy}`,
    });
  });

  it('then the per-user directory: $XDG_STATE_HOME/ward, else ~/.local/state/ward', () => {
    const cwd = bareDir('ward-sd-cwd-');
    const home = bareDir('ward-home-');
    const xdg = bareDir('ward-xdg-');
    const byXdg = resolveStateDir({ cwd, env: { HOME: home, XDG_STATE_HOME: xdg } });
    expect(byXdg).toMatchObject({ dir: join(xdg, 'ward'), source: 'user' });
    expect(byXdg.reason).toContain('$XDG_STATE_HOME/ward');
    expect(byXdg.reason).toContain(`no .ward/ found upwards from ${cwd}`);
    expect(resolveStateDir({ cwd, env: { HOME: home } })).toMatchObject({ dir: join(home, '.local', 'state', 'ward'), source: 'user' });
    // A relative XDG_STATE_HOME is invalid per the XDG spec and ignored.
    expect(resolveStateDir({ cwd, env: { HOME: home, XDG_STATE_HOME: 'rel' } }).dir).toBe(join(home, '.local', 'state', 'ward'));
    expect(describeStateDir(byXdg)).toBe(`${join(xdg, 'ward')} (${byXdg.reason})`);
  });

  it('with HOME empty (and nothing else), it refuses with an error that says how to choose a directory', () => {
    for (const env of [{ HOME: '' }, {}, { HOME: 'relative/home' }]) {
      const err = thrown(() => resolveStateDir({ cwd: '/', env }));
      expect(isWardError(err) && err.code).toBe('ERR_STATE_INVALID');
      expect(err.message).toContain('no .ward/ found upwards from /');
      expect(err.message).toContain('needs HOME');
      expect(isWardError(err) && err.hint).toContain('--state-dir /absolute/path/.ward');
      expect(isWardError(err) && err.hint).toContain('WARD_STATE_DIR');
    }
  });

  it('refuses a per-user directory this user cannot create', () => {
    if (process.getuid?.() === 0) {
      // root can create anything: check with a HOME below a regular file instead.
      const file = join(bareDir('ward-home-'), 'file');
      writeFileSync(file, '');
      expect(() => resolveStateDir({ cwd: '/', env: { HOME: file } })).toThrow(/cannot be created by this user/);
    } else {
      expect(() => resolveStateDir({ cwd: '/', env: { HOME: '/' } })).toThrow(/cannot be created by this user/);
    }
  });
});

describe('~ expansion', () => {
  it('expands ~ and ~/… in --state-dir and WARD_STATE_DIR (MCP client configs pass them literally)', () => {
    const home = bareDir('ward-home-');
    expect(expandHome('~', { HOME: home })).toBe(home);
    expect(expandHome('~/.ward', { HOME: home })).toBe(join(home, '.ward'));
    expect(expandHome('/abs/~/x', { HOME: home })).toBe('/abs/~/x');
    expect(resolveStateDir({ cwd: '/', env: { HOME: home }, explicit: '~/.ward' }).dir).toBe(join(home, '.ward'));
    expect(resolveStateDir({ cwd: '/', env: { HOME: home, WARD_STATE_DIR: '~/state' } }).dir).toBe(join(home, 'state'));
  });

  it('refuses ~user and ~ without a HOME rather than making a directory named ~', () => {
    expect(() => expandHome('~bob/.ward', { HOME: '/home/alice' })).toThrow(/not ~user/);
    expect(() => resolveStateDir({ cwd: '/', env: { HOME: '' }, explicit: '~/.ward' })).toThrow(/cannot expand ~ because HOME is empty/);
  });
});

describe('the CLI', () => {
  it('one key and one trace directory for a project, whatever the subdirectory', () => {
    const { root, sub, home } = layout();
    const env = { HOME: home };
    const ids = new Set<string>();
    for (const cwd of [root, join(root, 'a'), sub]) {
      const r = ward(['gate', 'eval', '--policy', POLICY, '--intent', INTENT('read-report'), '--json'], { cwd, env });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).trace_path.startsWith(join(root, '.ward', 'traces'))).toBe(true);
      const listed = ward(['keys', 'list', '--json'], { cwd, env });
      ids.add(listed.stdout);
    }
    expect(ids.size).toBe(1);
    const keys = JSON.parse([...ids][0]!).keys as { key_id: string; path: string }[];
    expect(keys).toHaveLength(1);
    expect(keys[0]!.path).toBe(join(root, '.ward', 'keys', 'ward_public.key'));
    expect(existsSync(join(sub, '.ward'))).toBe(false);
    expect(existsSync(join(root, 'a', '.ward'))).toBe(false);
    expect(existsSync(join(home, '.local'))).toBe(false);
  });

  it('launched as Claude Desktop launches servers (cwd /, empty HOME), the proxy exits with a clear error, not EACCES', () => {
    const r = ward(['mcp', 'proxy', '--policy', POLICY, '--', process.execPath, '-e', ''], { cwd: '/', env: { HOME: '', XDG_STATE_HOME: '' } });
    expect(r.code).toBe(6);
    expect(r.stderr).not.toContain('EACCES');
    expect(r.stderr).toContain('no state directory: no .ward/ found upwards from /');
    expect(r.stderr).toContain('--state-dir /absolute/path/.ward');
    const gate = ward(['gate', 'eval', '--policy', POLICY, '--intent', INTENT('read-report'), '--json'], { cwd: '/', env: { HOME: '', XDG_STATE_HOME: '' } });
    expect(gate.code).toBe(6);
    expect(JSON.parse(gate.stdout)).toMatchObject({ ok: false, error_code: expect.any(String) });
    expect(gate.stdout).toContain('no state directory');
  });

  it('the same launch with .ward/ beside the policy uses it; "--state-dir ~/.ward" expands', () => {
    const project = bareDir('ward-sd-proj-');
    mkdirSync(join(project, '.ward'));
    const policy = join(project, 'policy.yaml');
    writeFileSync(policy, readFileSync(POLICY));
    const beside = ward(['gate', 'eval', '--policy', policy, '--intent', INTENT('read-report'), '--json'], { cwd: '/', env: { HOME: '' } });
    expect(beside.code, beside.stdout + beside.stderr).toBe(0);
    expect(JSON.parse(beside.stdout).trace_path.startsWith(join(project, '.ward', 'traces'))).toBe(true);

    const home = bareDir('ward-home-');
    const tilde = ward(['gate', 'eval', '--state-dir', '~/.ward', '--policy', POLICY, '--intent', INTENT('read-report'), '--json'], { cwd: '/', env: { HOME: home } });
    expect(tilde.code, tilde.stdout + tilde.stderr).toBe(0);
    expect(JSON.parse(tilde.stdout).trace_path.startsWith(join(home, '.ward', 'traces'))).toBe(true);
    expect(existsSync(join('/', '~'))).toBe(false);
  });

  it('an IO error under the state directory names it and why it was chosen', () => {
    const { root, home } = layout();
    writeFileSync(join(root, '.ward', 'keys'), 'a file where the key directory belongs');
    const r = ward(['gate', 'eval', '--policy', POLICY, '--intent', INTENT('read-report')], { cwd: join(root, 'a'), env: { HOME: home } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`state directory: ${join(root, '.ward')} (found upwards from ${join(root, 'a')})`);
    expect(r.stderr).toContain('--state-dir');
  });

  it('ward doctor says which state directory is used and why', () => {
    const { root, sub, home } = layout();
    const found = JSON.parse(ward(['doctor', '--json'], { cwd: sub, env: { HOME: home } }).stdout);
    expect(found).toMatchObject({ state_dir: join(root, '.ward'), state_dir_source: 'found', state_dir_reason: `found upwards from ${sub}` });
    const check = found.checks.find((c: { name: string }) => c.name === 'state_dir');
    expect(check.message).toContain(`${join(root, '.ward')} (found upwards from ${sub})`);

    const bare = bareDir('ward-sd-cwd-');
    const user = JSON.parse(ward(['doctor', '--json'], { cwd: bare, env: { HOME: home, XDG_STATE_HOME: '' } }).stdout);
    expect(user).toMatchObject({ state_dir: join(home, '.local', 'state', 'ward'), state_dir_source: 'user' });
    expect(user.checks.find((c: { name: string }) => c.name === 'state_dir').message).toContain('every project without its own .ward/ shares it');

    const flagged = JSON.parse(ward(['doctor', '--json', '--state-dir', '~/x'], { cwd: bare, env: { HOME: home } }).stdout);
    expect(flagged).toMatchObject({ state_dir: join(home, 'x'), state_dir_source: 'flag', state_dir_reason: '--state-dir' });
    const env = JSON.parse(ward(['doctor', '--json'], { cwd: bare, env: { HOME: home, WARD_STATE_DIR: '~/y' } }).stdout);
    expect(env).toMatchObject({ state_dir: join(home, 'y'), state_dir_source: 'env' });

    const none = ward(['doctor'], { cwd: '/', env: { HOME: '', XDG_STATE_HOME: '' } });
    expect(none.stdout).toMatch(/FAIL\s+state_dir\s+no state directory: no \.ward\/ found upwards from \//);
    expect(none.stdout).toContain('--state-dir /absolute/path/.ward');
  });

  it('ward init creates .ward/ (0700, contents ignored by git) so the project has one', () => {
    const project = bareDir('ward-init-');
    const home = bareDir('ward-home-');
    const r = ward(['init', '--json'], { cwd: project, env: { HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state_dir: '.ward', state_dir_created: true });
    expect(statSync(join(project, '.ward')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(project, '.ward', '.gitignore'), 'utf8')).toContain('*');
    mkdirSync(join(project, 'src'));
    const eval1 = ward(['gate', 'eval', '--policy', '../.ward.yaml', '--intent', INTENT('read-report'), '--json'], { cwd: join(project, 'src'), env: { HOME: home } });
    expect(JSON.parse(eval1.stdout).trace_path.startsWith(join(project, '.ward', 'traces'))).toBe(true);
    const again = ward(['init', '--force'], { cwd: project, env: { HOME: home } });
    expect(again.stdout).toContain('kept .ward/');
  });

  it('a proxy started as Claude Desktop starts it (cwd /, empty HOME) uses .ward/ beside the policy; its approve command works pasted anywhere', async () => {
    const project = bareDir('ward-sd-desktop-');
    mkdirSync(join(project, '.ward'));
    const policy = writePolicy(project);
    const note = join(project, 'doomed.txt');
    writeFileSync(note, 'still here');
    const raw = new RawProxy(['--policy', policy], node(TINY), '/', { HOME: '', XDG_STATE_HOME: '' });
    try {
      await raw.initialize();
      raw.call(1, 'delete_note', { path: note });
      const first = (await raw.response(1))['result'] as { isError: boolean; _meta: { ward: Record<string, string> } };
      expect(first.isError).toBe(true);
      const w = first._meta.ward;
      expect(w['verdict']).toBe('require_approval');
      expect(w['approve_command']).toContain(`--state-dir ${join(project, '.ward')} `);
      expect(w['approve_command']).toContain(`--out ${join(project, '.ward', 'approvals')}/approval_`);
      const minted = spawnSync('sh', ['-c', w['approve_command']!], { cwd: bareDir(), encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
      expect(minted.status, minted.stderr).toBe(0);
      raw.call(2, 'delete_note', { path: note });
      const second = (await raw.response(2))['result'] as { isError?: boolean };
      expect(second.isError).toBeFalsy();
      expect(existsSync(note)).toBe(false);
    } finally {
      raw.end();
      await raw.exited;
    }
    expect(existsSync(join(project, '.ward', 'traces'))).toBe(true);
  });
});
