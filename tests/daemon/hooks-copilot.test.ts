// GitHub Copilot's preToolUse hook: the recorded events of fixtures/copilot (copied from, or written
// in the shapes of, GitHub's hooks references) replayed through `ward hook copilot` and
// `POST /v1/hooks/copilot`, asserting the exact reply and exit code. Copilot never blocks on an exit
// code, so every failure must be a deny on stdout with exit 0. The same calls decided through Claude
// Code's hook under one policy get the same verdict.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../cli/run.js';
import { expectClaudeCodeAgrees, HOOK_POLICY as POLICY, replayThroughEndpoint, runHook, traces } from './hook-replay.js';

const FIXTURES = join(REPO, 'fixtures', 'copilot');
const TRACE = '[0-9a-f]{24}';
const INTENT = '[0-9a-f]{64}';
const recorded = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const BLOCK_SECRET = new RegExp(`^Ward: blocked by policy \\(matched_rule_block_secrets\\); trace ${TRACE}\\. Do not retry this call unchanged$`);
const BLOCK_EXEC = new RegExp(`^Ward: blocked by policy \\(destructive_apply_requires_approval, matched_rule_block_exec\\); trace ${TRACE}\\. Do not retry this call unchanged$`);
const APPROVAL = new RegExp(
  `^Ward: approval required by policy \\(matched_rule_approve_writes\\); trace ${TRACE}, intent ${INTENT}\\. Copilot's coding agent cannot ask: the call was not run; ask the user to approve it outside this session$`,
);
const FAILED = /^Ward: denied because the hook could not evaluate this call \(fail closed\): /;
const deny = (reason: RegExp) => ({ permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(reason) });

/** Each recorded event, the exact reply Copilot reads (undefined: no output), and whether a trace is written. */
const CASES: [string, unknown, boolean][] = [
  ['pre-tool-view.json', undefined, true],
  ['pre-tool-view-secret.json', deny(BLOCK_SECRET), true],
  ['pre-tool-bash-rm.json', deny(BLOCK_EXEC), true],
  ['pre-tool-use-vscode.json', deny(BLOCK_EXEC), true],
  ['pre-tool-edit.json', deny(APPROVAL), true],
  ['post-tool-use.json', undefined, false],
  ['user-prompt-submitted.json', undefined, false],
  ['session-start.json', undefined, false],
];

const command = (input: string, args?: string[]) => runHook('copilot', input, args);

describe('ward hook copilot: recorded events', () => {
  it.each(CASES)('%s', (name, reply, traced) => {
    const r = command(recorded(name));
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual(reply);
    expect(traces(r.state).length).toBe(traced ? 1 : 0);
  });

  it('fails closed with exit 0: unreadable input, an unknown shape, a bad command line and unparseable toolArgs are denies on stdout', () => {
    for (const input of ['{"toolName": "bash", "toolArgs": ', '[]', '{"timestamp": 1, "cwd": "/w"}', '']) {
      const r = command(input);
      expect(r.code, input).toBe(0);
      expect(r.json, input).toEqual(deny(FAILED));
    }
    const typo = command(recorded('pre-tool-view.json'), ['--polcy', POLICY]);
    expect(typo.code).toBe(0);
    expect(typo.json).toEqual(deny(/^Ward: denied because the hook could not evaluate this call \(fail closed\): unknown option "--polcy"/));
    // Help text on exit 2 would be no objection to Copilot: as a hook, --help is a deny.
    const help = command(recorded('pre-tool-bash-rm.json'), ['--policy', POLICY, '--help']);
    expect(help.code).toBe(0);
    expect(help.json).toEqual(deny(/--help in a hook command blocks the call/));
    const args = command(JSON.stringify({ timestamp: 1, cwd: '/workspace', toolName: 'bash', toolArgs: 'rm -rf /' }));
    expect(args.code).toBe(0);
    expect(args.json).toEqual(deny(/toolArgs is not valid JSON/));
    expect(traces(args.state)).toEqual([]);
  });

  it('a tool call is decided whichever format carries it: a camelCase event that names itself preToolUse, a null error or result', () => {
    const secret = JSON.parse(recorded('pre-tool-view-secret.json')) as Record<string, unknown>;
    for (const extra of [{ hook_event_name: 'preToolUse' }, { error: null }, { toolResult: null }]) {
      const r = command(JSON.stringify({ ...secret, ...extra }));
      expect(r.code, JSON.stringify(extra)).toBe(0);
      expect(r.json, JSON.stringify(extra)).toEqual(deny(BLOCK_SECRET));
      expect(traces(r.state).length).toBe(1);
    }
    // Both formats' tool fields at once: Ward cannot tell which tool runs.
    const both = command(JSON.stringify({ hook_event_name: 'PreToolUse', cwd: '/workspace', tool_name: 'view', tool_input: { path: '/workspace/README.md' }, ...secret }));
    expect(both.code).toBe(0);
    expect(both.json).toEqual(deny(/both toolName and tool_name/));
    expect(traces(both.state)).toEqual([]);
  });

  it('apply_patch (toolArgs the patch itself, as the CLI sends it, or arguments holding it) writes every file the patch names', () => {
    const patch = (header: string) => `*** Begin Patch\n${header}\n+x\n*** End Patch\n`;
    const call = (toolArgs: unknown) => command(JSON.stringify({ sessionId: 's', timestamp: 1, cwd: '/workspace', toolName: 'apply_patch', toolArgs }));
    for (const [toolArgs, reply] of [
      [patch('*** Update File: .env'), deny(BLOCK_SECRET)],
      [patch('*** Add File: notes.md'), deny(APPROVAL)],
      [JSON.stringify({ input: patch('*** Add File: docs/../.env') }), deny(BLOCK_SECRET)],
      [{ input: patch('*** Add File: notes.md') }, deny(APPROVAL)],
    ] as const) {
      const r = call(toolArgs);
      expect(r.code, JSON.stringify(toolArgs)).toBe(0);
      expect(r.json, JSON.stringify(toolArgs)).toEqual(reply);
      expect(traces(r.state).length).toBe(1);
    }
    for (const [toolArgs, why] of [
      ['rm -rf /', /toolArgs is not valid JSON/],
      [{ a: patch('*** Add File: x'), b: patch('*** Add File: .env') }, /must be a patch or hold exactly one \(it holds 2\)/],
      [patch('*** End of File'), /patch names no file/],
    ] as const) {
      const r = call(toolArgs);
      expect(r.code).toBe(0);
      expect(r.json).toEqual(deny(why));
      expect(traces(r.state)).toEqual([]);
    }
  });

  it('a bad command line on an event Ward does not decide: no output, exit 0, the problem on stderr', () => {
    const r = command(recorded('user-prompt-submitted.json'), ['--polcy', POLICY]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/misconfigured: unknown option "--polcy"/);
  });
});

