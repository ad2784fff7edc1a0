import { request } from 'node:http';
import type { Server } from 'node:http';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/edge/guard.js';
import { parseListen, startMcpServe, type McpServeFlags } from '../../src/cli/commands/mcp-serve.js';
import { tempDir } from '../cli/run.js';
import { compat, inProcess, POLICY } from './helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

const BASE: McpServeFlags = {
  policy: POLICY,
  listen: '127.0.0.1:0',
  authMode: 'off',
  maxRequestBytes: String(1 << 20),
  httpVerdictStatus: 'compat',
};

async function serve(flags: Partial<McpServeFlags> = {}, env: Record<string, string> = {}) {
  const cwd = tempDir('ward-mcp-serve-');
  const p = inProcess(cwd, { env });
  const { server, address } = await startMcpServe(p.ctx, { ...BASE, ...flags });
  servers.push(server);
  return { cwd, port: address.port, startup: p.out() };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function http(port: number, path: string, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: opts.method ?? 'POST', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

const json = { 'content-type': 'application/json' };
const call = (name: string) => JSON.parse(readFileSync(compat(name), 'utf8'));
const evaluate = (port: number, body: unknown, path = '/v1/evaluate', headers: Record<string, string> = json) =>
  http(port, path, { body: JSON.stringify(body), headers });

describe('ward mcp serve', () => {
  it('GET /healthz answers without auth', async () => {
    const s = await serve({ authMode: 'token', authTokenEnv: 'TOK' }, { TOK: 'secret' });
    const r = await http(s.port, '/healthz', { method: 'GET' });
    expect(r.status).toBe(200);
    expect(r.body).toBe('{"ok":true,"service":"gait.mcp.serve"}\n');
  });

  it('POST /v1/evaluate returns the decision in struct order plus exit_code, with a trace on disk', async () => {
    const s = await serve();
    const r = await evaluate(s.port, { call: call('call-mcp-read.json') });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body.endsWith('}\n')).toBe(true);
    const body = JSON.parse(r.body);
    expect(Object.keys(body).slice(0, 8)).toEqual(['ok', 'executed', 'adapter', 'run_id', 'phase', 'session_id', 'tool_name', 'verdict']);
    expect(Object.keys(body).at(-1)).toBe('exit_code');
    expect(body).toMatchObject({ ok: true, executed: false, verdict: 'allow', exit_code: 0 });
    expect(existsSync(body.trace_path)).toBe(true);
    expect(body.trace_path.startsWith(join(s.cwd, '.ward', 'traces'))).toBe(true);
  });

  it('the adapter can be chosen per request; block is 200 in compat mode', async () => {
    const s = await serve();
    const r = await evaluate(s.port, { adapter: 'claude_code', call: call('call-claude-code.json') });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ adapter: 'claude_code', verdict: 'block', exit_code: 3 });
  });

  it('--http-verdict-status strict: 403 block, 409 require_approval and dry_run, 200 allow', async () => {
    const s = await serve({ httpVerdictStatus: 'strict' });
    expect((await evaluate(s.port, { call: call('call-mcp-read.json') })).status).toBe(200);
    expect((await evaluate(s.port, { adapter: 'claude_code', call: call('call-claude-code.json') })).status).toBe(403);
    expect((await evaluate(s.port, { call: call('call-mcp-write.json') })).status).toBe(409);
    expect((await evaluate(s.port, { call: { name: 'tool.deploy' } })).status).toBe(409);
  });

  it('/v1/evaluate/sse sends exactly one evaluate event; /v1/evaluate/stream one NDJSON line', async () => {
    const s = await serve();
    const sse = await evaluate(s.port, { call: call('call-mcp-read.json') }, '/v1/evaluate/sse');
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toBe('text/event-stream');
    expect(sse.headers['cache-control']).toBe('no-cache');
    expect(sse.body).toMatch(/^event: evaluate\ndata: \{.*\}\n\n$/s);
    expect(JSON.parse(sse.body.split('\n')[1]!.slice('data: '.length))).toMatchObject({ verdict: 'allow', exit_code: 0 });
    const stream = await evaluate(s.port, { call: call('call-mcp-write.json') }, '/v1/evaluate/stream');
    expect(stream.headers['content-type']).toBe('application/x-ndjson');
    const lines = stream.body.split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ verdict: 'require_approval', exit_code: 4 });
  });

  it('errors: 405 method, 415 content type, 413 size, 400 decode/unknown field/missing call/eval error, 404', async () => {
    const s = await serve({ maxRequestBytes: '200' });
    const get = await http(s.port, '/v1/evaluate', { method: 'GET' });
    expect([get.status, get.body, get.headers['allow']]).toEqual([405, '{"ok":false,"error":"method not allowed"}\n', 'POST']);
    const text = await evaluate(s.port, { call: { name: 'x' } }, '/v1/evaluate', { 'content-type': 'text/plain' });
    expect([text.status, JSON.parse(text.body)]).toEqual([415, { ok: false, error: 'content type must be application/json' }]);
    const big = await evaluate(s.port, { call: { name: 'x', args: { blob: 'y'.repeat(500) } } });
    expect([big.status, JSON.parse(big.body).error]).toEqual([413, 'request body exceeds 200 bytes']);
    const garbage = await http(s.port, '/v1/evaluate', { body: '{nope', headers: json });
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body).error).toMatch(/^decode request: /);
    const unknown = await evaluate(s.port, { call: { name: 'x' }, bogus: 1 });
    expect([unknown.status, JSON.parse(unknown.body).error]).toEqual([400, 'decode request: unknown field "bogus"']);
    const empty = await evaluate(s.port, { call: {} });
    expect([empty.status, JSON.parse(empty.body).error]).toEqual([400, 'call is required and must be a non-empty JSON object']);
    const bad = await evaluate(s.port, { adapter: 'openai', call: { nope: 1 } });
    expect([bad.status, JSON.parse(bad.body)]).toEqual([400, { ok: false, error: 'decode openai payload: function is required' }]);
    expect((await http(s.port, '/v2/nothing', { method: 'GET' })).status).toBe(404);
  });

  it('client artifact paths are refused unless --allow-client-artifact-paths; emit_pack needs --pack-dir', async () => {
    const s = await serve();
    for (const key of ['trace_path', 'runpack_out', 'pack_out', 'session_journal']) {
      const r = await evaluate(s.port, { call: call('call-mcp-read.json'), [key]: 'x.json' });
      expect([r.status, JSON.parse(r.body).error]).toEqual([400, `${key} is not allowed; start ward mcp serve with --allow-client-artifact-paths`]);
    }
    const envPath = await evaluate(s.port, { call: { name: 'read_file', context: { context_envelope_path: 'e.json' } } });
    expect(envPath.status).toBe(400);
    const pack = await evaluate(s.port, { call: call('call-mcp-read.json'), emit_pack: true });
    expect([pack.status, JSON.parse(pack.body).error]).toEqual([400, 'emit_pack requires --pack-dir']);
  });

  it('with --allow-client-artifact-paths the client may name the trace and runpack paths', async () => {
    const s = await serve({ allowClientArtifactPaths: true });
    const r = await evaluate(s.port, { call: call('call-mcp-read.json'), trace_path: 'mine/t.json', runpack_out: 'mine/rp.zip' });
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body);
    expect(body.trace_path).toBe(join(s.cwd, 'mine', 't.json'));
    expect(existsSync(join(s.cwd, 'mine', 'rp.zip'))).toBe(true);
    const up = await evaluate(s.port, { call: call('call-mcp-read.json'), trace_path: '../t.json' });
    expect(up.status).toBe(400);
  });

  it('bearer auth: 401 missing, 401 invalid, 200 with the token', async () => {
    const s = await serve({ authMode: 'token', authTokenEnv: 'TOK' }, { TOK: 's3cret' });
    const none = await evaluate(s.port, { call: call('call-mcp-read.json') });
    expect([none.status, JSON.parse(none.body).error]).toEqual([401, 'missing bearer authorization']);
    const wrong = await evaluate(s.port, { call: call('call-mcp-read.json') }, '/v1/evaluate', { ...json, authorization: 'Bearer nope' });
    expect([wrong.status, JSON.parse(wrong.body).error]).toEqual([401, 'invalid bearer authorization']);
    const ok = await evaluate(s.port, { call: call('call-mcp-read.json') }, '/v1/evaluate', { ...json, authorization: 'Bearer s3cret' });
    expect(ok.status).toBe(200);
  });

  it('startup errors: non-loopback without token, token mode without a token, bad envelope, bad listen', async () => {
    const cwd = tempDir();
    const attempt = async (flags: Partial<McpServeFlags>, env: Record<string, string> = {}) => {
      try {
        await startMcpServe(inProcess(cwd, { env }).ctx, { ...BASE, ...flags });
        return 'started';
      } catch (err) {
        return `${(err as { exitCode: number }).exitCode}: ${(err as Error).message}`;
      }
    };
    expect(await attempt({ listen: '0.0.0.0:0' })).toBe('6: non-loopback --listen 0.0.0.0:0 requires --auth-mode token');
    expect(await attempt({ listen: ':0' })).toBe('6: non-loopback --listen :0 requires --auth-mode token');
    expect(await attempt({ authMode: 'token' })).toBe('6: --auth-mode token requires --auth-token-env');
    expect(await attempt({ authMode: 'token', authTokenEnv: 'EMPTY' }, { EMPTY: '' })).toBe('6: --auth-token-env EMPTY is empty or unset');
    writeFileSync(join(cwd, 'env.json'), '{"schema_id":"nope"}');
    expect(await attempt({ contextEnvelope: 'env.json' })).toMatch(/^6: unsupported context envelope schema/);
    expect(await attempt({ listen: 'nonsense' })).toBe('6: invalid --listen "nonsense"');
    expect(parseListen('[::1]:8787')).toEqual({ host: '::1', port: 8787 });
    expect(['127.0.0.1', '127.9.9.9', '::1', 'localhost', 'LOCALHOST'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '', '10.0.0.1', '::', 'example.com'].some(isLoopbackHost)).toBe(false);
  });

  it('prints the JSON startup line', async () => {
    const s = await serve({ json: true });
    expect(JSON.parse(s.startup)).toEqual({ ok: true, listen: `127.0.0.1:${s.port}`, policy: POLICY, adapter: 'mcp', profile: 'standard' });
  });

  it('journals sessions and numbers their events', async () => {
    const s = await serve();
    await evaluate(s.port, { call: call('call-mcp-read.json'), run_id: 'r1' });
    const second = JSON.parse((await evaluate(s.port, { call: call('call-mcp-write.json'), run_id: 'r1' })).body);
    const journal = join(s.cwd, '.ward', 'mcp-serve', 'sessions', 'sess-1.journal.jsonl');
    expect(second.warnings).toContain(`session_journal=${journal} sequence=2`);
    const events = readFileSync(journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(events.map((e) => [e.sequence, e.tool_name, e.verdict])).toEqual([[1, 'read_file', 'allow'], [2, 'write_file', 'require_approval']]);
    const other = JSON.parse((await evaluate(s.port, { call: call('call-mcp-read.json'), run_id: 'r2' })).body);
    expect(other.warnings).toContain(`session_journal=${join(s.cwd, '.ward', 'mcp-serve', 'sessions', 'sess-1_run_r2.journal.jsonl')} sequence=1`);
  });

  it('--pack-dir auto-emits packs for state-changing calls only', async () => {
    const s = await serve({ packDir: 'packs' });
    const read = JSON.parse((await evaluate(s.port, { call: call('call-mcp-read.json') })).body);
    expect(read.pack_path).toBeUndefined();
    const write = JSON.parse((await evaluate(s.port, { call: call('call-mcp-write.json') })).body);
    expect(write.pack_path).toBe(join(s.cwd, 'packs', `pack_${write.pack_id}.zip`));
    expect(readdirSync(join(s.cwd, 'packs'))).toHaveLength(1);
  });

  it('retention keeps at most --trace-max-count traces and removes old ones', async () => {
    const s = await serve({ traceDir: 'tr', traceMaxCount: '2', traceMaxAge: '1h' });
    mkdirSync(join(s.cwd, 'tr'), { recursive: true });
    const old = join(s.cwd, 'tr', 'trace_old.json');
    writeFileSync(old, '{}');
    utimesSync(old, new Date(Date.now() - 7200_000), new Date(Date.now() - 7200_000));
    const first = JSON.parse((await evaluate(s.port, { call: call('call-mcp-read.json') })).body);
    expect(first.warnings).toContain('retention_trace_removed_age=1 removed_count=0');
    for (let i = 0; i < 2; i++) await evaluate(s.port, { call: call('call-mcp-read.json') });
    expect(readdirSync(join(s.cwd, 'tr')).filter((n) => n.startsWith('trace_'))).toHaveLength(2);
  });
});
