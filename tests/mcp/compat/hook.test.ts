import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ward, tempDir } from '../../cli/run.js';
import { compat, POLICY } from './helpers.js';

interface Hook {
  hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string };
}

function hook(input: string, extra: string[] = [], cwd = tempDir('ward-hook-')) {
  const r = ward(['hook', 'claude-code', '--policy', POLICY, ...extra], { cwd, input });
  return { ...r, cwd, out: r.stdout ? (JSON.parse(r.stdout) as Hook) : undefined };
}

function traces(cwd: string): string[] {
  try {
    return readdirSync(join(cwd, '.ward', 'traces'));
  } catch {
    return [];
  }
}

describe('ward hook claude-code', () => {
  it('allows a read, with a verifying signed trace', () => {
    const r = hook(readFileSync(compat('hook-read.json'), 'utf8'));
    expect(r.code).toBe(0);
    expect(r.out!.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'allow' });
    expect(r.out!.hookSpecificOutput.permissionDecisionReason).toMatch(/^Ward: allowed by policy \(matched_rule_allow_reads\); trace [0-9a-f]{24}$/);
    expect(traces(r.cwd)).toHaveLength(1);
    const verify = ward(['trace', 'verify', '.ward/traces'], { cwd: r.cwd });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('denies a blocked Bash command', () => {
    const r = hook(readFileSync(compat('hook-bash.json'), 'utf8'));
    expect(r.code).toBe(0);
    expect(r.out!.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.out!.hookSpecificOutput.permissionDecisionReason).toMatch(/^Ward: blocked by policy \(.*matched_rule_block_exec\)\. Do not retry this call unchanged; trace /);
    expect(traces(r.cwd)).toHaveLength(1);
  });

  it('asks for a write that needs approval', () => {
    const r = hook(readFileSync(compat('hook-write.json'), 'utf8'));
    expect(r.out!.hookSpecificOutput.permissionDecision).toBe('ask');
    expect(r.out!.hookSpecificOutput.permissionDecisionReason).toMatch(/approval required by policy \(matched_rule_approve_writes\)/);
  });

  it('denies dry_run and says it was a dry run', () => {
    const r = hook(JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Deploy', tool_input: {}, session_id: 's' }));
    expect(r.out!.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.out!.hookSpecificOutput.permissionDecisionReason).toMatch(/^Ward: dry run/);
  });

  it('empty input denies (exit 0, valid hook JSON, no trace)', () => {
    const r = hook('');
    expect(r.code).toBe(0);
    expect(r.out!.hookSpecificOutput).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: 'Ward: denied because the hook could not evaluate this call (fail closed): empty hook input on stdin',
    });
    expect(r.stderr).toContain('empty hook input on stdin');
    expect(traces(r.cwd)).toHaveLength(0);
  });

  it('malformed input denies: not JSON, not an object, no tool name, wrong event', () => {
    for (const [input, reason] of [
      ['{"tool_name":', /malformed hook input/],
      ['[1,2]', /malformed hook input: expected a JSON object/],
      ['{"hook_event_name":"PreToolUse","tool_input":{}}', /decode claude_code payload: tool_name is required/],
      ['{"hook_event_name":"PostToolUse","tool_name":"Read"}', /unsupported hook event "PostToolUse"/],
      ['{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":"{broken"}', /tool_input is not valid JSON/],
    ] as const) {
      const r = hook(input);
      expect(r.code, input).toBe(0);
      expect(r.out!.hookSpecificOutput.permissionDecision, input).toBe('deny');
      expect(r.out!.hookSpecificOutput.permissionDecisionReason, input).toMatch(reason);
    }
  });

  it('a missing policy denies instead of crashing', () => {
    const cwd = tempDir();
    const r = ward(['hook', 'claude-code', '--policy', 'nope.yaml'], { cwd, input: readFileSync(compat('hook-read.json'), 'utf8') });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });
});
