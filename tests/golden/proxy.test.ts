// Golden outputs of `ward mcp proxy` over stdio in front of fixtures/mcp/tiny-server.mjs: the exact
// JSON-RPC lines the client receives (`_meta.ward`, deny replies, forwarded results) and every trace
// the proxy wrote (see golden.ts for masks and regeneration).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killSwitchIn, killSwitchJournal, awayFromHourBoundary, expectGolden, fixture, golden, Masker, parseJsonText, REPO, runWard, traceFile, WARD, WARD_ENV, workDir, guardInputs } from './golden.js';

guardInputs();

const POLICY = golden('inputs/mcp-policy.yaml');
const TINY = fixture('mcp/tiny-server.mjs');

/** A proxy process spoken to in raw newline-delimited JSON-RPC, so the bytes it writes are what is pinned. */
class Proxy {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  stderr = '';
  #buf = '';
  #waiters: (() => void)[] = [];

  constructor(
    readonly dir: string,
    key: string,
    extra: string[] = [],
  ) {
    const args = [WARD, 'mcp', 'proxy', '--policy', POLICY, '--key-mode', 'prod', '--private-key', key, '--workspace', '/golden/ws', ...extra, '--', process.execPath, TINY];
    this.child = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, ...WARD_ENV }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.#buf += d.toString();
      let i;
      while ((i = this.#buf.indexOf('\n')) >= 0) {
        this.lines.push(this.#buf.slice(0, i + 1));
        this.#buf = this.#buf.slice(i + 1);
      }
      for (const w of this.#waiters.splice(0)) w();
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
  }

  send(msg: unknown): void {
    this.child.stdin!.write(JSON.stringify(msg) + '\n');
  }

  /** The exact line answering request `id`. */
  async reply(id: number): Promise<string> {
    const deadline = Date.now() + 25_000; // a loaded machine (the full suite) starts the proxy slowly
    for (;;) {
      const line = this.lines.find((l) => (JSON.parse(l) as { id?: number }).id === id);
      if (line) return line;
      if (Date.now() > deadline) throw new Error(`no reply ${id}; got ${this.lines.join('')} stderr ${this.stderr}`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 100);
      });
    }
  }

  async initialize(): Promise<string> {
    this.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'golden', version: '1.0.0' } } });
    const line = await this.reply(0);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return line;
  }

  async call(id: number, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const line = await this.reply(id);
    expect(line.endsWith('\n')).toBe(true);
    const { format, value } = parseJsonText(line.slice(0, -1), `reply ${id}`);
    return { request: { id, name, arguments: args }, line_format: `${format}+lf`, reply: value };
  }

  async close(): Promise<number | null> {
    const exited = new Promise<number | null>((r) => this.child.once('exit', (code) => r(code)));
    this.child.stdin!.end();
    return exited;
  }
}

function masker(dir: string): Masker {
  // Each proxy process makes up a random session id (mcp_<24 hex>) and a run id from it; both are in
  // every intent's context, so intent digests and trace ids differ per run too (numbered, so equal
  // ids stay equal). Intents are stamped with the wall clock (created_at), so is the kill-switch check (evaluated_at).
  return new Masker({ created_at: '<CREATED_AT>', evaluated_at: '<EVALUATED_AT>' })
    .number('intent_digest', 'INTENT_DIGEST', 16)
    .number('trace_id', 'TRACE_ID')
    .pattern(/mcp_mcp[0-9a-f]{24}/g, '<RUN_ID>')
    .pattern(/mcp_[0-9a-f]{24}/g, '<SESSION_ID>')
    .substitute(dir, '<WORK>')
    .substitute(REPO.replace(/\/$/, ''), '<REPO>')
    .substitute(`--approver ${userInfo().username} `, '--approver <USER> ');
}

/** Every trace file the proxy wrote, verified, in request order (the correlation id is `<session>:<request id>`). */
function tracesOf(dir: string): Record<string, unknown>[] {
  const tdir = join(dir, '.ward', 'traces');
  const names = readdirSync(tdir).filter((n) => n.startsWith('trace_') && n.endsWith('.json'));
  const files = names.map((n) => traceFile(join(tdir, n)));
  // Request ids are numbers here; a refused notification's is `notification-<n>`: after the requests.
  const rank = (f: Record<string, unknown>) => {
    const id = String((f['trace'] as Record<string, unknown>)['correlation_id']).split(':').pop()!;
    return /^\d+$/.test(id) ? Number(id) : 1e9 + Number(id.replace(/\D/g, ''));
  };
  return files.sort((a, b) => rank(a) - rank(b));
}

