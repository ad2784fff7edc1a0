import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nowUTC } from '../../../src/canon/gotime.js';
import { generateSigningKey } from '../../../src/keys/index.js';
import { parsePolicyYaml } from '../../../src/policy/index.js';
import { Gatekeeper } from '../../../src/mcp/proxy/gatekeeper.js';
import { DEFAULT_TARGET_MAPPING, intentForCall, loadTargetsMap, operationFromToolName, type CallInput } from '../../../src/mcp/proxy/intent.js';
import { LineReader } from '../../../src/mcp/proxy/framing.js';
import { isToolCallMethod, messageKind } from '../../../src/mcp/proxy/jsonrpc.js';
import { JournalTraceSink, recoverJournals } from '../../../src/mcp/proxy/journal-sink.js';
import { alwaysBlocked, ToolPins } from '../../../src/mcp/proxy/tools.js';
import { decideGate } from '../../../src/decision/gate-run.js';
import { verifyTraceRecord } from '../../../src/trace/index.js';
import { tempDir } from '../../cli/run.js';

const mapping = { toolPrefix: '', targets: DEFAULT_TARGET_MAPPING, argSource: 'tool_output', workspace: '/ws', riskClass: 'high' };
const call = (name: string, args: Record<string, unknown>, extra: Partial<CallInput> = {}): CallInput => ({
  name,
  arguments: args as CallInput['arguments'],
  sessionId: 's1',
  runId: 'mcp_s1',
  clientName: 'claude',
  createdAt: '2026-11-21T10:00:00Z',
  ...extra,
});

describe('intent mapping', () => {
  it('infers targets from argument names, operation from the tool name, and fills the context', () => {
    const i = intentForCall(call('move_file', { source: '/a', destination: '/b', note: 'x' }), { ...mapping, toolPrefix: 'fs.' }, false);
    expect(i['tool_name']).toBe('fs.move_file');
    expect(i['targets']).toEqual([
      { kind: 'path', value: '/a', discovery_method: 'mcp', operation: 'write' },
      { kind: 'path', value: '/b', discovery_method: 'mcp', operation: 'write' },
    ]);
    expect(i['context']).toEqual({ identity: 'mcp-client:claude', workspace: '/ws', risk_class: 'high', session_id: 's1', run_id: 'mcp_s1' });
    expect(intentForCall(call('run', { command: 'rm -rf /' }), mapping, false)['targets']).toEqual([
      { kind: 'other', value: 'rm -rf /', discovery_method: 'mcp', operation: 'execute', endpoint_class: 'proc.exec' },
    ]);
    expect(intentForCall(call('read_multiple_files', { paths: ['/x', '/y', 3] }), mapping, false)['targets']).toHaveLength(2);
    expect(intentForCall(call('fetch', { url: 'https://a.example/x' }), mapping, false)['targets']).toEqual([
      { kind: 'url', value: 'https://a.example/x', discovery_method: 'mcp' },
    ]);
  });

  it('derives operations only from obvious tool names', () => {
    expect(['read_file', 'list_directory', 'get_file_info'].map(operationFromToolName)).toEqual(['read', 'read', 'read']);
    expect(['write_file', 'edit_file', 'create_directory', 'move_file'].map(operationFromToolName)).toEqual(['write', 'write', 'write', 'write']);
    expect(['delete_note', 'remove-item'].map(operationFromToolName)).toEqual(['delete', 'delete']);
    expect(['directory_tree', 'search_files', 'readme'].map(operationFromToolName)).toEqual(['', '', '']);
  });

  it('a --targets-map extends and overrides the defaults, per tool too', () => {
    const dir = tempDir('ward-tmap-');
    const path = join(dir, 'map.json');
    writeFileSync(path, JSON.stringify({ args: { repo_dir: { kind: 'path' }, url: null }, tools: { run_sql: { query: { kind: 'other', operation: 'exec' } } } }));
    const m = { ...mapping, targets: loadTargetsMap(path) };
    // `null` takes the name's rule away, not what the value shows: a URL is a target all the same
    // (a map never makes a call less checked than the default); `url: "x"` is no longer one.
    expect(intentForCall(call('clone', { repo_dir: '/r', url: 'https://x' }), m, false)['targets']).toEqual([
      { kind: 'path', value: '/r', discovery_method: 'mcp' },
      { kind: 'url', value: 'https://x', discovery_method: 'mcp' },
    ]);
    expect(intentForCall(call('clone', { repo_dir: 'r', url: 'x' }), m, false)['targets']).toEqual([{ kind: 'path', value: 'r', discovery_method: 'mcp' }]);
    expect(intentForCall(call('run_sql', { query: 'drop table t' }), m, false)['targets']).toEqual([
      { kind: 'other', value: 'drop table t', discovery_method: 'mcp', operation: 'exec' },
    ]);
    writeFileSync(path, JSON.stringify({ args: { x: { kind: 'planet' } } }));
    expect(() => loadTargetsMap(path)).toThrow(/kind must be one of/);
  });

  it('copies W3C trace context from params._meta', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const i = intentForCall(call('echo', {}, { meta: { traceparent: tp } }), mapping, false);
    expect((i['context'] as Record<string, unknown>)['traceparent']).toBe(tp);
  });
});

