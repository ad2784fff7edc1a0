// The behaviours the three HTTP hosts used to disagree on, checked on each host: the daemon
// (`ward serve`), the decision service (`ward mcp serve`) and the MCP proxy (`ward mcp proxy
// --listen`). See docs/daemon.md "One guard for every host".
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMcpServe } from '../../src/cli/commands/mcp-serve.js';
import { startDaemon, type Daemon } from '../../src/daemon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { tempDir, WARD } from '../cli/run.js';
import { workdir } from '../daemon/helpers.js';
import { writePolicy, TINY } from '../mcp/proxy/helpers.js';
import { inProcess, POLICY as SERVICE_POLICY } from '../decision-service/helpers.js';

const TOKEN = 'a-very-secret-token-0123456789';
const daemons: Daemon[] = [];
const servers: Server[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** One raw HTTP exchange: the reply text, until the server closes or `ms` passes (then the client closes). */
function exchange(port: number, text: string, opts: { host?: string; ms?: number; cut?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, opts.host ?? '127.0.0.1', () => {
      s.write(text);
      if (opts.cut) s.destroy();
    });
    let got = '';
    const timer = setTimeout(() => s.destroy(), opts.ms ?? 3000);
    s.on('data', (b: Buffer) => {
      got += b.toString();
      // one complete response is enough
      const m = /content-length: (\d+)\r\n[\s\S]*?\r\n\r\n/i.exec(got);
      if (m && Buffer.byteLength(got.slice(got.indexOf('\r\n\r\n') + 4)) >= Number(m[1])) s.destroy();
    });
    s.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    s.on('error', () => undefined);
  });
}

const status = (reply: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0);
function body(reply: string): string {
  const head = reply.slice(0, reply.indexOf('\r\n\r\n')).toLowerCase();
  let rest = reply.slice(reply.indexOf('\r\n\r\n') + 4);
  if (!head.includes('transfer-encoding: chunked')) return rest;
  let out = '';
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 4 + size);
  }
}
const post = (path: string, headers: Record<string, string>, payload = '') =>
  `POST ${path} HTTP/1.1\r\n${Object.entries({ host: '127.0.0.1', connection: 'close', ...headers })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n${payload}`;

async function daemon(extra: Partial<Parameters<typeof startDaemon>[0]> = {}): Promise<{ port: number; url: string }> {
  const w = workdir();
  const d = await startDaemon({ stateDir: w.state, policyPath: w.policy, host: '127.0.0.1', port: 0, signingKey: generateSigningKey(), logWrite: () => {}, maxBodyBytes: 1024, ...extra });
  daemons.push(d);
  return { port: Number(new URL(d.url).port), url: d.url };
}

async function service(flags: Record<string, string> = {}, env: Record<string, string> = {}): Promise<number> {
  const p = inProcess(tempDir('ward-edge-serve-'), { env });
  const { server, address } = await startMcpServe(p.ctx, { policy: SERVICE_POLICY, listen: '127.0.0.1:0', authMode: 'off', maxRequestBytes: '1024', httpVerdictStatus: 'compat', ...flags });
  servers.push(server);
  return address.port;
}

