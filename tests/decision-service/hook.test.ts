import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, tempDir, ward } from '../cli/run.js';

/**
 * `ward hook claude-code` through the real CLI (`node bin/ward.js`), fed Claude Code hook inputs in
 * the real format (fixtures/claude-code/*.json: the fields Claude Code sends, per event and tool,
 * written from the hooks reference; no live Claude Code session is involved). Each case
 * asserts what Claude Code acts on: the exit code and the exact JSON on stdout.
 */
const cc = (name: string) => fixture(join('claude-code', name));
const POLICY = cc('policy.yaml');
const TRACE = '[0-9a-f]{24}';
const INTENT = '[0-9a-f]{64}';

interface HookRun {
  code: number;
  stdout: string;
  stderr: string;
  json: unknown;
  state: string;
}

function hook(input: string, args?: string[]): HookRun {
  const cwd = tempDir('ward-hook-');
  const state = join(cwd, '.ward');
  const r = ward(['hook', 'claude-code', ...(args ?? ['--policy', POLICY, '--state-dir', state])], { cwd, input });
  let json: unknown;
  try {
    json = r.stdout.trim() === '' ? undefined : JSON.parse(r.stdout);
  } catch {
    json = Symbol('not JSON');
  }
  return { ...r, json, state };
}

const recorded = (name: string) => readFileSync(cc(`${name}.json`), 'utf8');

function traces(state: string): string[] {
  try {
    return readdirSync(join(state, 'traces'));
  } catch {
    return [];
  }
}

const pre = (decision: string, reason: RegExp) => ({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: expect.stringMatching(reason) },
});
const BLOCK_EXEC = new RegExp(
  `^Ward: blocked by policy \\(destructive_apply_requires_approval, matched_rule_block_exec\\)\\. Do not retry this call unchanged; trace ${TRACE}$`,
);
const APPROVE_WRITES = new RegExp(
  `^Ward: approval required by policy \\(matched_rule_approve_writes\\); ask the user before running this tool call; trace ${TRACE}, intent ${INTENT}$`,
);
const ALLOW_READS = new RegExp(`^Ward: allowed by policy \\(matched_rule_allow_reads\\); trace ${TRACE}$`);

describe('ward hook claude-code: recorded PreToolUse inputs', () => {
  const cases: [string, string, RegExp][] = [
    ['pre-bash-rm', 'deny', BLOCK_EXEC],
    ['pre-write', 'ask', APPROVE_WRITES],
    ['pre-edit', 'ask', APPROVE_WRITES],
    ['pre-read', 'allow', ALLOW_READS],
    ['pre-read-secret', 'deny', new RegExp(`^Ward: blocked by policy \\(matched_rule_block_secrets\\)\\. Do not retry this call unchanged; trace ${TRACE}$`)],
    ['pre-webfetch', 'allow', new RegExp(`^Ward: allowed by policy \\(matched_rule_allow_docs\\); trace ${TRACE}$`)],
    [
      'pre-webfetch-other',
      'deny',
      new RegExp(
        `^Ward: blocked by policy \\(endpoint_constraint_violation, endpoint_domain_not_allowlisted, matched_rule_allow_docs\\)\\. Do not retry this call unchanged; trace ${TRACE}$`,
      ),
    ],
    ['pre-mcp-read', 'allow', ALLOW_READS],
    ['pre-mcp-write', 'ask', APPROVE_WRITES],
    ['pre-mcp-exec', 'deny', BLOCK_EXEC],
  ];
  for (const [name, decision, reason] of cases) {
    it(`${name}: ${decision}, exit 0, one signed trace`, () => {
      const r = hook(recorded(name));
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toEqual(pre(decision, reason));
      expect(r.stdout.endsWith('}\n')).toBe(true);
      expect(traces(r.state)).toHaveLength(1);
    });
  }

  it('the traces verify', () => {
    const r = hook(recorded('pre-bash-rm'));
    const v = ward(['trace', 'verify', join(r.state, 'traces'), '--state-dir', r.state], { cwd: tempDir() });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('a dry_run verdict denies and says it was a dry run', () => {
    const r = hook(
      JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Deploy', tool_input: {}, session_id: 's' }),
      ['--policy', fixture('mcp-compat/policy.yaml'), '--state-dir', join(tempDir(), '.ward')],
    );
    expect(r.code).toBe(0);
    expect(r.json).toEqual(pre('deny', /^Ward: dry run — the policy evaluates this call as dry_run, so it is not executed \(matched_rule_dry_run_deploys\); trace /));
  });
});

describe('ward hook claude-code: PostToolUse and PermissionRequest get their own reply shapes', () => {
  it('PermissionRequest: blocked → decision.behavior deny with the reason as message', () => {
    const r = hook(recorded('perm-bash-rm'));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: expect.stringMatching(BLOCK_EXEC) } } });
  });

  it('PermissionRequest: allowed → decision.behavior allow', () => {
    const r = hook(recorded('perm-read'));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  });

  it('PermissionRequest: approval required → no decision (Claude Code asks the user), the reason as systemMessage', () => {
    const r = hook(recorded('perm-write'));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ systemMessage: expect.stringMatching(APPROVE_WRITES) });
  });

  it('PostToolUse: blocked → top-level decision block with a reason (the tool already ran)', () => {
    const r = hook(recorded('post-bash-rm'));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      decision: 'block',
      reason: expect.stringMatching(
        new RegExp(`^Ward: blocked by policy \\(destructive_apply_requires_approval, matched_rule_block_exec\\); trace ${TRACE}\\. The tool has already run: tell the user, and do not repeat it$`),
      ),
    });
    expect(r.json).not.toHaveProperty('hookSpecificOutput.permissionDecision');
  });

  it('PostToolUse: allowed → no decision', () => {
    const r = hook(recorded('post-read'));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({});
    expect(traces(r.state)).toHaveLength(1);
  });

  it('PostToolUse: approval required → additionalContext for Claude, no block', () => {
    const r = hook(recorded('post-write'));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PostToolUse',
        additionalContext: expect.stringMatching(/^Ward: this call needs approval under the policy \(matched_rule_approve_writes\); it has already run/),
      },
    });
  });
});

