import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeToolName } from '../../src/agent-hooks/claude-code.js';
import { decodeToolCall, normalizeAdapter } from '../../src/decision-service/adapters.js';
import { toIntentRequest } from '../../src/decision-service/intent.js';
import { verifyTraceText } from '../../src/trace/verify.js';
import { loadOrCreateDefaultKey } from '../../src/keys/index.js';
import { join } from 'node:path';
import { callJson, compat } from './helpers.js';

/** Fields that change per run: everything else in a decision is deterministic. */
const VOLATILE = ['correlation_id', 'decision_latency_ms', 'trace_path'];

function golden(name: string, value: Record<string, unknown>): void {
  const stable = Object.fromEntries(Object.entries(value).filter(([k]) => !VOLATILE.includes(k)));
  const path = compat(`golden/${name}.json`);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(stable, null, 2) + '\n');
  }
  expect(stable).toEqual(JSON.parse(readFileSync(path, 'utf8')));
}

const CASES = [
  { name: 'mcp-read', adapter: 'mcp', verdict: 'allow', code: 0, tool: 'read_file' },
  { name: 'mcp-write', adapter: 'mcp', verdict: 'require_approval', code: 4, tool: 'write_file' },
  { name: 'mcp-legacy-target', adapter: 'mcp', verdict: 'block', code: 3, tool: 'fetch_url' },
  { name: 'mcp-script', adapter: 'mcp', verdict: 'allow', code: 0, tool: 'script' },
  { name: 'openai', adapter: 'openai', verdict: 'allow', code: 0, tool: 'lookup_weather' },
  { name: 'anthropic', adapter: 'anthropic', verdict: 'allow', code: 0, tool: 'get_forecast' },
  { name: 'claude-code', adapter: 'claude-code', verdict: 'block', code: 3, tool: 'tool.exec' },
  { name: 'langchain', adapter: 'langchain', verdict: 'allow', code: 0, tool: 'search_docs' },
  { name: 'contextos', adapter: 'contextos', verdict: 'require_approval', code: 4, tool: 'adp_payments.issue_refund' },
] as const;

describe('adapters: golden decisions', () => {
  for (const c of CASES) {
    it(`${c.adapter} payload ${c.name} decides ${c.verdict} (exit ${c.code}) with a verifying trace`, async () => {
      const r = await callJson({ call: compat(`call-${c.name}.json`), adapter: c.adapter });
      expect(r.code).toBe(c.code);
      expect(r.json['ok']).toBe(true);
      expect(r.json['executed']).toBe(false);
      expect(r.json['verdict']).toBe(c.verdict);
      expect(r.json['tool_name']).toBe(c.tool);
      golden(c.name, r.json);
      const tracePath = String(r.json['trace_path']);
      expect(tracePath).toMatch(/\/\.ward\/traces\/trace__\d{8}T\d{6}\.\d{9}\.json$/);
      const key = loadOrCreateDefaultKey(join(r.cwd, '.ward')).key;
      const check = verifyTraceText(readFileSync(tracePath, 'utf8'), [key]);
      expect(check.ok, check.error).toBe(true);
      expect(check.trace_id).toBe(r.json['trace_id']);
      expect(check.verdict).toBe(c.verdict);
    });
  }
});