describe('one policy, two hosts: Copilot and Claude Code decide the same call alike', () => {
  const PAIRS: [string, string, 'allow' | 'deny' | 'ask'][] = [
    ['pre-tool-view.json', 'pre-read.json', 'allow'],
    ['pre-tool-view-secret.json', 'pre-read-secret.json', 'deny'],
    ['pre-tool-use-vscode.json', 'pre-bash-rm.json', 'deny'],
    ['pre-tool-edit.json', 'pre-edit.json', 'ask'],
  ];
  it.each(PAIRS)('%s ~ claude-code/%s', (copilot, claude, decision) => {
    expectClaudeCodeAgrees(command(recorded(copilot)).json as { permissionDecision: string; permissionDecisionReason: string } | undefined, claude, decision);
  });
});

describe('POST /v1/hooks/copilot', () => {
  const daemon = replayThroughEndpoint('copilot', CASES, recorded);

  it('fails closed: malformed input is a deny with 200; a missing token is refused like every route', async () => {
    const bad = await daemon.current!.post('{"toolName": "bash", "toolArgs": ');
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual(deny(/^Ward: denied because the hook could not evaluate this call \(fail closed\): malformed hook input/));
    const anonymous = await daemon.current!.post(recorded('pre-tool-view.json'), false);
    expect(anonymous.status).toBe(401);
  });

  it("the docs' curl command prints exactly one JSON reply: the daemon's, or the deny when the daemon refuses or is unreachable", () => {
    const docs = readFileSync(join(REPO, 'docs', 'integrations-copilot.md'), 'utf8');
    const line = docs.split('\n').find((l) => l.includes('/v1/hooks/copilot') && l.includes('curl'))!;
    const d = daemon.current!;
    const run = (url: string, token: string) => {
      const r = spawnSync('bash', ['-c', line.replace('http://127.0.0.1:7433', url)], { input: recorded('pre-tool-view-secret.json'), env: { ...process.env, WARD_DAEMON_TOKEN: token }, encoding: 'utf8', timeout: 30_000 });
      expect(r.status).toBe(0);
      return JSON.parse(r.stdout) as unknown; // one JSON value: Copilot skips output it cannot parse, and the tool runs
    };
    expect(run(d.url, d.token)).toEqual(deny(BLOCK_SECRET));
    // A 401 body on stdout before the fallback deny would make stdout two JSON values.
    expect(run(d.url, 'wrong-token')).toEqual(deny(/^Ward daemon unreachable \(fail closed\)$/));
    expect(run('http://127.0.0.1:9', d.token)).toEqual(deny(/^Ward daemon unreachable \(fail closed\)$/));
  });
});