const OPTIONS =
  '--policy, --context-envelope, --profile, --identity, --risk-class, --arg-source, --job-root, --kill-switch-state, --export-log-out, --export-otel-out, --key-mode, --private-key, --private-key-env, --state-dir, --otel';
const unknown = (flag: string) => `unknown option "${flag}" (options: ${OPTIONS})`;
const FAIL = 'Ward: denied because the hook could not evaluate this call (fail closed): ';
const CONFIG = '; fix the hook command in your Claude Code settings';

describe('ward hook claude-code: every failure is a deny, never another exit code', () => {
  const state = () => join(tempDir(), '.ward');
  const argCases: [string, string[], string][] = [
    ['an unknown option', ['--policy', POLICY, '--polcy', 'x'], unknown('--polcy')],
    ['a bad choice', ['--policy', POLICY, '--profile', 'strict'], 'option --profile "strict" is not one of standard, oss-prod'],
    ['a bad --key-mode', ['--key-mode', 'ephemeral', '--policy', POLICY], 'option --key-mode "ephemeral" is not one of default, dev, prod'],
    ['a missing option value at the end', ['--policy'], 'option --policy <file> needs a value'],
    ['a missing option value before another option', ['--policy', '--state-dir', '/tmp/x'], 'option --policy <file> needs a value'],
    [
      'an extra positional (unquoted $CLAUDE_PROJECT_DIR with a space)',
      ['--policy', '/home/me/My', 'Project/.ward/policy.yaml'],
      'unexpected argument "Project/.ward/policy.yaml" (an unquoted path with a space? quote "$CLAUDE_PROJECT_DIR/...")',
    ],
    ['no --policy', [], '--policy <file> is required'],
    ['an option given twice', ['--policy', POLICY, '--policy', POLICY], 'option --policy given more than once'],
    ['a value given to a switch', ['--policy', POLICY, '--otel=1'], 'option --otel takes no value'],
    ['an empty value', ['--policy='], 'option --policy <file> needs a value (got an empty string)'],
    ['a program option (--version)', ['--policy', POLICY, '--version'], unknown('--version')],
    ['a program option (-v)', ['-v', '--policy', POLICY], unknown('-v')],
    ['--json', ['--policy', POLICY, '--json'], unknown('--json')],
  ];
  for (const [what, args, message] of argCases) {
    it(`${what}: PreToolUse deny JSON, exit 0, no trace`, () => {
      const s = state();
      const r = hook(recorded('pre-read'), ['--state-dir', s, ...args]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toEqual({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: FAIL + message + CONFIG },
        systemMessage: `Ward hook failed closed: ${message}${CONFIG}`,
      });
      expect(r.stderr).toContain(message);
      expect(traces(s)).toHaveLength(0);
    });
  }

  it('a command-line error answers in the shape of the event read from stdin', () => {
    const perm = hook(recorded('perm-read'), ['--policy', POLICY, '--bogus']);
    expect(perm.code).toBe(0);
    expect(perm.json).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: `${FAIL}${unknown('--bogus')}${CONFIG}` } },
      systemMessage: `Ward hook failed closed: ${unknown('--bogus')}${CONFIG}`,
    });
    const post = hook(recorded('post-read'), ['--policy', POLICY, 'extra']);
    expect(post.code).toBe(0);
    expect(post.json).toMatchObject({ decision: 'block', reason: expect.stringContaining(`${FAIL}unexpected argument "extra"`) });
  });

  it('a command-line error with unreadable input: exit 2, the reason on stderr, nothing on stdout', () => {
    const r = hook('', ['--policy', POLICY, '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${FAIL}${unknown('--bogus')}${CONFIG}`);
  });

  const inputCases: [string, string, string][] = [
    ['empty stdin', '', 'empty hook input on stdin'],
    ['whitespace only', ' \n', 'empty hook input on stdin'],
    ['not JSON', '{"tool_name":', 'malformed hook input'],
    ['not an object', '[1,2]', 'malformed hook input: expected a JSON object'],
    ['a non-string event', '{"hook_event_name":7,"tool_name":"Read"}', 'malformed hook input: hook_event_name must be a string'],
    ['an event Ward does not answer', '{"hook_event_name":"UserPromptSubmit","prompt":"hi"}', 'unsupported hook event "UserPromptSubmit"'],
  ];
  for (const [what, input, message] of inputCases) {
    it(`${what}: exit 2 with the reason on stderr (blocks in every event), no trace`, () => {
      const s = state();
      const r = hook(input, ['--policy', POLICY, '--state-dir', s]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(FAIL + message);
      expect(traces(s)).toHaveLength(0);
    });
  }

  it('input the strict reader refuses (a repeated key) but whose event is readable: a deny in that event\'s shape', () => {
    const r = hook('{"hook_event_name":"PermissionRequest","tool_name":"Read","tool_input":{"file_path":"/workspace/README.md"},"tool_name":"Bash"}');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: expect.stringContaining(`${FAIL}malformed hook input`) } },
    });
    expect((r.json as { hookSpecificOutput: { decision: { message: string } } }).hookSpecificOutput.decision.message).toContain('duplicate key "tool_name"');
    expect(traces(r.state)).toHaveLength(0);
  });

  const evalCases: [string, string, string[] | undefined, RegExp][] = [
    ['no tool name', '{"hook_event_name":"PreToolUse","tool_input":{}}', undefined, /decode claude_code payload: tool_name is required/],
    ['tool_input that is not JSON', '{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":"{broken"}', undefined, /tool_input is not valid JSON/],
    ['a missing policy file', recorded('pre-read'), ['--policy', 'nope.yaml'], /nope\.yaml/],
    ['an unreadable signing key', recorded('pre-read'), ['--policy', POLICY, '--key-mode', 'prod', '--private-key', '/nonexistent/key'], /key/i],
  ];
  for (const [what, input, args, reason] of evalCases) {
    it(`${what}: PreToolUse deny JSON with the reason, exit 0`, () => {
      const r = hook(input, args ? [...args, '--state-dir', state()] : undefined);
      expect(r.code, r.stderr).toBe(0);
      const out = r.json as { hookSpecificOutput: Record<string, string>; systemMessage: string };
      expect(out.hookSpecificOutput.hookEventName).toBe('PreToolUse');
      expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
      expect(out.hookSpecificOutput.permissionDecisionReason.startsWith(FAIL)).toBe(true);
      expect(out.hookSpecificOutput.permissionDecisionReason).toMatch(reason);
      expect(out.systemMessage).toMatch(/^Ward hook failed closed: /);
    });
  }

  it('an evaluation failure in PermissionRequest and PostToolUse is a deny / block of that event', () => {
    const perm = hook(recorded('perm-write'), ['--policy', 'nope.yaml', '--state-dir', state()]);
    expect(perm.code).toBe(0);
    expect(perm.json).toMatchObject({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: expect.stringContaining(FAIL) } } });
    const post = hook(recorded('post-write'), ['--policy', 'nope.yaml', '--state-dir', state()]);
    expect(post.code).toBe(0);
    expect(post.json).toMatchObject({ decision: 'block', reason: expect.stringContaining(FAIL) });
  });

  it('a misspelt hook name, or an option before it, is a deny too (not a commander error)', () => {
    for (const [args, message] of [
      [['hook', 'claude_code', '--policy', POLICY], 'unknown hook "claude_code" (use: ward hook claude-code --policy <file> ...)'],
      [['hook', '--policy', POLICY, 'claude-code'], 'option "--policy" before the hook name (use: ward hook claude-code --policy <file> ...)'],
    ] as const) {
      const r = ward([...args], { cwd: tempDir(), input: recorded('pre-read') });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: FAIL + message + CONFIG },
        systemMessage: `Ward hook failed closed: ${message}${CONFIG}`,
      });
    }
  });

  it('--help prints help, but as a hook (stdin not a terminal) it exits 2 so the call is blocked', () => {
    const r = hook(recorded('pre-read'), ['--policy', POLICY, '--help']);
    expect(r.stdout).toContain('Usage: ward hook claude-code');
    expect(r.stdout).toContain('--policy <file>');
    expect(r.code).toBe(2);
  });
});
