import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, ward, WARD } from '../../cli/run.js';
import { connect, EVERYTHING, node, RawProxy, TINY, traceFiles, writePolicy } from './helpers.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGTERM');
});

/** Start a process and wait for a line on `stream` that matches `pattern`. */
function startAndWait(args: string[], cwd: string, pattern: RegExp, stream: 'stdout' | 'stderr', env: Record<string, string> = {}) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, WARD_STATE_DIR: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  const match = new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${out}`)), 20_000);
    child[stream].on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
  });
  return { child, match, output: () => out };
}

function startProxy(cwd: string, wardArgs: string[], env: Record<string, string> = {}) {
  const p = startAndWait([WARD, 'mcp', 'proxy', ...wardArgs], cwd, /listening on (http:\/\/\S+)/, 'stderr', env);
  return { ...p, url: p.match.then((m) => new URL(m[1]!)) };
}

async function httpClient(url: URL, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'ward-http-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

function rawPost(url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }));
  });
}

describe('ward mcp proxy --listen (Streamable HTTP toward clients)', () => {
  it('server-everything: list and allowed results as direct, deny reply, progress over SSE, traces verify', async () => {
    const cwd = tempDir('ward-mcp-listen-');
    writePolicy(cwd);
    const proxy = startProxy(cwd, ['--policy', 'policy.yaml', '--listen', '127.0.0.1:0', '--', process.execPath, EVERYTHING, 'stdio']);
    const url = await proxy.url;
    const direct = await connect(node(EVERYTHING, 'stdio'), { cwd });
    const { client, transport } = await httpClient(url);
    try {
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await client.listTools()).tools).toEqual((await direct.client.listTools()).tools);
      const sum = { name: 'get-sum', arguments: { a: 1, b: 2 } };
      expect(await client.callTool(sum)).toEqual(await direct.client.callTool(sum));
      const blocked = await client.callTool({ name: 'get-env', arguments: {} });
      expect(blocked.isError).toBe(true);
      expect((blocked._meta as { ward: { verdict: string } }).ward.verdict).toBe('block');
      const progress: number[] = [];
      const long = await client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(JSON.stringify(long.content)).toContain('completed');
      expect(progress).toEqual([1, 2]);
      await transport.terminateSession();
    } finally {
      await client.close();
      await direct.close();
    }
    proxy.child.kill('SIGTERM');
    await new Promise((r) => proxy.child.once('exit', r));
    expect(traceFiles(cwd)).toHaveLength(3);
    expect(ward(['trace', 'verify', '.ward/traces'], { cwd }).code).toBe(0);
  });

  it('rejects a foreign Host header on loopback (DNS rebinding) and a foreign Origin', async () => {
    const cwd = tempDir('ward-mcp-host-');
    writePolicy(cwd);
    const proxy = startProxy(cwd, ['--policy', 'policy.yaml', '--listen', '127.0.0.1:0', '--', process.execPath, TINY]);
    const url = await proxy.url;
    expect(await rawPost(url, { host: 'evil.example' })).toBe(403);
    expect(await rawPost(url, { origin: 'http://evil.example' })).toBe(403);
    expect(await rawPost(url, {})).toBe(200);
  });

  it('bearer auth: missing or wrong token is 401; the right one works', async () => {
    const cwd = tempDir('ward-mcp-auth-');
    writePolicy(cwd);
    const proxy = startProxy(cwd, ['--policy', 'policy.yaml', '--listen', '127.0.0.1:0', '--auth-token-env', 'WARD_TEST_TOKEN', '--', process.execPath, TINY], {
      WARD_TEST_TOKEN: 's3cret',
    });
    const url = await proxy.url;
    expect(await rawPost(url, {})).toBe(401);
    expect(await rawPost(url, { authorization: 'Bearer wrong' })).toBe(401);
    const { client } = await httpClient(url, { authorization: 'Bearer s3cret' });
    try {
      expect(JSON.stringify((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content)).toContain('echo: hi');
    } finally {
      await client.close();
    }
  });
});

describe('ward mcp proxy --upstream-url (Streamable HTTP toward the server)', () => {
  it('forwards allowed calls to an HTTP MCP server; blocked calls never reach it', async () => {
    const cwd = tempDir('ward-mcp-upstream-');
    writePolicy(cwd);
    const seen = join(cwd, 'seen.log');
    const upstream = startAndWait([TINY, '--http', '0'], cwd, /\{"port":(\d+)\}/, 'stdout', { TINY_SERVER_LOG: seen });
    const port = (await upstream.match)[1]!;
    const p = await connect([], { cwd, ward: ['--policy', 'policy.yaml', '--upstream-url', `http://127.0.0.1:${port}/mcp`] }).catch(async () => {
      throw new Error('connect failed');
    });
    try {
      expect((await p.client.listTools()).tools.map((t) => t.name)).toContain('write_note');
      expect(JSON.stringify((await p.client.callTool({ name: 'echo', arguments: { text: 'up' } })).content)).toContain('echo: up');
      const r = await p.client.callTool({ name: 'write_note', arguments: { path: join(cwd, 'n.txt'), text: 'x' } });
      expect(r.isError).toBe(true);
    } finally {
      await p.close();
    }
    const calls = readFileSync(seen, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { name: string });
    expect(calls.map((c) => c.name)).toEqual(['echo']);
    expect(existsSync(join(cwd, 'n.txt'))).toBe(false);
  });
});

describe('--upstream-url: the same --max-message-bytes as stdio', () => {
  it('a result over the limit is dropped and its id answered with an error (--call-timeout 0); the session goes on', async () => {
    const cwd = tempDir('ward-mcp-upstream-big-');
    writePolicy(cwd);
    const seen = join(cwd, 'seen.log');
    const upstream = startAndWait([TINY, '--http', '0'], cwd, /\{"port":(\d+)\}/, 'stdout', { TINY_SERVER_LOG: seen });
    const port = (await upstream.match)[1]!;
    const proxy = new RawProxy(['--policy', 'policy.yaml', '--max-message-bytes', '100000', '--call-timeout', '0', '--upstream-url', `http://127.0.0.1:${port}/mcp`], [], cwd);
    try {
      await proxy.initialize();
      proxy.call(1, 'big', { bytes: 300_000 });
      const r1 = await proxy.response(1);
      expect((r1['error'] as { code: number; message: string }).code).toBe(-32603);
      expect((r1['error'] as { message: string }).message).toContain('--max-message-bytes');
      expect(JSON.stringify(r1)).not.toContain('x'.repeat(1000));
      proxy.call(2, 'big', { bytes: 50_000 });
      const r2 = await proxy.response(2);
      expect(JSON.stringify(r2['result'])).toContain('x'.repeat(50_000));
      proxy.call(3, 'echo', { text: 'after' });
      expect(JSON.stringify((await proxy.response(3))['result'])).toContain('echo: after');
    } finally {
      proxy.end();
      await proxy.exited;
    }
    // The server did run both calls: the first result was dropped on its way back.
    expect(readFileSync(seen, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(['big', 'big', 'echo']);
  });
});

