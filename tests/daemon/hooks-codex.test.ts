// Codex's PreToolUse hook: the recorded events of fixtures/codex (written from Codex's hook schemas
// and hooks reference) replayed through `ward hook codex` and `POST /v1/hooks/codex`, asserting the
// exact reply and exit code, and that every reply is valid under Codex's published output schema
// (an unknown key there makes Codex fail open); the same calls decided through Claude Code's hook
// under one policy get the same verdict.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { applyPatchFiles, shellPatchFiles } from '../../src/agent-hooks/apply-patch.js';
import { REPO } from '../cli/run.js';
import { expectClaudeCodeAgrees, HOOK_POLICY as POLICY, replayThroughEndpoint, runHook, traces } from './hook-replay.js';

const FIXTURES = join(REPO, 'fixtures', 'codex');
const TRACE = '[0-9a-f]{24}';
const INTENT = '[0-9a-f]{64}';
const recorded = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const validOutput = new Ajv({ strict: false }).compile(JSON.parse(recorded('pre-tool-use.command.output.schema.json')) as object);

const BLOCK_SECRET = new RegExp(`^Ward: blocked by policy \\(matched_rule_block_secrets\\); trace ${TRACE}\\. Do not retry this call unchanged$`);
const BLOCK_EXEC = new RegExp(`^Ward: blocked by policy \\(destructive_apply_requires_approval, matched_rule_block_exec\\); trace ${TRACE}\\. Do not retry this call unchanged$`);
const APPROVAL = new RegExp(
  `^Ward: approval required by policy \\(matched_rule_approve_writes\\); trace ${TRACE}, intent ${INTENT}\\. Codex hooks cannot ask: the call was not run; ask the user to approve it outside this session$`,
);
const deny = (reason: RegExp) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(reason) } });

/** Each recorded event, the exact reply Codex reads (undefined: no output), and whether a trace is written. */
const CASES: [string, unknown, boolean][] = [
  ['pre-mcp-read.json', undefined, true],
  ['pre-bash-rm.json', deny(BLOCK_EXEC), true],
  ['pre-mcp-write.json', deny(APPROVAL), true],
  ['pre-apply-patch.json', deny(APPROVAL), true],
  ['pre-apply-patch-secret.json', deny(BLOCK_SECRET), true],
  ['permission-request.json', undefined, false],
  ['user-prompt-submit.json', undefined, false],
];

const command = (input: string, args?: string[]) => runHook('codex', input, args);

describe('ward hook codex: recorded events', () => {
  it.each(CASES)('%s', (name, reply, traced) => {
    const r = command(recorded(name));
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual(reply);
    if (r.json !== undefined) expect(validOutput(r.json), JSON.stringify(validOutput.errors)).toBe(true);
    expect(traces(r.state).length).toBe(traced ? 1 : 0);
  });

  it('fails closed: unreadable input exits 2 with the reason on stderr; a bad command line or an undecodable call is a deny', () => {
    const bad = command('{"hook_event_name": "PreToolUse", "tool_name": ');
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^Ward: denied because the hook could not evaluate this call \(fail closed\): malformed hook input/);
    const unnamed = command(JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'ls' } }));
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toMatch(/hook_event_name is required/);
    const typo = command(recorded('pre-mcp-read.json'), ['--polcy', POLICY]);
    expect(typo.code).toBe(0);
    expect(typo.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^Ward: denied because the hook could not evaluate this call \(fail closed\): unknown option "--polcy"/),
      },
      systemMessage: expect.stringMatching(/^Ward hook failed closed: unknown option/),
    });
    expect(validOutput(typo.json)).toBe(true);
    const event = JSON.parse(recorded('pre-apply-patch.json')) as { tool_input: { command: string } };
    event.tool_input.command = '*** Begin Patch\n*** End Patch\n';
    const empty = command(JSON.stringify(event));
    expect(empty.code).toBe(0);
    expect(empty.json).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(/patch names no file/) } });
    expect(traces(empty.state)).toEqual([]);
  });

  it('a bad command line on an event Ward does not decide keeps the prompt: a message, exit 0', () => {
    const r = command(recorded('user-prompt-submit.json'), ['--polcy', POLICY]);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ systemMessage: expect.stringMatching(/^Ward hook misconfigured: unknown option "--polcy"/) });
  });

  it('an apply_patch writes every file its headers name, moves included', () => {
    const patch = '*** Begin Patch\n*** Update File: a.ts\n@@\n-x\n+y\n*** Move to: b.ts\n*** Delete File: c.ts\n*** Add File: d/e.ts\n+z\n*** Update File: a.ts\n*** End Patch';
    expect(applyPatchFiles(patch)).toEqual(['a.ts', 'b.ts', 'c.ts', 'd/e.ts']);
    expect(applyPatchFiles('+*** Add File: not-a-header.ts')).toEqual([]);
    // Codex trims a line before reading a header: padding hides no file.
    expect(applyPatchFiles(' *** Begin Patch\n  *** Update File: .env \r\n@@\n-a\n+b\n\t*** Delete File: x.ts\n *** End Patch ')).toEqual(['.env', 'x.ts']);
    // Rust's trim also strips U+0085 (NEL), JavaScript's does not: NEL hides no header and no path.
    expect(applyPatchFiles('*** Begin Patch\n\u0085*** Update File: a.ts\n*** Add File: .env\u0085\n+x\n*** End Patch')).toEqual(['a.ts', '.env']);
  });
});

