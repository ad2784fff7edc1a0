// Gemini CLI's BeforeTool hook: the recorded events of fixtures/gemini-cli (written from Gemini CLI's
// hooks reference) replayed through `ward hook gemini-cli` and `POST /v1/hooks/gemini-cli`, asserting
// the exact reply and exit code; the same calls decided through Claude Code's hook under one policy
// get the same verdict.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../cli/run.js';
import { expectClaudeCodeAgrees, HOOK_POLICY as POLICY, replayThroughEndpoint, runHook, traces } from './hook-replay.js';

const FIXTURES = join(REPO, 'fixtures', 'gemini-cli');
const TRACE = '[0-9a-f]{24}';
const INTENT = '[0-9a-f]{64}';
const recorded = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const BLOCK_SECRET = new RegExp(`^Ward: blocked by policy \\(matched_rule_block_secrets\\); trace ${TRACE}\\. Do not retry this call unchanged$`);
const BLOCK_EXEC = new RegExp(
  `^Ward: blocked by policy \\(destructive_apply_requires_approval, matched_rule_block_exec\\); trace ${TRACE}\\. Do not retry this call unchanged$`,
);
const APPROVAL = new RegExp(
  `^Ward: approval required by policy \\(matched_rule_approve_writes\\); trace ${TRACE}, intent ${INTENT}\\. Gemini CLI hooks cannot ask: the call was not run; ask the user to approve it outside this session$`,
);
const deny = (reason: RegExp) => ({ decision: 'deny', reason: expect.stringMatching(reason) });

/** Each recorded event, the exact reply Gemini CLI reads, and whether a trace is written. */
const CASES: [string, unknown, boolean][] = [
  ['before-read-file.json', {}, true],
  ['before-read-secret.json', deny(BLOCK_SECRET), true],
  ['before-shell-rm.json', deny(BLOCK_EXEC), true],
  ['before-write-file.json', deny(APPROVAL), true],
  ['before-replace.json', deny(APPROVAL), true],
  ['before-mcp-write.json', deny(APPROVAL), true],
  ['before-mcp-read.json', {}, true],
  ['before-agent.json', {}, false],
  ['after-tool.json', {}, false],
];

const command = (input: string, args?: string[]) => runHook('gemini-cli', input, args);

