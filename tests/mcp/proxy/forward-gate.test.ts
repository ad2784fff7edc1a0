// Nothing reaches the MCP server undecided: a recording stub server behind the real `ward mcp proxy`
// (bin/ward.js) logs every JSON-RPC message it receives, and each tool call among them must be an
// exact `tools/call` request with an `allow` trace on disk for the same call. Allowed, blocked,
// unevaluable (1e400, 200-deep), notification and misspelled tool calls are sent over raw stdio and
// over Streamable HTTP (`--listen`), batches included.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestJcs } from '../../../src/canon/digest.js';
import { isToolCallMethod } from '../../../src/mcp/proxy/jsonrpc.js';
import { REPO, tempDir, ward, WARD } from '../../cli/run.js';
import { RawProxy, startListening, stopListeners, writePolicy } from './helpers.js';

const RECORDER = join(REPO, 'tests', 'mcp', 'proxy', 'recording-server.mjs');

type Msg = Record<string, unknown>;

const policyFor = (cwd: string) => `default_verdict: allow
rules:
  - name: no-secrets
    priority: 10
    effect: block
    match:
      target_kinds: [path]
      target_values: [${JSON.stringify(join(cwd, 'blocked.txt'))}]
`;

/** Every message the recording server received, as parsed JSON (a line that is not JSON fails the test). */
function received(log: string): Msg[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Msg);
}

function traces(cwd: string): Msg[] {
  const dir = join(cwd, '.ward', 'traces');
  return readdirSync(dir)
    .filter((n) => n.startsWith('trace_') && n.endsWith('.json'))
    .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as Msg);
}

/** Anything that looks like a tool call: a method that folds to tools/call, or a batch holding one. */
function toolCallLike(m: unknown): boolean {
  if (Array.isArray(m)) return m.some(toolCallLike);
  return typeof m === 'object' && m !== null && typeof (m as Msg)['method'] === 'string' && isToolCallMethod((m as Msg)['method'] as string);
}

/**
 * The core check: every tool-call-like message that reached the server is an exact `tools/call`
 * request whose call has an `allow` trace (same id in the correlation id, same tool, same
 * arguments digest). Returns the ids of the calls that reached it.
 */
function assertOnlyAllowedCallsReached(got: Msg[], all: Msg[]): (string | number)[] {
  const ids: (string | number)[] = [];
  for (const m of got.filter(toolCallLike)) {
    expect(m['method']).toBe('tools/call');
    expect(m['id'] === undefined || m['id'] === null).toBe(false);
    const params = m['params'] as Msg;
    const id = m['id'] as string | number;
    const matching = all.filter(
      (t) => String(t['correlation_id']).endsWith(`:${String(id)}`) && t['tool_name'] === params['name'] && t['args_digest'] === digestJcs(params['arguments'] as never),
    );
    expect(matching.map((t) => t['verdict']), `trace for call ${String(id)}`).toEqual(['allow']);
    ids.push(id);
  }
  return ids;
}

function nested(depth: number): string {
  let s = '"x"';
  for (let i = 0; i < depth; i++) s = `[${s}]`;
  return s;
}

const write = (id: number | undefined, method: string, path: string, extra = '') =>
  `{"jsonrpc":"2.0",${id === undefined ? '' : `"id":${id},`}"method":${JSON.stringify(method)},"params":{"name":"write_file","arguments":{"path":${JSON.stringify(path)},"content":"x"${extra}}}}`;

const MISSPELLED = ['Tools/Call', 'tools/call ', 'TOOLS/CALL', 'ｔｏｏｌｓ／ｃａｌｌ', 'tools/\u200bcall', '\u00a0tools/call', 'tools.call'];

