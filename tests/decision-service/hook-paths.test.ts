import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from '../cli/run.js';

/**
 * `ward hook claude-code` (the built CLI) under the shipped low-risk baseline, for paths the kernel
 * resolves differently from their text (issue 26): `..` after a /proc magic link is never cleaned
 * as text, whichever separator or URL form spells it.
 */
const BASELINE = join(REPO, 'policies', 'baseline-lowrisk.yaml');

function readDecision(filePath: string, policy = BASELINE, cwd = tempDir('ward-hook-paths-')): { decision: string; reason: string } {
  const input = JSON.stringify({
    session_id: 's-1',
    transcript_path: join(cwd, 't.jsonl'),
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Read',
    tool_input: { file_path: filePath },
    tool_use_id: 'toolu_1',
  });
  const r = ward(['hook', 'claude-code', '--policy', policy, '--state-dir', join(cwd, '.ward')], { cwd, input });
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
  return { decision: out.hookSpecificOutput.permissionDecision, reason: out.hookSpecificOutput.permissionDecisionReason };
}

describe('ward hook claude-code: /proc magic links under baseline-lowrisk', () => {
  it('denies /etc/shadow itself (the reference point)', () => {
    expect(readDecision('/etc/shadow')).toEqual({ decision: 'deny', reason: expect.stringContaining('endpoint_path_denied') });
  });

  it.each([
    '/proc/self/root/../etc/shadow',
    '/proc/thread-self/root/../etc/shadow',
    '/proc/self/root/../../etc/./shadow',
    '\\proc\\self\\root\\..\\etc\\shadow',
  ])('denies %s as /etc/shadow', (path) => {
    expect(readDecision(path)).toEqual({ decision: 'deny', reason: expect.stringContaining('endpoint_path_denied') });
  });

  it('denies another process\'s root, as /etc/shadow or (where that root cannot be read) as not resolvable', () => {
    expect(readDecision('/proc/1/task/1/root/../etc/shadow')).toEqual({
      decision: 'deny',
      reason: expect.stringMatching(/endpoint_path_denied|endpoint_target_not_canonical/),
    });
  });

  it.each([
    'file:///proc/self/root/../etc/shadow',
    'file:///proc/self/root/%2e%2e/etc/shadow',
    '/proc/self/cwd/../../etc/shadow',
    '/proc/net/../root/../etc/shadow',
    '/proc/self/../self/root/etc/shadow',
    '/dev/fd/../root/../etc/shadow',
  ])('refuses %s (not reducible without guessing)', (path) => {
    expect(readDecision(path)).toEqual({ decision: 'deny', reason: expect.stringContaining('endpoint_target_not_canonical') });
  });
});

describe('ward hook claude-code: links resolved on the file system the tool uses', () => {
  const cwd = tempDir('ward-hook-links-');
  mkdirSync(join(cwd, 'secrets'));
  writeFileSync(join(cwd, 'secrets', 'key.pem'), 'SECRET');
  symlinkSync('secrets', join(cwd, 'pub'));
  linkSync(join(cwd, 'secrets', 'key.pem'), join(cwd, 'copy.pem'));
  writeFileSync(join(cwd, 'notes.md'), 'hello');
  const policy = join(cwd, 'policy.yaml');
  writeFileSync(
    policy,
    'default_verdict: allow\nrules: [{ name: files, effect: allow, match: { target_kinds: [path] }, endpoint: { path_denylist: ["secrets/**"] } }]\n',
  );

  it.each(['secrets/key.pem', 'pub/key.pem', 'copy.pem'])('denies %s (the denied file under another name)', (name) => {
    expect(readDecision(join(cwd, name), policy, cwd)).toEqual({ decision: 'deny', reason: expect.stringContaining('endpoint_path_denied') });
  });

  it('allows a plain file, and its trace records no link notes', () => {
    expect(readDecision(join(cwd, 'notes.md'), policy, cwd).decision).toBe('allow');
  });

  it('records the real path in the signed trace', () => {
    readDecision(join(cwd, 'pub', 'key.pem'), policy, cwd);
    const traces = readdirSync(join(cwd, '.ward', 'traces')).map((f) => JSON.parse(readFileSync(join(cwd, '.ward', 'traces', f), 'utf8')) as Record<string, unknown>);
    const notes = traces.flatMap((t) => (t['canonical_targets'] as Record<string, unknown>[] | undefined) ?? []);
    expect(notes).toContainEqual({ kind: 'path', value: join(cwd, 'pub', 'key.pem'), aliases: [join(cwd, 'secrets', 'key.pem')] });
  });
});
