// Mistakes a user makes on the command line get an error that names the input and the fix.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from './run.js';

const POLICY = join(REPO, 'policies', 'baseline-highrisk.yaml');
const INTENT = join(REPO, 'examples', 'quickstart', 'read-report.json');

describe('policy input', () => {
  it('refuses an empty policy on stdin or in a file (exit 6), naming the source', () => {
    const cwd = tempDir();
    const stdin = ward(['policy', 'validate', '-'], { cwd, input: '' });
    expect(stdin.code).toBe(6);
    expect(stdin.stderr).toContain('error: stdin: parse policy yaml: the policy is empty');
    writeFileSync(join(cwd, 'blank.yaml'), '# nothing yet\n\n');
    const file = ward(['gate', 'eval', '--policy', 'blank.yaml', '--intent', INTENT, '--json'], { cwd });
    expect(file.code).toBe(6);
    expect(JSON.parse(file.stdout)).toMatchObject({ error: 'parse policy yaml: the policy is empty', source: join(cwd, 'blank.yaml') });
  });

  it('reports an unclosed bracket or quote on the line where it opened, in the named file', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'p.yaml'), 'default_verdict: block\nrules:\n  - name: a\n    effect: "allow\n  - name: b\n    effect: block\n');
    const quote = ward(['policy', 'validate', 'p.yaml'], { cwd });
    expect(quote.code).toBe(6);
    expect(quote.stderr).toContain('p.yaml: parse policy yaml: [4:13] this " quote is never closed (the parser stopped at [7:1]');
    writeFileSync(join(cwd, 'q.yaml'), 'default_verdict: block\nfail_closed: {enabled: true\nrules: []\n');
    const brace = ward(['policy', 'validate', 'q.yaml'], { cwd });
    expect(brace.stderr).toContain('q.yaml: parse policy yaml: [2:14] this { is never closed');
  });
});

describe('options', () => {
  it('an option whose value is missing is named, not reported as "too many arguments"', () => {
    const r = ward(['gate', 'eval', '--policy', '--intent', INTENT], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("option '--policy <file>' needs a value, but the next argument is the option '--intent'");
    expect(r.stderr).not.toContain('too many arguments');
  });

  it('a --state-dir whose parent does not exist is refused; one inside an existing directory is created', () => {
    const cwd = tempDir();
    const wrong = join(cwd, 'no', 'such', '.ward');
    const refused = ward(['gate', 'eval', '--policy', POLICY, '--intent', INTENT, '--state-dir', wrong], { cwd });
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain(`--state-dir ${wrong}: neither it nor its parent directory ${join(cwd, 'no', 'such')} exists`);
    expect(existsSync(wrong)).toBe(false);
    const env = ward(['gate', 'eval', '--policy', POLICY, '--intent', INTENT], { cwd, env: { WARD_STATE_DIR: wrong } });
    expect(env.code).toBe(6);
    expect(env.stderr).toContain('WARD_STATE_DIR');
    const fresh = join(cwd, 'state');
    const made = ward(['gate', 'eval', '--policy', POLICY, '--intent', INTENT, '--state-dir', fresh], { cwd });
    expect(made.code, made.stderr).toBe(0);
    expect(existsSync(join(fresh, 'traces'))).toBe(true);
  });
});

describe('paths in an MCP client configuration (no shell)', () => {
  it('mcp proxy expands ~ in its path options instead of reading <cwd>/~/…', () => {
    const home = tempDir('ward-home-');
    writeFileSync(join(home, 'policy.yaml'), '# nothing yet\n');
    const r = ward(['mcp', 'proxy', '--policy', '~/policy.yaml', '--state-dir', join(home, '.ward'), '--', process.execPath, '-e', '0'], { cwd: '/', env: { HOME: home } });
    expect(r.code).toBe(6);
    // The file was found (it is empty), at the home directory, not at /~/policy.yaml.
    expect(r.stderr).toContain(`error: ${join(home, 'policy.yaml')}: parse policy yaml: the policy is empty`);
  });
});

describe('doctor --json', () => {
  it('says ok beside status', () => {
    const r = ward(['doctor', '--json'], { cwd: tempDir() });
    const out = JSON.parse(r.stdout) as { ok: boolean; status: string };
    expect(out.ok).toBe(out.status !== 'fail');
    expect(typeof out.ok).toBe('boolean');
  });
});

describe('standard input over the input limit', () => {
  it('a hook event over 16 MiB is a deny in the host’s shape, read no further than the limit', () => {
    const cwd = tempDir();
    const huge = JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: '/tmp/x', pad: 'a'.repeat(17 * 1024 * 1024) } });
    // No event could be read: Claude Code blocks on exit 2 with the reason on stderr.
    const claude = ward(['hook', 'claude-code', '--policy', POLICY], { cwd, input: huge });
    expect(claude.code).toBe(2);
    expect(claude.stdout).toBe('');
    expect(claude.stderr).toContain('read stdin: standard input is over the 16 MiB input limit');
    // Copilot never blocks on an exit code: the deny is on stdout.
    const copilot = ward(['hook', 'copilot', '--policy', POLICY], { cwd, input: huge });
    expect(copilot.code).toBe(0);
    expect(JSON.parse(copilot.stdout)).toMatchObject({ permissionDecision: 'deny' });
  });

  it('an intent on stdin over 16 MiB is refused (exit 6)', () => {
    const r = ward(['gate', 'eval', '--policy', POLICY, '--intent', '-', '--json'], { cwd: tempDir(), input: `{"tool_name":"x","pad":"${'a'.repeat(17 * 1024 * 1024)}"}` });
    expect(r.code).toBe(6);
    expect(r.stdout + r.stderr).toContain('over the 16 MiB input limit');
  });
});