describe('adapter decoding', () => {
  it('normalizes adapter names and aliases, and rejects unknown adapters', () => {
    expect(normalizeAdapter(undefined)).toBe('mcp');
    expect(normalizeAdapter(' Claude-Code ')).toBe('claude_code');
    expect(normalizeAdapter('claudecode')).toBe('claude_code');
    expect(() => normalizeAdapter('gemini')).toThrow('unsupported adapter: gemini');
  });

  it('maps Claude Code tool names', () => {
    expect(['Read', 'Grep', 'Glob', 'WebFetch', 'WebSearch'].map(claudeCodeToolName)).toEqual(Array(5).fill('tool.read'));
    expect(['Write', 'Edit', 'NotebookEdit'].map(claudeCodeToolName)).toEqual(Array(3).fill('tool.write'));
    expect(claudeCodeToolName('Bash')).toBe('tool.exec');
    expect(claudeCodeToolName('Task')).toBe('tool.delegate');
    expect(claudeCodeToolName('My.Custom.Tool')).toBe('my.custom.tool');
    expect(claudeCodeToolName('MultiEdit')).toBe('tool.multi_edit');
    expect(claudeCodeToolName('mcp__github__create_issue')).toBe('tool.mcp__github__create_issue');
  });

  it('infers Claude Code targets from tool input keys', () => {
    const call = decodeToolCall('claude_code', {
      tool_name: 'Task',
      tool_input: JSON.stringify({ prompt: 'do it', file_path: '/a', url: 'https://x.test/', cmd: 'ls' }),
      hook_event_name: 'PreToolUse',
    });
    expect(call.targets.map((t) => [t.kind, t.value, t.operation])).toEqual([
      ['path', '/a', ''],
      ['url', 'https://x.test/', ''],
      ['other', 'ls', 'execute'],
      ['other', 'do it', 'delegate'],
    ]);
    expect(call.context.auth_context).toEqual({ hook_event_name: 'PreToolUse', adapter: 'claude_code' });
  });

  it('OpenAI arguments may be a JSON string or an object; bad JSON is a decode error', () => {
    expect(decodeToolCall('openai', { function: { name: 'f', arguments: { a: 1 } } }).args).toEqual({ a: 1 });
    expect(decodeToolCall('openai', { function: { name: 'f', arguments: '{"a":2}' } }).args).toEqual({ a: 2 });
    expect(() => decodeToolCall('openai', { function: { name: 'f', arguments: '{nope' } })).toThrow(/decode openai payload: function.arguments is not valid JSON/);
    expect(() => decodeToolCall('openai', { function: { arguments: '{}' } })).toThrow('decode openai payload: function.name is required');
    expect(() => decodeToolCall('openai', { name: 'f' })).toThrow('decode openai payload: function is required');
  });

  it('anthropic needs a tool_use block with a name; langchain needs tool', () => {
    expect(() => decodeToolCall('anthropic', { type: 'text', name: 'x' })).toThrow(/type must be tool_use/);
    expect(() => decodeToolCall('anthropic', { type: 'tool_use', input: {} })).toThrow('decode anthropic payload: name is required');
    expect(() => decodeToolCall('langchain', { tool_input: {} })).toThrow('decode langchain payload: tool is required');
    expect(decodeToolCall('langchain', { tool: 't', tool_input: { q: 1 } }).args).toEqual({ q: 1 });
  });

  it('mcp: hint aliases are OR-ed and annotations override them', () => {
    const call = decodeToolCall('mcp', {
      name: 'x',
      targets: [
        { kind: 'path', value: '/a', readOnlyHint: true, destructive_hint: false, discoveryMethod: 'dynamic_mcp' },
        { kind: 'path', value: '/b', read_only_hint: true, annotations: { readOnlyHint: 'false', destructiveHint: 'true' } },
      ],
    });
    expect(call.targets[0]).toMatchObject({ read_only_hint: true, destructive_hint: false, discovery_method: 'dynamic_mcp' });
    expect(call.targets[1]).toMatchObject({ read_only_hint: false, destructive_hint: true });
    expect(() => decodeToolCall('mcp', { name: 'x', targets: [{ kind: 'path', value: '/a', annotations: { readOnlyHint: 'maybe' } }] })).toThrow(
      /annotations.readOnlyHint must be a boolean/,
    );
  });

  it('mcp: an MCP tools/call params object is not a ToolCall (arguments is ignored; name still required)', () => {
    const call = decodeToolCall('mcp', { name: 'read_file', arguments: { path: '/etc/passwd' } });
    expect(call.args).toEqual({});
    expect(() => decodeToolCall('mcp', { arguments: {} })).toThrow('decode mcp payload: name is required');
    expect(() => decodeToolCall('mcp', [] as never)).toThrow('decode mcp payload: payload must be a JSON object');
  });

  it('legacy target strings pick url, path or host', () => {
    const kinds = ['https://a.test/x', '/etc/hosts', 'example.com'].map(
      (target) => (toIntentRequest(decodeToolCall('mcp', { name: 't', target }), 'standard').intent['targets'] as { kind: string }[])[0]!.kind,
    );
    expect(kinds).toEqual(['url', 'path', 'host']);
  });

  it('intent conversion: defaults, 1980 created_at, auth evidence copied into auth_context', () => {
    const call = decodeToolCall('mcp', {
      name: 'Read_File',
      context: { auth_mode: 'oauth', oauth_evidence: { issuer: 'https://idp.test', scopes: ['read'] }, auth_context: { tenant: 't1' } },
    });
    const { intent, usedFallbackContext } = toIntentRequest(call, 'standard');
    expect(usedFallbackContext).toBe(true);
    expect(intent).toMatchObject({
      schema_id: 'gait.gate.intent_request',
      schema_version: '1.0.0',
      created_at: '1980-01-01T00:00:00Z',
      producer_version: '0.0.0-dev',
      tool_name: 'Read_File',
      context: {
        identity: 'mcp-proxy',
        workspace: '.',
        risk_class: 'high',
        auth_context: { tenant: 't1', auth_mode: 'oauth', oauth_evidence: { issuer: 'https://idp.test', scopes: ['read'] } },
      },
    });
  });

  it('contextos: principal chain becomes identity and delegation; destructive mode marks targets', () => {
    const call = decodeToolCall('contextos', JSON.parse(readFileSync(compat('call-contextos.json'), 'utf8')));
    expect(call.name).toBe('adp_payments.issue_refund');
    expect(call.context.identity).toBe('agent:contextos/support-refund@1.2.0');
    expect(call.context.request_id).toBe('tool_118');
    expect(call.context.approval_ref).toBe('pol_9901');
    expect(call.context.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(call.delegation).toEqual({
      requester_identity: 'agent:contextos/support-refund@1.2.0',
      chain: [{ delegator_identity: 'usr_771', delegate_identity: 'agent:contextos/support-refund@1.2.0' }],
    });
    expect(call.targets).toHaveLength(1);
    expect(call.targets[0]).toMatchObject({ kind: 'other', value: 'adp_payments.issue_refund', destructive_hint: true });
    expect(() => decodeToolCall('contextos', { envelope_version: 'contextos.tool_call.v9', capability_id: 'x' })).toThrow(/unsupported envelope_version/);
    expect(() => decodeToolCall('contextos', { args: {} })).toThrow('decode contextos payload: capability_id is required');
  });
});