describe('ward hook gemini-cli: recorded events', () => {
  it.each(CASES)('%s', (name, reply, traced) => {
    const r = command(recorded(name));
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual(reply);
    expect(traces(r.state).length).toBe(traced ? 1 : 0);
  });

  it('fails closed: unreadable input exits 2 with the reason on stderr; a bad command line denies a BeforeTool call', () => {
    const bad = command('{"hook_event_name": "BeforeTool", "tool_name": ');
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^Ward: denied because the hook could not evaluate this call \(fail closed\): malformed hook input/);
    const typo = command(recorded('before-read-file.json'), ['--polcy', POLICY]);
    expect(typo.code).toBe(0);
    expect(typo.json).toEqual({
      decision: 'deny',
      reason: expect.stringMatching(/^Ward: denied because the hook could not evaluate this call \(fail closed\): unknown option "--polcy"/),
      systemMessage: expect.stringMatching(/^Ward hook failed closed: unknown option/),
    });
    const noTool = command(JSON.stringify({ hook_event_name: 'BeforeTool', cwd: '/workspace', tool_input: {} }));
    expect(noTool.code).toBe(0);
    expect(noTool.json).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/tool_name is required/) });
  });

  it('an MCP tool is named from mcp_context, as Claude Code and the proxy name it, whatever tool_name spells', () => {
    const event = JSON.parse(recorded('before-mcp-write.json')) as Record<string, unknown>;
    for (const spelling of ['mcp_filesystem_write_file', 'mcp__filesystem__write_file', 'write_file']) {
      const r = command(JSON.stringify({ ...event, tool_name: spelling }));
      expect(r.code, r.stderr).toBe(0);
      const [trace] = traces(r.state);
      const written = JSON.parse(readFileSync(join(r.state, 'traces', trace!), 'utf8')) as { tool_name: string; verdict: string };
      expect(written).toMatchObject({ tool_name: 'tool.mcp__filesystem__write_file', verdict: 'require_approval' });
    }
    // A context without the server's or the tool's name is not guessed at: a deny.
    const partial = command(JSON.stringify({ ...event, mcp_context: { server_name: 'filesystem' } }));
    expect(partial.json).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/mcp_context\.server_name and mcp_context\.tool_name are required/) });
  });

  it('read_many_files with a glob pattern is denied without a trace; plain paths are decided by the files they name', () => {
    const event = JSON.parse(recorded('before-read-secret.json')) as Record<string, unknown>;
    const readMany = (toolInput: unknown) => command(JSON.stringify({ ...event, tool_name: 'read_many_files', tool_input: toolInput }));
    // `.e*` matches /workspace/.env, which the policy blocks; decided as a literal path it was allowed.
    for (const input of [{ paths: ['.e*'] }, { paths: ['README.md'], include: ['**/.env'] }, { paths: ['src/{a,b}.ts'] }, { paths: ['!x', 'y'] }]) {
      const r = readMany(input);
      expect(r.code, JSON.stringify(input)).toBe(0);
      expect(r.json, JSON.stringify(input)).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/fail closed.*read_many_files (paths|include) has the glob pattern/) });
      expect(traces(r.state)).toEqual([]);
    }
    const plain = readMany({ paths: ['README.md', '.env'] });
    expect(plain.json).toEqual({ decision: 'deny', reason: expect.stringMatching(/^Ward: blocked by policy \(matched_rule_block_secrets\)/) });
    expect(traces(plain.state).length).toBe(1);
    const allowed = readMany({ paths: ['notes (1).md'] });
    expect(allowed.json).toEqual({});
    expect(traces(allowed.state).length).toBe(1);
  });

  it('a bad command line on an event Ward does not decide keeps the prompt: {} with a message, exit 0', () => {
    const r = command(recorded('before-agent.json'), ['--polcy', POLICY]);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ systemMessage: expect.stringMatching(/^Ward hook misconfigured: unknown option "--polcy"/) });
  });
});

describe('one policy, two hosts: Gemini CLI and Claude Code decide the same call alike', () => {
  const PAIRS: [string, string, 'allow' | 'deny' | 'ask'][] = [
    ['before-read-file.json', 'pre-read.json', 'allow'],
    ['before-read-secret.json', 'pre-read-secret.json', 'deny'],
    ['before-shell-rm.json', 'pre-bash-rm.json', 'deny'],
    ['before-write-file.json', 'pre-write.json', 'ask'],
    ['before-mcp-write.json', 'pre-mcp-write.json', 'ask'],
    ['before-mcp-read.json', 'pre-mcp-read.json', 'allow'],
  ];
  it.each(PAIRS)('%s ~ claude-code/%s', (gemini, claude, decision) => {
    // Gemini CLI's deny, read as Claude Code's answer ({} is an allow).
    const g = command(recorded(gemini)).json as { decision?: string; reason?: string };
    expectClaudeCodeAgrees(g.decision === undefined ? undefined : { permissionDecision: g.decision, permissionDecisionReason: g.reason! }, claude, decision);
  });
});

describe('POST /v1/hooks/gemini-cli', () => {
  const daemon = replayThroughEndpoint('gemini-cli', CASES, recorded);

  it('fails closed: malformed input is a deny with 200; a missing token is refused like every route', async () => {
    const bad = await daemon.current!.post('{"hook_event_name": "BeforeTool", "tool_name": ');
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({ decision: 'deny', reason: expect.stringMatching(/^Ward: denied because the hook could not evaluate this call \(fail closed\): malformed hook input/) });
    const anonymous = await daemon.current!.post(recorded('before-read-file.json'), false);
    expect(anonymous.status).toBe(401);
  });
});