function proxy(extra: string[], env: Record<string, string> = {}): Promise<{ port: number; exit: Promise<number | null>; stderr: () => string }> {
  const cwd = tempDir('ward-edge-proxy-');
  writePolicy(cwd);
  const args = [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--state-dir', join(cwd, '.ward'), '--max-message-bytes', '2048', ...extra, '--', process.execPath, TINY];
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, WARD_STATE_DIR: '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let err = '';
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`proxy did not listen: ${err}`)), 20_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on http:\/\/\S+:(\d+)\//.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), exit, stderr: () => err });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      resolve({ port: 0, exit, stderr: () => err });
      void code;
    });
  });
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('Content-Length over the limit: 413 before the body is read, then the connection closes', () => {
  it('daemon', async () => {
    const d = await daemon();
    const r = await exchange(d.port, post('/v1/gate/eval', { ...JSON_HEADERS, 'content-length': '100000' }));
    expect(status(r)).toBe(413);
    expect(r.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body(r))).toMatchObject({ ok: false, error: 'request body larger than 1024 bytes' });
  });

  it('decision service', async () => {
    const port = await service();
    const r = await exchange(port, post('/v1/evaluate', { ...JSON_HEADERS, 'content-length': '100000' }));
    expect(status(r)).toBe(413);
    expect(r.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body(r))).toEqual({ ok: false, error: 'request body exceeds 1024 bytes' });
  });

  it('MCP proxy (it used to wait for the body and cut the connection without an answer)', async () => {
    const p = await proxy(['--listen', '127.0.0.1:0']);
    const r = await exchange(p.port, post('/mcp', { ...JSON_HEADERS, 'content-length': '100000' }));
    expect(status(r)).toBe(413);
    expect(r.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body(r))).toMatchObject({ jsonrpc: '2.0', error: { message: 'request body too large' } });
  }, 30_000);
});

