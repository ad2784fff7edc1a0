import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from '../../cli/run.js';

/**
 * `ward hook claude-code` (the built CLI) under the shipped low-risk baseline, for paths the kernel
 * resolves differently from their text (issue 26): `..` after a /proc magic link is never cleaned
 * as text, whichever separator or URL form spells it.
 */
const BASELINE = join(REPO, 'policies', 'baseline-lowrisk.yaml');

function readDecision(filePath: string): { decision: string; reason: string } {
  const cwd = tempDir('ward-hook-paths-');
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
  const r = ward(['hook', 'claude-code', '--policy', BASELINE, '--state-dir', join(cwd, '.ward')], { cwd, input });
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
    '/proc/1/task/1/root/../etc/shadow',
  ])('denies %s as /etc/shadow', (path) => {
    expect(readDecision(path)).toEqual({ decision: 'deny', reason: expect.stringContaining('endpoint_path_denied') });
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