describe('ward mcp proxy: nothing reaches the server undecided (raw stdio, recording server)', () => {
  it('only allowed, traced tools/call requests reach the server; unevaluable, notification and misspelled tool calls are refused and traced', async () => {
    const cwd = tempDir('ward-mcp-gate-');
    const log = join(cwd, 'server.log');
    writePolicy(cwd, policyFor(cwd));
    // --max-call-keys raised: call 70 nests 100,000 arrays, which is to reach the engine's own refusal.
    const p = new RawProxy(['--policy', 'policy.yaml', '--capture-intents', '--max-call-keys', '200000'], [process.execPath, RECORDER], cwd, { RECORDING_SERVER_LOG: log });
    try {
      await p.initialize();
      p.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
      await p.response('list');

      p.send(write(1, 'tools/call', 'allowed.txt'));
      p.send(write(2, 'tools/call', join(cwd, 'blocked.txt')));
      p.send(write(3, 'tools/call', 'huge.txt', ',"n":1e400'));
      p.send(write(4, 'tools/call', 'deep.txt', `,"more":${nested(200)}`));
      p.send(write(undefined, 'tools/call', 'notification.txt'));
      p.send(write(undefined, 'Tools/Call', 'notification-misspelled.txt'));
      MISSPELLED.forEach((m, i) => p.send(write(10 + i, m, `misspelled-${i}.txt`)));
      p.send(`[${write(30, 'tools/call', 'batch.txt')},${write(31, 'tools/call', 'batch2.txt')}]`);
      // A repeated member name: Ward reads the last "method" (ping), a first-wins server would run the call.
      p.send(`{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"duplicate.txt","content":"x"}},"method":"ping"}`);
      // A listed tool in another spelling: refused (pins, annotations and target maps are keyed by the listed name).
      p.call(60, 'Write_File', { path: 'alias.txt', content: 'x' });
      p.call(61, 'ｅｃｈｏ', { text: 'wide' });
      // Valid JSON nested 100,000 levels deep: read (iteratively), found unevaluable, refused and traced.
      p.send(`{"jsonrpc":"2.0","id":70,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"very-deep.txt","content":${'['.repeat(100_000)}1${']'.repeat(100_000)}}}}`);
      // A tools/call without a usable name or arguments: refused (-32602) and traced.
      p.send('{"jsonrpc":"2.0","id":80,"method":"tools/call","params":{"name":"write_file","arguments":"path=bad.txt"}}');
      p.call(40, 'echo', { text: 'last' });

      const allowed = await p.response(1);
      expect(JSON.stringify(allowed['result'])).toContain('wrote allowed.txt');

      const blocked = (await p.response(2))['result'] as Msg;
      expect(blocked['isError']).toBe(true);
      const bw = (blocked['_meta'] as { ward: Msg }).ward;
      expect(bw['verdict']).toBe('block');
      expect(bw['reason_codes']).toEqual(['matched_rule_no_secrets']);

      for (const id of [3, 4]) {
        const r = (await p.response(id))['result'] as Msg;
        expect(r['isError'], `call ${id}`).toBe(true);
        const w = (r['_meta'] as { ward: Msg }).ward;
        expect(w['verdict']).toBe('block');
        expect(w['reason_codes']).toEqual(['fail_closed_intent_invalid']);
        expect(String(w['trace_id'])).toMatch(/^[0-9a-f]{24}$/);
      }

      for (let i = 0; i < MISSPELLED.length; i++) {
        const r = await p.response(10 + i);
        const err = r['error'] as { code: number; message: string; data: { ward: Msg } };
        expect(err.code, MISSPELLED[i]).toBe(-32601);
        expect(err.message).toContain('not exactly "tools/call"');
        expect(err.data.ward['verdict']).toBe('block');
        expect(err.data.ward['method']).toBe(MISSPELLED[i]);
      }

      // A batch is not a JSON-RPC message the stdio transport accepts: refused as a whole.
      const batch = await p.waitFor((m) => m['id'] === null && (m['error'] as { code?: number } | undefined)?.code === -32600);
      expect(batch['error']).toBeDefined();

      const dup = (await p.response(50))['error'] as { code: number; message: string };
      expect(dup.code).toBe(-32600);
      expect(dup.message).toContain('duplicate key "method"');

      for (const [id, listed] of [[60, 'write_file'], [61, 'echo']] as const) {
        const r = (await p.response(id))['result'] as Msg;
        const w = (r['_meta'] as { ward: Msg }).ward;
        expect([w['verdict'], w['refused'], w['listed_name']], `call ${id}`).toEqual(['block', 'tool_name_not_listed', listed]);
      }

      const veryDeep = ((await p.response(70))['result'] as Msg)['_meta'] as { ward: Msg };
      expect([veryDeep.ward['verdict'], veryDeep.ward['reason_codes'], veryDeep.ward['refused']]).toEqual(['block', ['fail_closed_intent_invalid'], 'not_evaluable']);

      const bad = (await p.response(80))['error'] as { code: number; data: { ward: Msg } };
      expect([bad.code, bad.data.ward['verdict'], bad.data.ward['refused']]).toEqual([-32602, 'block', 'invalid_params']);

      const last = await p.response(40);
      expect(JSON.stringify(last['result'])).toContain('echo: last');
      // Notifications get no reply: none of the above carries their effects.
      expect(p.messages.filter((m) => m['id'] === undefined)).toEqual([]);
    } finally {
      p.end();
      expect(await p.exited).toBe(0);
    }

    // Side effects: only the allowed write happened.
    expect(existsSync(join(cwd, 'allowed.txt'))).toBe(true);
    expect(readFileSync(log, 'utf8')).not.toContain('duplicate.txt');
    expect(readFileSync(log, 'utf8')).not.toContain('Write_File');
    for (const f of ['duplicate.txt', 'alias.txt', 'very-deep.txt', 'bad.txt', 'blocked.txt', 'huge.txt', 'deep.txt', 'notification.txt', 'notification-misspelled.txt', 'batch.txt', 'batch2.txt', ...MISSPELLED.map((_, i) => `misspelled-${i}.txt`)]) {
      expect(existsSync(join(cwd, f)), f).toBe(false);
    }

    // What reached the server: the handshake, the list and the two allowed calls, nothing else.
    const got = received(log);
    expect(got.map((m) => m['method'])).toEqual(['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'tools/call']);
    const all = traces(cwd);
    expect(assertOnlyAllowedCallsReached(got, all)).toEqual([1, 40]);

    // Every tool call was decided or refused, and traced: 2 allowed, 1 blocked by policy, 3
    // unevaluable (1e400, 200 and 100,000 levels deep), 2 notifications, the misspellings, 2
    // tool-name aliases, 1 with bad params. The batch and the duplicate-key message never became calls.
    const verdicts = all.map((t) => t['verdict']).sort();
    expect(verdicts.filter((v) => v === 'allow')).toHaveLength(2);
    expect(verdicts.filter((v) => v === 'block')).toHaveLength(1 + 3 + 2 + MISSPELLED.length + 2 + 1);
    const refusals = all.filter((t) => (t['reason_codes'] as string[]).includes('fail_closed_intent_invalid'));
    expect(refusals).toHaveLength(3 + 2 + MISSPELLED.length + 2 + 1);
    expect(refusals.filter((t) => /:notification-\d+$/.test(String(t['correlation_id'])))).toHaveLength(2);
    const v = ward(['trace', 'verify', '.ward/traces'], { cwd });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('the intent carries the absolute --workspace and path arguments as raw path targets; a relative path to a denied file is blocked', async () => {
    const cwd = tempDir('ward-mcp-ws-');
    const log = join(cwd, 'server.log');
    writePolicy(cwd, 'default_verdict: allow\nrules:\n  - name: no-shadow\n    effect: block\n    match: { target_kinds: [path], target_values: [/etc/shadow] }\n');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(cwd, 'sub'));
    const p = new RawProxy(['--policy', 'policy.yaml', '--capture-intents', '--workspace', 'sub'], [process.execPath, RECORDER], cwd, { RECORDING_SERVER_LOG: log });
    try {
      await p.initialize();
      p.call(1, 'echo', { text: 'x', path: '../sub/w.txt' });
      expect(JSON.stringify((await p.response(1))['result'])).toContain('echo: x');
      // Relative to the workspace, this is /etc/shadow: the core joins it to the intent's workspace.
      p.call(2, 'echo', { text: 'x', path: `${'../'.repeat(40)}etc/shadow` });
      const blocked = (await p.response(2))['result'] as Msg;
      expect((blocked['_meta'] as { ward: Msg }).ward['reason_codes']).toEqual(['matched_rule_no_shadow']);
    } finally {
      p.end();
      await p.exited;
    }
    const dir = join(cwd, '.ward', 'traces');
    const captures = readdirSync(dir).filter((n) => n.startsWith('capture_'));
    expect(captures).toHaveLength(2);
    const intent = captures
      .map((n) => (JSON.parse(readFileSync(join(dir, n), 'utf8')) as { intent: Msg }).intent)
      .find((i) => JSON.stringify(i['targets']).includes('w.txt'))!;
    const ws = resolve(cwd, 'sub');
    expect((intent['context'] as Msg)['workspace']).toBe(ws);
    const targets = intent['targets'] as Msg[];
    expect(targets).toHaveLength(1);
    expect(targets[0]!['kind']).toBe('path');
    // The value as sent: the core canonicalises it (once) for the rules, and records it in the trace.
    expect(['../sub/w.txt', join(ws, '../sub/w.txt')]).toContain(targets[0]!['value']);
    expect(p.messages.filter((m) => m['id'] === 2)).toHaveLength(1);
    expect(received(log).filter((m) => m['id'] === 2)).toEqual([]);
  });

  it('a cancellation that arrives before an allowed call is forwarded keeps it from the server', async () => {
    const cwd = tempDir('ward-mcp-cancel-');
    const log = join(cwd, 'server.log');
    writePolicy(cwd, 'default_verdict: allow\n');
    // --trace-sync fsync: the call waits for a disk sync before it may be forwarded; the
    // cancellation, in the same write, is read before that.
    const p = new RawProxy(['--policy', 'policy.yaml', '--trace-sync', 'fsync'], [process.execPath, RECORDER], cwd, { RECORDING_SERVER_LOG: log });
    try {
      await p.initialize();
      p.send(`${write(1, 'tools/call', 'cancelled.txt')}\n{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`);
      p.call(2, 'echo', { text: 'after' });
      await p.response(2);
    } finally {
      p.end();
      await p.exited;
    }
    const got = received(log);
    expect(existsSync(join(cwd, 'cancelled.txt'))).toBe(false);
    expect(got.filter((m) => m['id'] === 1)).toEqual([]);
    expect(got.filter((m) => m['method'] === 'notifications/cancelled')).toEqual([]);
    expect(p.messages.filter((m) => m['id'] === 1)).toEqual([]);
  });
});

// ---- Streamable HTTP toward the client --------------------------------------------------------

afterEach(stopListeners);

function listen(cwd: string, env: Record<string, string>): Promise<URL> {
  return startListening(cwd, [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--listen', '127.0.0.1:0', '--', process.execPath, RECORDER], env).url;
}

/** POST a body; returns the status and the JSON-RPC messages of the reply (JSON or SSE). */
async function post(url: URL, body: string, session?: string): Promise<{ status: number; session: string | null; messages: Msg[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(session ? { 'mcp-session-id': session } : {}),
    },
    body,
  });
  const text = await res.text();
  const messages: Msg[] = [];
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    for (const line of text.split('\n')) if (line.startsWith('data:') && line.slice(5).trim()) messages.push(JSON.parse(line.slice(5)) as Msg);
  } else if (text.trim()) {
    const v = JSON.parse(text) as Msg | Msg[];
    messages.push(...(Array.isArray(v) ? v : [v]));
  }
  return { status: res.status, session: res.headers.get('mcp-session-id'), messages };
}

describe('ward mcp proxy --listen: nothing reaches the server undecided (Streamable HTTP, batches)', () => {
  it('notifications and misspelled tool calls, alone or in a batch, never reach the server; allowed calls do, traced', async () => {
    const cwd = tempDir('ward-mcp-gate-http-');
    const log = join(cwd, 'server.log');
    writePolicy(cwd, policyFor(cwd));
    const url = await listen(cwd, { RECORDING_SERVER_LOG: log });
    const init = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-http', version: '1' } } }));
    expect(init.status).toBe(200);
    const sid = init.session!;
    expect(sid).toBeTruthy();
    expect((await post(url, '{"jsonrpc":"2.0","method":"notifications/initialized"}', sid)).status).toBe(202);

    // A notification tool call: accepted by HTTP (202, no reply channel), dropped by Ward.
    expect((await post(url, write(undefined, 'tools/call', 'notification.txt'), sid)).status).toBe(202);
    expect((await post(url, write(undefined, 'TOOLS/CALL', 'notification-2.txt'), sid)).status).toBe(202);

    const misspelled = await post(url, write(5, 'Tools/Call', 'misspelled.txt'), sid);
    expect(misspelled.messages).toHaveLength(1);
    expect((misspelled.messages[0]!['error'] as { code: number }).code).toBe(-32601);

    const unevaluable = await post(url, write(6, 'tools/call', 'huge.txt', ',"n":1e400'), sid);
    const uw = ((unevaluable.messages[0]!['result'] as Msg)['_meta'] as { ward: Msg }).ward;
    expect(uw['reason_codes']).toEqual(['fail_closed_intent_invalid']);

    // A batch mixing an allowed call, a blocked one, a misspelled one and a notification.
    const batch = await post(
      url,
      `[${write(7, 'tools/call', 'batch-allowed.txt')},${write(8, 'tools/call', join(cwd, 'blocked.txt'))},${write(9, 'tools/call ', 'batch-misspelled.txt')},${write(undefined, 'tools/call', 'batch-notification.txt')}]`,
      sid,
    );
    expect(batch.status).toBe(200);
    const byId = new Map(batch.messages.map((m) => [m['id'], m]));
    expect(JSON.stringify(byId.get(7)?.['result'])).toContain('wrote batch-allowed.txt');
    expect(((byId.get(8)?.['result'] as Msg)['_meta'] as { ward: Msg }).ward['verdict']).toBe('block');
    expect((byId.get(9)?.['error'] as { code: number }).code).toBe(-32601);

    const dup = await post(url, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"duplicate.txt","content":"x"}},"method":"ping"}`, sid);
    expect(dup.status).toBe(400);
    expect(JSON.stringify(dup.messages)).toContain('duplicate key');

    const ok = await post(url, write(10, 'tools/call', 'allowed.txt'), sid);
    expect(JSON.stringify(ok.messages[0]!['result'])).toContain('wrote allowed.txt');
    await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } });

    expect(existsSync(join(cwd, 'allowed.txt'))).toBe(true);
    expect(existsSync(join(cwd, 'batch-allowed.txt'))).toBe(true);
    expect(readFileSync(log, 'utf8')).not.toContain('duplicate.txt');
    for (const f of ['duplicate.txt', 'notification.txt', 'notification-2.txt', 'misspelled.txt', 'huge.txt', 'blocked.txt', 'batch-misspelled.txt', 'batch-notification.txt']) {
      expect(existsSync(join(cwd, f)), f).toBe(false);
    }
    const got = received(log);
    expect(got.filter(toolCallLike).map((m) => m['id'])).toEqual([7, 10]);
    // Traces are durably queued before a call is forwarded; the files follow from the journal.
    const deadline = Date.now() + 10_000;
    let all = traces(cwd);
    while (all.length < 9 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      all = traces(cwd);
    }
    expect(assertOnlyAllowedCallsReached(got, all)).toEqual([7, 10]);
    // 2 notifications, 2 misspelled, 1 unevaluable, 1 blocked, 2 allowed... plus the batch's notification.
    expect(all).toHaveLength(9);
    const v = ward(['trace', 'verify', '.ward/traces'], { cwd });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});
