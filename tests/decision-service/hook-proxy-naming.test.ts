import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, ward } from '../cli/run.js';
import { DEFAULT_TARGET_MAPPING, intentForCall, intentToolName } from '../../src/mcp/proxy/intent.js';
import { claudeCodeToolName } from '../../src/agent-hooks/claude-code.js';
import { connect, node, TINY } from '../mcp/proxy/helpers.js';

/**
 * One policy, one verdict: the same MCP tool call decided through `ward hook claude-code` (Claude
 * Code names it `mcp__tiny__<tool>`) and through `ward mcp proxy --tool-prefix tool.mcp__tiny__`
 * (the real stdio proxy in front of the fixture server). Each rule depends on one part of the shared
 * mapping: the tool name, the `execute` operation of a command argument, the operation a tool name
 * makes obvious, and camelCase tool names.
 */
const POLICY = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: allow
rules:
  - name: block-commands
    priority: 10
    effect: block
    match:
      destination_operations: [execute]
      endpoint_classes: [proc.exec]
  - name: block-deletes
    priority: 15
    effect: block
    match:
      endpoint_classes: [fs.delete]
  - name: approve-note-writes
    priority: 20
    effect: require_approval
    match:
      tool_names: [tool.mcp__tiny__write_note]
      destination_operations: [write]
  - name: block-read-note
    priority: 30
    effect: block
    match:
      tool_names: [tool.mcp__tiny__read_note]
`;

interface Case {
  tool: string;
  args: Record<string, unknown>;
  verdict: string;
  reasons: string[];
}

const CASES: Case[] = [
  { tool: 'run_command', args: { command: 'rm -rf /' }, verdict: 'block', reasons: ['destructive_apply_requires_approval', 'matched_rule_block_commands'] },
  { tool: 'delete_note', args: { path: '/tmp/ward-naming/note.txt' }, verdict: 'block', reasons: ['destructive_apply_requires_approval', 'matched_rule_block_deletes'] },
  { tool: 'write_note', args: { path: '/tmp/ward-naming/note.txt', text: 'hi' }, verdict: 'require_approval', reasons: ['matched_rule_approve_note_writes'] },
  { tool: 'readNote', args: { path: '/tmp/ward-naming/note.txt' }, verdict: 'block', reasons: ['matched_rule_block_read_note'] },
  { tool: 'echo', args: { text: 'hello' }, verdict: 'allow', reasons: ['default_allow'] },
];

/** The verdict and reason codes behind a PreToolUse reply. */
function hookVerdict(stdout: string): { verdict: string; reasons: string[] } {
  const out = JSON.parse(stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
  const { permissionDecision: d, permissionDecisionReason: why } = out.hookSpecificOutput;
  const reasons = /\(([^)]*)\)/.exec(why)![1]!.split(', ');
  return { verdict: d === 'allow' ? 'allow' : d === 'ask' ? 'require_approval' : 'block', reasons };
}

describe('one policy matches the same action through the Claude Code hook and the MCP proxy', () => {
  it('the proxy names a tool as the hook does with --tool-prefix tool.mcp__<server>__, and command arguments are other/execute/proc.exec', () => {
    for (const name of ['write_note', 'readNote', 'read-file', 'getHTTPResponse']) {
      expect(intentToolName('tool.mcp__tiny__', name)).toBe(claudeCodeToolName(`mcp__tiny__${name}`));
    }
    // Claude Code writes `files.read` as `files_read` in mcp__<server>__<tool>.
    expect(intentToolName('tool.mcp__tiny__', 'files.read')).toBe('tool.mcp__tiny__files_read');
    expect(intentToolName('fs.', 'readNote')).toBe('fs.readNote');
    expect(intentToolName('', 'write_note')).toBe('write_note');
    const mapping = { toolPrefix: 'tool.mcp__tiny__', targets: DEFAULT_TARGET_MAPPING, argSource: 'tool_output', workspace: '/ws', riskClass: 'high' };
    const intent = intentForCall(
      { name: 'run_command', arguments: { command: 'ls' }, sessionId: 's', runId: 'r', clientName: 'c', createdAt: '2026-11-25T00:00:00Z' },
      mapping,
      false,
    );
    expect(intent['tool_name']).toBe('tool.mcp__tiny__run_command');
    expect(intent['targets']).toEqual([{ kind: 'other', value: 'ls', discovery_method: 'mcp', operation: 'execute', endpoint_class: 'proc.exec' }]);
  });

  it('each call gets the same verdict and reason codes through both', async () => {
    const cwd = tempDir('ward-naming-');
    const policy = join(cwd, 'policy.yaml');
    writeFileSync(policy, POLICY);
    const state = join(cwd, '.ward');

    const viaHook = CASES.map((c) => {
      const input = JSON.stringify({
        session_id: 'naming',
        transcript_path: '/tmp/t.jsonl',
        cwd,
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: `mcp__tiny__${c.tool}`,
        tool_input: c.args,
        tool_use_id: 'toolu_naming',
      });
      const r = ward(['hook', 'claude-code', '--policy', policy, '--state-dir', state], { cwd, input });
      expect(r.code, r.stderr).toBe(0);
      return hookVerdict(r.stdout);
    });

    const proxied = await connect(node(TINY), { cwd, ward: ['--policy', policy, '--state-dir', state, '--tool-prefix', 'tool.mcp__tiny__'] });
    const viaProxy: { verdict: string; reasons: string[] }[] = [];
    try {
      for (const c of CASES) {
        const res = await proxied.client.callTool({ name: c.tool, arguments: c.args });
        const w = (res._meta as { ward?: { verdict: string; reason_codes: string[] } } | undefined)?.ward;
        // The proxy's approval step adds approval_token_missing (no token was presented); the policy's
        // own reasons are compared.
        const reasons = w?.reason_codes.filter((r) => r !== 'approval_token_missing');
        const ran = !res.isError && JSON.stringify(res.content).includes(`echo: ${String(c.args['text'])}`);
        viaProxy.push(w ? { verdict: w.verdict, reasons: reasons! } : { verdict: ran ? 'allow' : 'not run', reasons: ['default_allow'] });
      }
    } finally {
      await proxied.close();
    }

    expect(viaHook).toEqual(CASES.map((c) => ({ verdict: c.verdict, reasons: c.reasons })));
    expect(viaProxy).toEqual(viaHook);
  });
});
