import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, ward, WARD } from '../../cli/run.js';
import { connect, EVERYTHING, FILESYSTEM, node, RawProxy, startListening, stopListeners, TINY, traceFiles, writePolicy } from './helpers.js';

const FS_POLICY = `default_verdict: allow
rules:
  - name: writes-need-approval
    priority: 20
    effect: require_approval
    match:
      tool_names: [write_file, delete_note]
`;

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };

interface Asked {
  message: string;
  schema: Record<string, unknown>;
}

/** An SDK client that declares form elicitation and answers each elicitation with the next scripted answer. */
function elicitingClient(answers: Answer[], asked: Asked[]): Client {
  const client = new Client({ name: 'ward-elicit-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as { message: string; requestedSchema: Record<string, unknown> };
    asked.push({ message: params.message, schema: params.requestedSchema });
    const answer = answers.shift() ?? { action: 'decline' };
    return answer as never;
  });
  return client;
}

async function stdioElicitingClient(cwd: string, wardArgs: string[], server: string[], answers: Answer[], asked: Asked[]) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [WARD, 'mcp', 'proxy', ...wardArgs, '--', ...server],
    cwd,
    env: { ...(process.env as Record<string, string>), WARD_STATE_DIR: '' },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = elicitingClient(answers, asked);
  await client.connect(transport);
  return { client, stderr: () => err };
}

function traces(cwd: string): Record<string, unknown>[] {
  return traceFiles(cwd).map((n) => JSON.parse(readFileSync(join(cwd, '.ward', 'traces', n), 'utf8')) as Record<string, unknown>);
}

function usedTokens(cwd: string): { name: string; token: Record<string, unknown>; mode: number }[] {
  const dir = join(cwd, '.ward', 'approvals', 'used');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((name) => ({
    name,
    token: JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown>,
    mode: statSync(join(dir, name)).mode & 0o777,
  }));
}

const wardOf = (r: { _meta?: unknown }) => (r._meta as { ward: Record<string, unknown> }).ward;