describe('golden: ward mcp proxy over stdio', () => {
  let dir: string;
  let key: string;
  let proxy: Proxy;
  const calls: Record<string, unknown>[] = [];
  let minted: { tokenId: string } | undefined;

  beforeAll(async () => {
    ({ dir, key } = workDir('proxy'));
    proxy = new Proxy(dir, key);
  });

  afterAll(async () => {
    if (proxy.child.exitCode === null) await proxy.close();
  });

  it('initialize and tools/list pass through', async () => {
    const init = await proxy.initialize();
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const list = await proxy.reply(1);
    expectGolden('proxy/initialize-and-list', { initialize: parseJsonText(init.slice(0, -1), 'init'), tools_list: parseJsonText(list.slice(0, -1), 'list') }, masker(dir));
  });

  it('allow (forwarded), block by rule, default block for an unknown tool', async () => {
    calls.push(await proxy.call(10, 'echo', { text: 'golden' }));
    calls.push(await proxy.call(11, 'write_note', { path: '/golden/ws/note.txt', text: 'x' }));
    calls.push(await proxy.call(12, 'no_such_tool', {}));
  });

  it('require_approval without a token, then allowed with a token in the approval dir', async () => {
    // A fixed path (the tiny server deletes with force): a path in the work dir would change the args digest.
    const notePath = '/golden/ws/note-to-delete.txt';
    const first = await proxy.call(20, 'delete_note', { path: notePath });
    calls.push(first);
    const ward = ((first['reply'] as { result: { _meta: { ward: Record<string, unknown> } } }).result._meta.ward);
    expect(ward['verdict']).toBe('require_approval');
    const tokenPath = join(dir, '.ward', 'approvals', 'golden-token.json');
    const r = runWard(
      [
        'approve', '--intent-digest', String(ward['intent_digest']), '--policy-digest', String(ward['policy_digest']), '--scope', 'tool:delete_note,phase:apply,destructive:apply',
        '--ttl', '1h', '--approver', 'golden-approver', '--reason-code', 'golden-change', '--key-mode', 'prod', '--private-key', key, '--out', tokenPath, '--json',
      ],
      { cwd: dir },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    minted = { tokenId: String((JSON.parse(readFileSync(tokenPath, 'utf8')) as Record<string, unknown>)['token_id']) };
    calls.push(await proxy.call(21, 'delete_note', { path: notePath }));
  });

  it('rate limit: first call forwarded, second exceeded', async () => {
    await awayFromHourBoundary();
    calls.push(await proxy.call(30, 'big', { bytes: 3 }));
    calls.push(await proxy.call(31, 'big', { bytes: 3 }));
  });

  it('refusals: a listed tool in another spelling, a misspelled method, no tool name, a tools/call notification', async () => {
    calls.push(await proxy.call(40, 'Echo', { text: 'golden' }));
    proxy.send({ jsonrpc: '2.0', id: 41, method: 'tools/Call', params: { name: 'echo', arguments: { text: 'golden' } } });
    calls.push({ request: { id: 41, method: 'tools/Call' }, reply: JSON.parse(await proxy.reply(41)) as unknown });
    proxy.send({ jsonrpc: '2.0', id: 42, method: 'tools/call', params: { arguments: {} } });
    calls.push({ request: { id: 42, params: { arguments: {} } }, reply: JSON.parse(await proxy.reply(42)) as unknown });
    // No id, so no reply; the refusal is traced (and the echo below proves it was handled first).
    proxy.send({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo', arguments: { text: 'as a notification' } } });
    calls.push(await proxy.call(43, 'echo', { text: 'after the notification' }));
  });

  it('the replies and the traces written, once the proxy has exited', async () => {
    const code = await proxy.close();
    const m = masker(dir);
    if (minted) m.substitute(minted.tokenId, '<APPROVAL_TOKEN_ID>');
    expectGolden('proxy/calls', { exit_code: code, calls, traces: tracesOf(dir) }, m);
  });
});

describe('golden: ward mcp proxy over stdio, --deny-as error and an active kill switch', () => {
  it('a call the kill switch stops gets JSON-RPC error -32060; its trace is written', async () => {
    const { dir, key } = workDir('proxy-ks');
    const proxy = new Proxy(dir, key, ['--deny-as', 'error', '--kill-switch-state', killSwitchIn(dir)]);
    await proxy.initialize();
    const calls = [await proxy.call(10, 'echo', { text: 'stopped' }), await proxy.call(11, 'write_note', { path: '/golden/ws/note.txt', text: 'x' })];
    const code = await proxy.close();
    const journal = killSwitchJournal(dir);
    expectGolden('proxy/deny-as-error-kill-switch', { exit_code: code, calls, traces: tracesOf(dir), ...(journal ? { kill_switch_journal: journal } : {}) }, masker(dir));
  });
});

describe('golden: ward mcp proxy --listen (Streamable HTTP toward the client)', () => {
  let dir: string;
  let key: string;
  let child: ChildProcess;
  let base: URL;

  beforeAll(async () => {
    ({ dir, key } = workDir('proxy-http'));
    const args = [WARD, 'mcp', 'proxy', '--policy', POLICY, '--key-mode', 'prod', '--private-key', key, '--workspace', '/golden/ws', '--listen', '127.0.0.1:0', '--', process.execPath, TINY];
    child = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, ...WARD_ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    base = await new Promise<URL>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) resolve(new URL(m[1]!));
      });
      child.on('exit', (code) => reject(new Error(`proxy exited ${code}: ${err}`)));
    });
  });

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });

  /** Headers that carry the wall clock or connection handling; the rest are pinned in the order sent. */
  const UNPINNED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

  async function send(method: string, headers: Record<string, string>, body?: unknown, path?: string): Promise<{ status: number; headers: [string, string][]; text: string; sessionId?: string }> {
    const { request } = await import('node:http');
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(path ? new URL(path, base) : base, { method, headers: { ...headers, ...(text !== undefined ? { 'content-length': String(Buffer.byteLength(text)) } : {}) } }, (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (t += d));
        res.on('end', () => {
          const pairs: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const k = res.rawHeaders[i]!.toLowerCase();
            if (!UNPINNED.has(k)) pairs.push([k, res.rawHeaders[i + 1]!]);
          }
          const sid = res.headers['mcp-session-id'];
          resolve({ status: res.statusCode ?? 0, headers: pairs, text: t, ...(typeof sid === 'string' ? { sessionId: sid } : {}) });
        });
      });
      req.on('error', reject);
      req.end(text);
    });
  }

  it('initialize, calls (allow, block, require_approval), protocol errors and edge refusals, and the traces written', async () => {
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await send('POST', json, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'golden', version: '1.0.0' } } });
    const sid = init.sessionId!;
    expect(sid).toBeDefined();
    const inSession = { ...json, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await send('POST', inSession, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const calls = {
      allow: await send('POST', inSession, { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'echo', arguments: { text: 'golden' } } }),
      block: await send('POST', inSession, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'write_note', arguments: { path: '/golden/ws/note.txt', text: 'x' } } }),
      require_approval: await send('POST', inSession, { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'delete_note', arguments: { path: '/golden/ws/note.txt' } } }),
    };
    const refusals = {
      no_session: await send('POST', json, { jsonrpc: '2.0', id: 20, method: 'tools/list' }),
      unknown_session: await send('POST', { ...json, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }, { jsonrpc: '2.0', id: 21, method: 'tools/list' }),
      text_plain: await send('POST', { 'content-type': 'text/plain' }, 'x'),
      foreign_host: await send('POST', { ...json, host: 'evil.example' }, {}),
      wrong_path: await send('POST', json, {}, '/other'),
    };
    const terminated = await send('DELETE', { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    // Stop the proxy so every trace is a file.
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    const code = await exited;
    const m = masker(dir)
      .substitute(sid, '<HTTP_SESSION_ID>')
      // The run id is made from the (random) session id: mcp_<its letters and digits, 32 at most>.
      .substitute(`mcp_${sid.replace(/[^A-Za-z0-9]/g, '').slice(0, 32)}`, '<RUN_ID>')
      .substitute(`${base.host}`, '<HOST:PORT>');
    expectGolden('proxy/http', { initialize: init, initialized, calls, refusals, terminated, exit_code: code, traces: tracesOf(dir) }, m);
  });
});