describe('a client that goes away mid-body does not leave a request pending', () => {
  it('daemon: counted as aborted, later requests answered', async () => {
    const d = await daemon();
    await exchange(d.port, post('/v1/gate/eval', { ...JSON_HEADERS, 'content-length': '500' }, '{"intent":'), { cut: true });
    await new Promise((r) => setTimeout(r, 100));
    const m = await exchange(d.port, 'GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    expect(body(m)).toContain('ward_http_rejected_total{reason="aborted"} 1');
  });

  it('decision service and MCP proxy: later requests answered', async () => {
    const port = await service();
    await exchange(port, post('/v1/evaluate', { ...JSON_HEADERS, 'content-length': '500' }, '{"call":'), { cut: true });
    expect(status(await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n'))).toBe(200);
    const p = await proxy(['--listen', '127.0.0.1:0']);
    await exchange(p.port, post('/mcp', { ...JSON_HEADERS, 'content-length': '500' }, '{"jsonrpc":'), { cut: true });
    expect(status(await exchange(p.port, post('/mcp', { ...JSON_HEADERS, 'content-length': '2' }, '{}')))).toBe(400);
  }, 30_000);
});

describe('an IPv4-mapped loopback address is loopback on every host', () => {
  it('daemon: starts without a token, Host/Origin guard on', async () => {
    const d = await daemon({ host: '::ffff:127.0.0.1' });
    expect(status(await exchange(d.port, 'GET /healthz HTTP/1.1\r\nhost: [::ffff:127.0.0.1]\r\n\r\n', { host: '::ffff:127.0.0.1' }))).toBe(200);
    expect(status(await exchange(d.port, 'GET /healthz HTTP/1.1\r\nhost: evil.example\r\n\r\n', { host: '::ffff:127.0.0.1' }))).toBe(403);
  });

  it('decision service: starts without a token, Host/Origin guard on', async () => {
    const port = await service({ listen: '[::ffff:127.0.0.1]:0' });
    expect(status(await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n', { host: '::ffff:127.0.0.1' }))).toBe(200);
    const evil = await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: evil.example\r\n\r\n', { host: '::ffff:127.0.0.1' });
    expect(status(evil)).toBe(403);
    expect(JSON.parse(body(evil))).toEqual({ ok: false, error: 'Host "evil.example" is not allowed on this loopback listener' });
  });

  it('MCP proxy: starts without a token (it used to refuse: "not loopback")', async () => {
    const p = await proxy(['--listen', '[::ffff:127.0.0.1]:0']);
    expect(p.port, p.stderr()).toBeGreaterThan(0);
    const evil = await exchange(p.port, post('/mcp', { ...JSON_HEADERS, host: 'evil.example', 'content-length': '2' }, '{}'), { host: '::ffff:127.0.0.1' });
    expect(status(evil)).toBe(403);
    expect(JSON.parse(body(evil))).toMatchObject({ error: { message: 'Invalid Host: evil.example' } });
  }, 30_000);
});

describe('cross-site requests to a loopback listener are refused on every host (Origin)', () => {
  const origin = { origin: 'https://evil.example' };
  it('daemon, decision service and MCP proxy', async () => {
    const d = await daemon();
    expect(status(await exchange(d.port, post('/v1/gate/eval', { ...JSON_HEADERS, ...origin, 'content-length': '2' }, '{}')))).toBe(403);
    const port = await service();
    const s = await exchange(port, post('/v1/evaluate', { ...origin, 'content-length': '2' }, '{}'));
    expect(status(s)).toBe(403);
    expect(JSON.parse(body(s))).toEqual({ ok: false, error: 'Origin "https://evil.example" is not allowed on this loopback listener' });
    const p = await proxy(['--listen', '127.0.0.1:0']);
    const r = await exchange(p.port, post('/mcp', { ...JSON_HEADERS, ...origin, 'content-length': '2' }, '{}'));
    expect(status(r)).toBe(403);
    expect(JSON.parse(body(r))).toMatchObject({ error: { message: 'Invalid Origin: evil.example' } });
  }, 30_000);
});

describe('one bearer rule on every host', () => {
  const cases = (auth: string | undefined): Record<string, string> => (auth === undefined ? {} : { authorization: auth });

  it('daemon', async () => {
    const d = await daemon({ authToken: TOKEN });
    const at = async (auth?: string) => status(await exchange(d.port, `GET /v1/policy HTTP/1.1\r\nhost: 127.0.0.1\r\n${auth === undefined ? '' : `authorization: ${auth}\r\n`}\r\n`));
    expect(await at(`Bearer ${TOKEN}`)).toBe(200);
    expect(await at(`bearer ${TOKEN}`)).toBe(200);
    expect(await at(`Bearer\t${TOKEN}`)).toBe(401);
    expect(await at(`Bearer ${TOKEN}x`)).toBe(401);
    expect(await at()).toBe(401);
  });

  it('decision service (it used to accept a tab and spaces inside the token)', async () => {
    const port = await service({ authMode: 'token', authTokenEnv: 'TOK' }, { TOK: TOKEN });
    const at = async (auth?: string) => {
      const r = await exchange(port, post('/v1/evaluate', { 'content-type': 'application/json', ...cases(auth), 'content-length': '2' }, '{}'));
      return [status(r), JSON.parse(body(r)).error];
    };
    expect((await at(`bearer ${TOKEN}`))[0]).toBe(400); // past auth: the body is what is wrong
    expect(await at(`Bearer\t${TOKEN}`)).toEqual([401, 'missing bearer authorization']);
    expect(await at(`Bearer ${TOKEN}x`)).toEqual([401, 'invalid bearer authorization']);
    expect(await at()).toEqual([401, 'missing bearer authorization']);
  });

  it('decision service: a token no client could send is refused at startup', async () => {
    await expect(service({ authMode: 'token', authTokenEnv: 'TOK' }, { TOK: 'two words' })).rejects.toThrow(/visible ASCII/);
  });

  it('MCP proxy (it used to refuse the scheme in lower case)', async () => {
    const p = await proxy(['--listen', '127.0.0.1:0', '--auth-token-env', 'TOK'], { TOK: TOKEN });
    const at = async (auth?: string) => {
      const r = await exchange(p.port, post('/mcp', { 'content-type': 'application/json', ...cases(auth), 'content-length': '2' }, '{}'));
      return [status(r), JSON.parse(body(r)).error?.message];
    };
    expect((await at(`bearer ${TOKEN}`))[0]).toBe(400); // past auth: an initialize is required
    expect(await at(`Bearer  ${TOKEN}`)).toEqual([400, 'Bad Request: Server not initialized']);
    expect(await at(`Bearer ${TOKEN}x`)).toEqual([401, 'invalid bearer authorization']);
    expect(await at('Basic abc')).toEqual([401, 'missing bearer authorization']);
    expect(await at()).toEqual([401, 'missing bearer authorization']);
  }, 30_000);
});