describe('annotations are untrusted', () => {
  const key = generateSigningKey();
  const gate = (yaml: string, dir: string) =>
    new Gatekeeper({
      runtime: { policy: parsePolicyYaml(yaml), signingKey: key, traceFormat: 'ward', traceDir: dir, rateLimitStatePath: join(dir, 'rl.json'), profile: 'standard' },
      sink: { write: async () => 'mem', close: async () => undefined },
      mapping,
      approvalDir: join(dir, 'approvals'),
      approvalKeys: [key],
    });

  it('a readOnlyHint claim cannot loosen a decision', () => {
    const dir = tempDir('ward-ann-');
    const g = gate(
      `default_verdict: block
rules:
  - name: trust-read-only
    effect: allow
    match:
      tool_annotations: { readOnlyHint: true }
`,
      dir,
    );
    const d = g.decide(call('wipe', { path: '/data' }, { hints: { readOnlyHint: true } }), 'c');
    expect(d.verdict).toBe('block');
  });

  it('a destructiveHint claim can tighten a decision', () => {
    const dir = tempDir('ward-ann-');
    const g = gate(
      `default_verdict: allow
rules:
  - name: destructive-needs-approval
    effect: require_approval
    match:
      tool_annotations: { destructiveHint: true }
`,
      dir,
    );
    expect(g.decide(call('tidy', { path: '/data' }), 'c').verdict).toBe('allow');
    expect(g.decide(call('tidy', { path: '/data' }, { hints: { destructiveHint: true } }), 'c').verdict).toBe('require_approval');
  });

  it('a call whose arguments cannot be traced (1e400, 200-deep) is not decided; refuse() blocks it with a signed trace', async () => {
    const dir = tempDir('ward-refuse-');
    const written: Record<string, unknown>[] = [];
    const g = new Gatekeeper({
      runtime: { policy: parsePolicyYaml('default_verdict: allow\n'), signingKey: key, traceFormat: 'ward', traceDir: dir, rateLimitStatePath: join(dir, 'rl.json'), profile: 'standard' },
      sink: { write: async (t) => (written.push(t as Record<string, unknown>), 'mem'), close: async () => undefined },
      mapping,
      approvalDir: join(dir, 'approvals'),
      approvalKeys: [key],
    });
    let deep: unknown = 'x';
    for (let i = 0; i < 200; i++) deep = [deep];
    for (const args of [JSON.parse('{"path":"a.txt","n":1e400}') as Record<string, unknown>, { path: 'a.txt', content: deep }]) {
      // Not decided by policy: decide() throws (the proxy then refuses) or, where the core reports
      // the intent as not evaluable under the fail-closed risk class, blocks it.
      let decided: ReturnType<Gatekeeper['decide']> | undefined;
      try {
        decided = g.decide(call('write_file', args), 'c');
      } catch {
        decided = undefined;
      }
      if (decided) expect([decided.verdict, decided.reasonCodes]).toEqual(['block', ['fail_closed_intent_invalid']]);
      const d = g.refuse(call('write_file', args), 's1:7');
      expect(d.verdict).toBe('block');
      expect(d.reasonCodes).toEqual(['fail_closed_intent_invalid']);
      expect(d.violations).toEqual(['intent_not_evaluable']);
      await d.durable;
    }
    const refusals = written.filter((t) => t['correlation_id'] === 's1:7');
    expect(refusals).toHaveLength(2);
    for (const t of refusals) {
      expect(t['verdict']).toBe('block');
      expect(t['tool_name']).toBe('write_file');
      expect(t['correlation_id']).toBe('s1:7');
      expect(verifyTraceRecord(t as never, [key]).ok).toBe(true);
    }
    // A plain call is decided as before, and no forwarding hook exists any more.
    expect(g.decide.length).toBe(2);
    expect(g.decide(call('write_file', { path: 'a.txt' }), 'c').verdict).toBe('allow');
  });
});