describe('an apply_patch padded with a whitespace only Rust trims', () => {
  it('is decided by the file Codex writes', () => {
    const event = JSON.parse(recorded('pre-apply-patch.json')) as { tool_input: { command: string } };
    // Before: only notes.md was a target (an approval), while Codex also wrote .env.
    event.tool_input.command = '*** Begin Patch\n*** Update File: notes.md\n@@\n-a\n+b\n\u0085*** Update File: .env\u0085\n@@\n-a\n+b\n*** End Patch\n';
    const r = command(JSON.stringify(event));
    expect(r.code).toBe(0);
    expect(r.json).toEqual(deny(BLOCK_SECRET));
    expect(traces(r.state).length).toBe(1);
  });
});

describe('a patch inside a shell command writes its files', () => {
  const bash = (command: string, cwd = '/workspace') => {
    const event = JSON.parse(recorded('pre-bash-rm.json')) as { cwd: string; tool_input: { command: string } };
    event.cwd = cwd;
    event.tool_input.command = command;
    return runHook('codex', JSON.stringify(event));
  };
  const patch = (file: string) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch\n`;
  const BLOCK_SECRET_EXEC = new RegExp(`^Ward: blocked by policy \\(destructive_apply_requires_approval, matched_rule_block_secrets\\); trace ${TRACE}\\.`);

  it('apply_patch <<EOF and cd <dir> && apply_patch <<EOF are decided with every file as a write target beside the command', () => {
    for (const [command, cwd] of [
      [`apply_patch <<'EOF'\n${patch('.env')}EOF`, '/workspace'],
      [`bash -lc "apply_patch <<'EOF'\n${patch('/workspace/.env')}EOF"`, '/elsewhere'],
      [`cd .. && apply_patch <<'EOF'\n${patch('.env')}EOF`, '/workspace/sub'],
      [`cd '/workspace' && apply_patch <<'EOF'\n${patch('.env')}EOF`, '/tmp'],
    ] as const) {
      const r = bash(command, cwd);
      expect(r.code, command).toBe(0);
      // Without the patch's files the call is only the command (matched_rule_block_exec).
      expect(r.json, command).toEqual(deny(BLOCK_SECRET_EXEC));
      expect(traces(r.state).length).toBe(1);
    }
  });

  it('a change of directory Ward cannot follow before the patch is a deny without a trace', () => {
    for (const command of [`cd /tmp; cd .. && apply_patch <<'EOF'\n${patch('.env')}EOF`, `pushd /tmp && apply_patch <<'EOF'\n${patch('.env')}EOF`, `cd "$HOME" && apply_patch <<'EOF'\n${patch('.env')}EOF`]) {
      const r = bash(command);
      expect(r.code, command).toBe(0);
      expect(r.json, command).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(/fail closed.*change of directory Ward cannot follow/) } });
      expect(validOutput(r.json)).toBe(true);
      expect(traces(r.state)).toEqual([]);
    }
  });

  it('shellPatchFiles: the cd directory prefixes relative files only; no patch, no files', () => {
    const fail = (m: string) => new Error(m);
    expect(shellPatchFiles('ls -la', fail)).toEqual([]);
    expect(shellPatchFiles(`cd pkg/ && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.ts\n+x\n*** Delete File: /etc/hosts\n*** End Patch\nEOF`, fail)).toEqual(['pkg/a.ts', '/etc/hosts']);
    expect(shellPatchFiles(`cd / && apply_patch <<'EOF'\n${patch('etc/passwd')}EOF`, fail)).toEqual(['/etc/passwd']);
  });
});

describe('one policy, two hosts: Codex and Claude Code decide the same call alike', () => {
  const PAIRS: [string, string, 'allow' | 'deny' | 'ask'][] = [
    ['pre-mcp-read.json', 'pre-mcp-read.json', 'allow'],
    ['pre-bash-rm.json', 'pre-bash-rm.json', 'deny'],
    ['pre-mcp-write.json', 'pre-mcp-write.json', 'ask'],
    ['pre-apply-patch.json', 'pre-write.json', 'ask'],
  ];
  it.each(PAIRS)('%s ~ claude-code/%s', (codex, claude, decision) => {
    expectClaudeCodeAgrees((command(recorded(codex)).json as { hookSpecificOutput?: { permissionDecision: string; permissionDecisionReason: string } } | undefined)?.hookSpecificOutput, claude, decision);
  });
});

describe('POST /v1/hooks/codex', () => {
  const daemon = replayThroughEndpoint('codex', CASES, recorded, validOutput);

  it('fails closed: malformed input is a deny with 200; a missing token is refused like every route', async () => {
    const bad = await daemon.current!.post('{"hook_event_name": "PreToolUse", "tool_name": ');
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^Ward: denied because the hook could not evaluate this call \(fail closed\): malformed hook input/),
      },
    });
    const anonymous = await daemon.current!.post(recorded('pre-mcp-read.json'), false);
    expect(anonymous.status).toBe(401);
  });
});