describe('ward mcp proxy --approval elicit (stdio)', () => {
  it('server-filesystem: accept runs the call with a signed one-use approval; decline does not run it', async () => {
    const cwd = tempDir('ward-mcp-elicit-fs-');
    const root = join(cwd, 'files');
    mkdirSync(root);
    writePolicy(cwd, FS_POLICY);
    const asked: Asked[] = [];
    const answers: Answer[] = [
      { action: 'accept', content: { approve: true, reason: 'CHG-42' } },
      { action: 'decline' },
      { action: 'accept', content: { approve: false } },
    ];
    const p = await stdioElicitingClient(cwd, ['--policy', 'policy.yaml', '--approval', 'elicit'], node(FILESYSTEM, root), answers, asked);
    const ok = join(root, 'approved.txt');
    const no = join(root, 'declined.txt');
    try {
      const r = await p.client.callTool({ name: 'write_file', arguments: { path: ok, content: 'yes' } });
      expect(r.isError).toBeFalsy();
      expect(readFileSync(ok, 'utf8')).toBe('yes');
      expect(asked).toHaveLength(1);
      expect(asked[0]!.message).toContain('"write_file"');
      expect(asked[0]!.message).toContain(`path ${ok} (write)`);
      expect(asked[0]!.message).toContain('matched_rule_writes_need_approval');
      expect(asked[0]!.schema['required']).toEqual(['approve']);

      const d = await p.client.callTool({ name: 'write_file', arguments: { path: no, content: 'no' } });
      expect(d.isError).toBe(true);
      expect(wardOf(d)['verdict']).toBe('require_approval');
      expect(wardOf(d)['elicitation']).toBe('declined');
      expect(JSON.stringify(d.content)).toContain('declined');
      // The same write again: the first approval was for one call, so Ward asks again (and the form is not approved).
      const again = await p.client.callTool({ name: 'write_file', arguments: { path: ok, content: 'yes' } });
      expect(wardOf(again)['elicitation']).toBe('not_approved');
      expect(asked).toHaveLength(3);
      // Give a (wrongly) forwarded call time to land, then prove it did not.
      await p.client.callTool({ name: 'list_directory', arguments: { path: root } });
      expect(existsSync(no)).toBe(false);
    } finally {
      await p.client.close();
    }
    const all = traces(cwd);
    const writes = all.filter((t) => t['tool_name'] === 'write_file');
    expect(writes.map((t) => t['verdict']).sort()).toEqual(['allow', 'require_approval', 'require_approval', 'require_approval']);
    const granted = writes.find((t) => t['verdict'] === 'allow')!;
    expect(granted['reason_codes']).toContain('approval_granted');
    const first = writes.find((t) => t['verdict'] === 'require_approval' && t['intent_digest'] === granted['intent_digest'])!;
    expect(first).toBeDefined();
    const v = ward(['trace', 'verify', '.ward/traces'], { cwd });
    expect(v.code).toBe(0);
    // The approval is evidence: signed, bound to the intent and policy digests, named for the client, 0600.
    const tokens = usedTokens(cwd);
    expect(tokens).toHaveLength(1);
    const t = tokens[0]!;
    expect(t.mode).toBe(0o600);
    expect(t.token['intent_digest']).toBe(granted['intent_digest']);
    expect(t.token['policy_digest']).toBe(granted['policy_digest']);
    expect(t.token['approver_identity']).toBe('mcp-elicitation:ward-elicit-test');
    expect(t.token['reason_code']).toBe('CHG-42');
    expect(t.token['scope']).toEqual(['tool:write_file']);
    expect(readdirSync(join(cwd, '.ward', 'approvals')).filter((n) => n.endsWith('.json'))).toEqual([]);
    expect(p.stderr()).toContain('approval request for write_file: approved');
  });

  it('a client without the elicitation capability gets the token reply, which says so; nothing is forwarded', async () => {
    const cwd = tempDir('ward-mcp-elicit-none-');
    writePolicy(cwd, FS_POLICY);
    const note = join(cwd, 'keep.txt');
    writeFileSync(note, 'here');
    const p = await connect(node(TINY), { cwd, ward: ['--policy', 'policy.yaml', '--approval', 'elicit'] });
    try {
      const r = await p.client.callTool({ name: 'delete_note', arguments: { path: note } });
      expect(r.isError).toBe(true);
      const w = wardOf(r);
      expect(w['verdict']).toBe('require_approval');
      expect(w['elicitation']).toBe('unsupported');
      expect(String(w['approve_command'])).toMatch(/^(ward|\S+ \S+\/bin\/ward\.js) approve --intent-digest [0-9a-f]{64}/);
      expect(JSON.stringify(r.content)).toContain('did not declare the MCP elicitation capability');
      await p.client.callTool({ name: 'echo', arguments: { text: 'x' } });
      expect(existsSync(note)).toBe(true);
    } finally {
      await p.close();
    }
  });

  it('no answer within --call-timeout: the question is withdrawn and the call is not run', async () => {
    const cwd = tempDir('ward-mcp-elicit-timeout-');
    writePolicy(cwd, FS_POLICY);
    const note = join(cwd, 'keep.txt');
    writeFileSync(note, 'here');
    const log = join(cwd, 'server.log');
    const raw = new RawProxy(['--policy', 'policy.yaml', '--approval', 'elicit', '--call-timeout', '1s'], node(TINY), cwd, { TINY_SERVER_LOG: log });
    try {
      raw.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
      await raw.response(0);
      raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      raw.call(1, 'delete_note', { path: note });
      const ask = await raw.waitFor((m) => m['method'] === 'elicitation/create');
      expect(String(ask['id'])).toMatch(/^ward-elicit-[0-9a-f]{8}-1$/);
      const reply = await raw.response(1);
      const w = (reply['result'] as { _meta: { ward: Record<string, unknown> } })._meta.ward;
      expect(w['elicitation']).toBe('timeout');
      const cancelled = await raw.waitFor((m) => m['method'] === 'notifications/cancelled');
      expect((cancelled['params'] as Record<string, unknown>)['requestId']).toBe(ask['id']);
      // A late answer is Ward's to drop: it never reaches the server (which would log nothing anyway), and nothing runs.
      raw.send({ jsonrpc: '2.0', id: ask['id'], result: { action: 'accept', content: { approve: true } } });
      raw.call(2, 'echo', { text: 'after' });
      await raw.response(2);
      expect(existsSync(note)).toBe(true);
      expect(readFileSync(log, 'utf8')).not.toContain('delete_note');
    } finally {
      raw.end();
      await raw.exited;
    }
  });

  it('an answer to Ward\'s question is consumed by the proxy, never forwarded to the server', async () => {
    const cwd = tempDir('ward-mcp-elicit-raw-');
    writePolicy(cwd, FS_POLICY);
    const note = join(cwd, 'doomed.txt');
    writeFileSync(note, 'bye');
    // A server that logs every message it receives (the SDK server would silently ignore a stray response).
    const spy = join(cwd, 'spy.mjs');
    const seen = join(cwd, 'seen.log');
    writeFileSync(
      spy,
      `import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
const child = spawn(process.execPath, [${JSON.stringify(TINY)}], { stdio: ['pipe', 'inherit', 'inherit'] });
process.stdin.on('data', (d) => { appendFileSync(${JSON.stringify(seen)}, d); child.stdin.write(d); });
process.stdin.on('end', () => child.stdin.end());
`,
    );
    const raw = new RawProxy(['--policy', 'policy.yaml', '--approval', 'elicit'], node(spy), cwd);
    try {
      raw.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'raw', version: '1' } } });
      await raw.response(0);
      raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      raw.call(1, 'delete_note', { path: note });
      const ask = await raw.waitFor((m) => m['method'] === 'elicitation/create');
      raw.send({ jsonrpc: '2.0', id: ask['id'], result: { action: 'accept', content: { approve: true } } });
      const reply = await raw.response(1);
      expect(JSON.stringify(reply['result'])).toContain('deleted');
      expect(existsSync(note)).toBe(false);
      // A second (late) answer to the same question is dropped too.
      raw.send({ jsonrpc: '2.0', id: ask['id'], result: { action: 'accept', content: { approve: true } } });
      raw.call(2, 'echo', { text: 'after' });
      await raw.response(2);
    } finally {
      raw.end();
      await raw.exited;
    }
    const received = readFileSync(seen, 'utf8');
    expect(received).toContain('delete_note');
    expect(received).not.toContain('ward-elicit-');
  });

  it('--approval elicit with --approval-public-key is a usage error', () => {
    const cwd = tempDir('ward-mcp-elicit-usage-');
    writePolicy(cwd, FS_POLICY);
    writeFileSync(join(cwd, 'k.pub'), 'x');
    const r = ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--approval', 'elicit', '--approval-public-key', 'k.pub', '--', process.execPath, TINY], { cwd });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('--approval elicit');
  });
});