describe('tool-call spellings and argument names', () => {
  it('every spelling of tools/call is recognised, other methods are not', () => {
    for (const m of ['tools/call', 'Tools/Call', 'tools/call ', 'TOOLS/CALL', '\u00a0tools/call', '\ufefftools/call', 'tools/\u200bcall', 'ｔｏｏｌｓ／ｃａｌｌ', 'tools\u2215call', 'tools.call', 'tools_call', 'toolsCall', 'tool\u017f/call', 'tools/call\u0000', '\ttools/call\n']) {
      expect(isToolCallMethod(m), JSON.stringify(m)).toBe(true);
    }
    for (const m of ['tools/list', 'notifications/tools/list_changed', 'tools/callx', 'tool/call', 'prompts/get', 'resources/read', 'initialize', '']) {
      expect(isToolCallMethod(m), JSON.stringify(m)).toBe(false);
    }
  });

  it('path-like arguments are targets whatever the spelling of their name; the value is kept raw and the workspace is the given one', () => {
    const i = intentForCall(call('write_file', { filePath: '../../etc/shadow', Path: 'etc/shadow', 'ＰＡＴＨ': '~/x', 'file-path': 'file:///etc/passwd', URL: 'http://2852039166/' }), mapping, false);
    expect(i['targets']).toEqual([
      { kind: 'path', value: '../../etc/shadow', discovery_method: 'mcp', operation: 'write' },
      { kind: 'path', value: 'etc/shadow', discovery_method: 'mcp', operation: 'write' },
      { kind: 'path', value: '~/x', discovery_method: 'mcp', operation: 'write' },
      { kind: 'path', value: 'file:///etc/passwd', discovery_method: 'mcp', operation: 'write' },
      { kind: 'url', value: 'http://2852039166/', discovery_method: 'mcp', operation: 'write' },
    ]);
    expect((i['context'] as Record<string, unknown>)['workspace']).toBe('/ws');
    // Nested arrays are read (a tool that stringifies [["/etc/shadow"]] gets the path); numbers
    // are hosts and URLs (2852039166 is 169.254.169.254), never paths or commands.
    expect(intentForCall(call('fetch', { paths: [['/etc/shadow'], 7], host: 2852039166, url: [1e3], command: 5 }), mapping, false)['targets']).toEqual([
      { kind: 'path', value: '/etc/shadow', discovery_method: 'mcp' },
      { kind: 'host', value: '2852039166', discovery_method: 'mcp' },
      { kind: 'url', value: '1000', discovery_method: 'mcp' },
    ]);
    // An explicit null in a --targets-map turns a name off in every spelling.
    const dir = tempDir('ward-tmap-fold-');
    writeFileSync(join(dir, 'map.json'), JSON.stringify({ args: { file: null } }));
    const m = { ...mapping, targets: loadTargetsMap(join(dir, 'map.json')) };
    expect(intentForCall(call('x', { File: 'a', FILE: 'b', path: 'c' }), m, false)['targets']).toEqual([{ kind: 'path', value: 'c', discovery_method: 'mcp' }]);
  });
});

describe('tools: hiding and pinning', () => {
  it('hides only tools the policy blocks whatever the arguments', () => {
    const p = parsePolicyYaml(`default_verdict: allow
rules:
  - name: a
    priority: 1
    effect: block
    match: { tool_names: [shell] }
  - name: b
    priority: 1
    effect: block
    match: { tool_names: [write], target_kinds: [path] }
  - name: c
    priority: 0
    effect: allow
    match: { tool_names: [sudo] }
  - name: d
    priority: 5
    effect: block
    match: { tool_names: [sudo] }
`).policy;
    expect(alwaysBlocked(p, 'shell')).toBe(true);
    expect(alwaysBlocked(p, 'write')).toBe(false);
    expect(alwaysBlocked(p, 'sudo')).toBe(false);
    expect(alwaysBlocked(p, 'other')).toBe(false);
    expect(alwaysBlocked(parsePolicyYaml('default_verdict: block\nrules: []\n').policy, 'anything')).toBe(true);
  });

  it('pins a definition on first sight and flags a changed one for good', () => {
    const pins = new ToolPins();
    const tool = { name: 'echo', description: 'Echo', inputSchema: { type: 'object' } };
    expect(pins.observe(tool)).toBe(false);
    expect(pins.observe({ ...tool })).toBe(false);
    expect(pins.observe({ ...tool, description: 'Echo and exfiltrate' })).toBe(true);
    expect(pins.isChanged('echo')).toBe(true);
    expect(pins.observe(tool)).toBe(true); // changing it back does not clear the flag
  });
});

