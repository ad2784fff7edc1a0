// `ward init --agent claude-code`: a starter policy, .ward/, and Ward's hook in the project's
// Claude Code settings — merged, idempotent, checked by doctor — and the hook it registers works
// when Claude Code runs it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, tempDir, ward } from '../cli/run.js';

const settingsOf = (dir: string) => JSON.parse(readFileSync(join(dir, '.claude', 'settings.json'), 'utf8')) as { hooks: { PreToolUse: { matcher: string; hooks: Record<string, unknown>[] }[] }; model?: string };

/** Run the registered command as Claude Code does: through a shell, with CLAUDE_PROJECT_DIR, the event on stdin. */
function runHook(dir: string, event: Record<string, unknown>) {
  const command = settingsOf(dir).hooks.PreToolUse.flatMap((g) => g.hooks).find((h) => h['type'] === 'command')!['command'] as string;
  const r = spawnSync('sh', ['-c', command], {
    cwd: join(dir, 'sub'),
    input: JSON.stringify({ session_id: 's1', cwd: dir, hook_event_name: 'PreToolUse', ...event }),
    encoding: 'utf8',
    env: { ...process.env, CLAUDE_PROJECT_DIR: dir, WARD_STATE_DIR: '' },
  });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } }).hookSpecificOutput;
}

describe('ward init --agent claude-code', () => {
  it('merges its hook into existing settings, keeps the rest, and a second run changes nothing', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.claude'));
    writeFileSync(join(dir, '.claude', 'settings.json'), JSON.stringify({ model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] }] } }));
    const first = ward(['init', '--agent', 'claude-code', '--json'], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).files).toEqual([
      { path: '.ward.yaml', action: 'written' },
      { path: '.claude/settings.json', action: 'updated' },
    ]);
    const settings = settingsOf(dir);
    expect(settings.model).toBe('opus');
    expect(settings.hooks.PreToolUse[0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] });
    const hook = settings.hooks.PreToolUse[1]!;
    expect(hook.matcher).toBe('*');
    expect(hook.hooks[0]!['command']).toMatch(/ '?\/.*bin\/ward\.js'? hook claude-code --policy "\$CLAUDE_PROJECT_DIR\/\.ward\.yaml" --state-dir "\$CLAUDE_PROJECT_DIR\/\.ward" \|\| exit 2$/);
    expect(existsSync(join(dir, '.ward', '.gitignore'))).toBe(true);
    const before = readFileSync(join(dir, '.claude', 'settings.json'), 'utf8');
    const second = ward(['init', '--agent', 'claude-code', '--json'], { cwd: dir });
    expect(JSON.parse(second.stdout).files).toEqual([
      { path: '.ward.yaml', action: 'kept' },
      { path: '.claude/settings.json', action: 'unchanged' },
    ]);
    expect(readFileSync(join(dir, '.claude', 'settings.json'), 'utf8')).toBe(before);
  });

  it('the registered hook works as Claude Code runs it: reads and fetches pass, commands ask, secrets are denied', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    expect(ward(['init', '--agent', 'claude-code'], { cwd: dir }).code).toBe(0);
    expect(readFileSync(join(dir, '.ward.yaml'), 'utf8')).toBe(readFileSync(join(REPO, 'policies', 'baseline-lowrisk.yaml'), 'utf8'));
    expect(runHook(dir, { tool_name: 'Read', tool_input: { file_path: join(dir, 'README.md') } }).permissionDecision).toBe('allow');
    expect(runHook(dir, { tool_name: 'WebFetch', tool_input: { url: 'https://docs.python.org/3/', prompt: 'summarize the page' } }).permissionDecision).toBe('allow');
    expect(runHook(dir, { tool_name: 'Bash', tool_input: { command: 'ls' } }).permissionDecision).toBe('ask');
    expect(runHook(dir, { tool_name: 'Read', tool_input: { file_path: '/etc/shadow' } }).permissionDecision).toBe('deny');
  });

  it('with the high-risk baseline the hook supplies argument provenance and WebFetch\'s prompt is no target', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    expect(ward(['init', '--agent', 'claude-code', '--template', 'baseline-highrisk'], { cwd: dir }).code).toBe(0);
    const fetch = runHook(dir, { tool_name: 'WebFetch', tool_input: { url: 'https://docs.python.org/3/', prompt: 'summarize the page' } });
    // Decided by the policy's network rule (here: no DNS in the test machine, a model-written
    // destination), not refused for what the hook failed to say.
    expect(fetch.permissionDecisionReason).toContain('matched_rule_approve_network');
    expect(fetch.permissionDecisionReason).not.toMatch(/fail_closed_missing_arg_provenance|fail_closed_endpoint_class_unknown/);
  });

  it('--hook http registers the daemon endpoint with onFailure block; --dry-run writes nothing', () => {
    const dir = tempDir();
    const dry = ward(['init', '--agent', 'claude-code', '--hook', 'http', '--dry-run', '--json'], { cwd: dir });
    expect(dry.code, dry.stderr).toBe(0);
    expect(existsSync(join(dir, '.claude'))).toBe(false);
    expect(existsSync(join(dir, '.ward.yaml'))).toBe(false);
    const hook = (JSON.parse(dry.stdout) as { settings: ReturnType<typeof settingsOf> }).settings.hooks.PreToolUse[0]!.hooks[0]!;
    expect(hook).toEqual({
      type: 'http',
      url: 'http://127.0.0.1:7433/v1/hooks/claude-code',
      headers: { Authorization: 'Bearer $WARD_DAEMON_TOKEN' },
      allowedEnvVars: ['WARD_DAEMON_TOKEN'],
      timeout: 10,
      onFailure: 'block',
    });
  });

  it('doctor fails a Ward hook that would not block on failure, and passes the one init writes', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.claude'));
    writeFileSync(join(dir, '.claude', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'npx ward hook claude-code --policy .ward.yaml' }] }] } }));
    const bad = JSON.parse(ward(['doctor', '--json'], { cwd: dir }).stdout) as { checks: { name: string; status: string; message: string }[] };
    const check = bad.checks.find((c) => c.name === 'claude_code_hook')!;
    expect(check.status).toBe('fail');
    expect(check.message).toContain('`|| exit 2`');
    expect(check.message).toContain('npx ward');
    expect(ward(['init', '--agent', 'claude-code'], { cwd: dir }).code).toBe(0);
    const good = JSON.parse(ward(['doctor', '--json'], { cwd: dir }).stdout) as typeof bad;
    expect(good.checks.find((c) => c.name === 'claude_code_hook')!.status).toBe('pass');
  });
});