afterEach(stopListeners);

describe('ward mcp proxy --approval elicit --listen (Streamable HTTP)', () => {
  it('asks on the call\'s stream: accept runs the call, decline does not; traces verify', async () => {
    const cwd = tempDir('ward-mcp-elicit-http-');
    writePolicy(cwd, FS_POLICY);
    const a = join(cwd, 'a.txt');
    const b = join(cwd, 'b.txt');
    writeFileSync(a, 'a');
    writeFileSync(b, 'b');
    const proxy = startListening(cwd, [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--approval', 'elicit', '--listen', '127.0.0.1:0', '--', process.execPath, TINY]);
    const asked: Asked[] = [];
    const client = elicitingClient([{ action: 'accept', content: { approve: true } }, { action: 'cancel' }], asked);
    const transport = new StreamableHTTPClientTransport(await proxy.url);
    await client.connect(transport);
    try {
      const ok = await client.callTool({ name: 'delete_note', arguments: { path: a } });
      expect(ok.isError).toBeFalsy();
      expect(JSON.stringify(ok.content)).toContain('deleted');
      expect(existsSync(a)).toBe(false);
      const no = await client.callTool({ name: 'delete_note', arguments: { path: b } });
      expect(wardOf(no)['verdict']).toBe('require_approval');
      expect(wardOf(no)['elicitation']).toBe('cancelled');
      await client.callTool({ name: 'echo', arguments: { text: 'x' } });
      expect(existsSync(b)).toBe(true);
      expect(asked).toHaveLength(2);
      await transport.terminateSession();
    } finally {
      await client.close();
    }
    proxy.child.kill('SIGTERM');
    await new Promise((r) => proxy.child.once('exit', r));
    const verdicts = traces(cwd)
      .filter((t) => t['tool_name'] === 'delete_note')
      .map((t) => t['verdict'])
      .sort();
    expect(verdicts).toEqual(['allow', 'require_approval', 'require_approval']);
    expect(ward(['trace', 'verify', '.ward/traces'], { cwd }).code).toBe(0);
    expect(usedTokens(cwd)).toHaveLength(1);
  });
});

describe('--approval elicit for methods other than tools/call', () => {
  it('server-everything: resources/read that needs approval is asked about (method, URI, argument digest); accept reads it, decline does not', async () => {
    const cwd = tempDir('ward-mcp-elicit-method-');
    writePolicy(cwd, 'default_verdict: allow\nrules:\n  - name: reads-need-approval\n    priority: 20\n    effect: require_approval\n    match:\n      tool_names: [mcp.resource.read]\n');
    const asked: Asked[] = [];
    const p = await stdioElicitingClient(cwd, ['--policy', 'policy.yaml', '--approval', 'elicit'], [process.execPath, EVERYTHING, 'stdio'], [{ action: 'accept', content: { approve: true } }, { action: 'decline' }], asked);
    let uri = '';
    try {
      uri = (await p.client.listResources()).resources[0]!.uri;
      const read = await p.client.readResource({ uri });
      expect(read.contents[0]!.uri).toBe(uri);
      expect(asked).toHaveLength(1);
      expect(asked[0]!.message).toContain('the request "resources/read" (mcp.resource.read)');
      expect(asked[0]!.message).toContain(uri);
      expect(asked[0]!.message).toMatch(/Argument digest: [0-9a-f]{64}/);
      await expect(p.client.readResource({ uri })).rejects.toThrow(/declined/);
      expect(asked).toHaveLength(2);
    } finally {
      await p.client.close();
    }
    const reads = traces(cwd).filter((t) => t['tool_name'] === 'mcp.resource.read');
    expect(reads.map((t) => t['verdict']).sort()).toEqual(['allow', 'require_approval', 'require_approval']);
    const granted = reads.find((t) => t['verdict'] === 'allow')!;
    expect(granted['reason_codes']).toContain('approval_granted');
    // What the person saw is what the token allowed: the digest in the question is the granted call's.
    expect(asked[0]!.message).toContain(`Argument digest: ${String(granted['args_digest'])}`);
    const tokens = usedTokens(cwd);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]!.token['intent_digest']).toBe(granted['intent_digest']);
    expect(ward(['trace', 'verify', '.ward/traces'], { cwd }).code).toBe(0);
  }, 60_000);
});