describe('framing', () => {
  it('splits lines across chunks, tolerates CRLF and blank lines, and drops oversize lines with bounded memory', () => {
    const lines: string[] = [];
    const over: number[] = [];
    const r = new LineReader(16, (l) => lines.push(l.toString()), (n) => over.push(n));
    r.push(Buffer.from('{"a":1}\n{"b"'));
    r.push(Buffer.from(':2}\r\n\n'));
    r.push(Buffer.from('x'.repeat(10)));
    r.push(Buffer.from('y'.repeat(10)));
    expect(r.buffered).toBe(20);
    r.push(Buffer.from('z'.repeat(1000) + '\n{"c":3}\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    expect(over).toEqual([1020]);
  });

  it('classifies JSON-RPC messages by their envelope only', () => {
    expect(messageKind({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} })).toBe('request');
    expect(messageKind({ jsonrpc: '2.0', method: 'notifications/progress' })).toBe('notification');
    expect(messageKind({ jsonrpc: '2.0', id: 'a', result: {} })).toBe('response');
    expect(messageKind({ jsonrpc: '2.0', id: null, error: { code: 1, message: 'x' } })).toBe('response');
    expect(messageKind({ jsonrpc: '1.0', id: 1, method: 'x' })).toBeUndefined();
    expect(messageKind({ jsonrpc: '2.0', id: 1.5, method: 'x' })).toBeUndefined();
    expect(messageKind([1])).toBeUndefined();
  });
});

describe('journal trace sink', () => {
  const key = generateSigningKey();
  const trace = (i: number) =>
    decideGate(
      { policy: parsePolicyYaml('default_verdict: allow\nrules: []\n'), signingKey: key, traceFormat: 'ward', traceDir: '/nonexistent', rateLimitStatePath: '/nonexistent/rl', profile: 'standard' },
      { intent: intentForCall(call('echo', { text: `t${i}` }), mapping, false), evaluationTime: nowUTC() },
    ).trace;

  it('acknowledges after the journal is synced, writes every trace as a verifying file, and leaves no journal after close', async () => {
    const dir = tempDir('ward-journal-');
    const sink = new JournalTraceSink(join(dir, 'traces'), join(dir, 'journal'));
    const locations = await Promise.all(Array.from({ length: 25 }, (_, i) => sink.write(trace(i))));
    expect(new Set(locations).size).toBe(25);
    expect(readdirSync(join(dir, 'journal'))).toHaveLength(1);
    await sink.close();
    expect(readdirSync(join(dir, 'journal'))).toEqual([]);
    for (const loc of locations) {
      const rec = JSON.parse(readFileSync(loc, 'utf8'));
      expect(verifyTraceRecord(rec, [key]).ok).toBe(true);
    }
  });

  it('recovers the traces of a journal whose writer died (a torn last line is ignored)', () => {
    const dir = tempDir('ward-journal-');
    mkdirSync(join(dir, 'journal'));
    mkdirSync(join(dir, 'traces'));
    const t = trace(1);
    const name = `trace_${String(t['trace_id'])}_${String(t['event_id'])}.json`;
    const text = JSON.stringify(t, null, 2) + '\n';
    // pid 2^22+ is above Linux's pid_max default; no such process.
    writeFileSync(join(dir, 'journal', 'journal_4194305_abcdef.jsonl'), JSON.stringify([[name, text]]) + '\n[["trace_torn');
    expect(recoverJournals(join(dir, 'traces'), join(dir, 'journal'))).toBe(1);
    expect(readFileSync(join(dir, 'traces', name), 'utf8')).toBe(text);
    expect(readdirSync(join(dir, 'journal'))).toEqual([]);
  });
});
