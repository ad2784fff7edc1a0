// `ward mcp proxy --listen` cleans up after itself: a server process is started only for an
// initialize the transport accepted, sessions are capped and expire when idle, and SIGTERM stops
// the proxy promptly with no server process left behind.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, ward, WARD } from '../../cli/run.js';
import { writePolicy } from './helpers.js';

const DUAL = join(import.meta.dirname, 'dual-era-server.mjs');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

interface Listening {
  child: ChildProcess;
  url: URL;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startProxy(cwd: string, extra: string[], pids: string): Promise<Listening> {
  const args = [WARD, 'mcp', 'proxy', '--policy', 'policy.yaml', '--state-dir', join(cwd, '.ward'), '--listen', '127.0.0.1:0', ...extra, '--', process.execPath, DUAL];
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, WARD_STATE_DIR: '', DUAL_SERVER_PIDS: pids }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let err = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`proxy did not listen: ${err}`)), 20_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: new URL(m[1]!), stderr: () => err, exited });
      }
    });
    void exited.then((code) => reject(new Error(`proxy exited ${String(code)}: ${err}`)));
  });
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const GOOD_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function post(url: URL, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

const errorCode = (body: string) => (JSON.parse(body) as { error: { code: number; message: string } }).error;

/** Server processes started so far (each writes its pid at startup). */
function serverPids(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The direct children of a process, from ps. */
function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // ps exits 1 when there are none
  }
}

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pred();
}

async function sdkClient(url: URL, name: string) {
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

const echoText = async (client: Client, text: string) =>
  JSON.stringify((await client.callTool({ name: 'echo', arguments: { text } })).content);

describe('ward mcp proxy --listen: sessions are bounded and cleaned up', () => {
  it('50 rejected initializes start no server; then SIGTERM exits within 2 s and leaves no server process', async () => {
    const cwd = tempDir('ward-listen-bad-init-');
    writePolicy(cwd);
    const pids = join(cwd, 'server.pids');
    const proxy = await startProxy(cwd, [], pids);

    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      switch (i % 4) {
        case 0: // no text/event-stream in Accept
          statuses.push((await post(proxy.url, INIT, { ...GOOD_HEADERS, accept: 'application/json' })).status);
          break;
        case 1: // not JSON by Content-Type
          statuses.push((await post(proxy.url, INIT, { ...GOOD_HEADERS, 'content-type': 'text/plain' })).status);
          break;
        case 2: // passes Ward's own checks; the SDK transport refuses it (initialize without its params)
          statuses.push((await post(proxy.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, GOOD_HEADERS)).status);
          break;
        default: // two initializes in one batch
          statuses.push((await post(proxy.url, [INIT, { ...INIT, id: 2 }], GOOD_HEADERS)).status);
      }
    }
    expect(statuses.filter((s) => s === 406)).toHaveLength(13);
    expect(statuses.filter((s) => s === 415)).toHaveLength(13);
    expect(statuses.filter((s) => s === 400)).toHaveLength(24);
    expect(serverPids(pids)).toEqual([]); // not one server process was started for them
    expect(childPids(proxy.child.pid!)).toEqual([]);

    // One real session, left open (no DELETE): its server must not outlive the proxy.
    const { client } = await sdkClient(proxy.url, 'real');
    expect(await echoText(client, 'hi')).toContain('echo: hi');
    const started = serverPids(pids);
    expect(started).toHaveLength(1);
    expect(childPids(proxy.child.pid!)).toEqual(started);

    const t0 = Date.now();
    proxy.child.kill('SIGTERM');
    const code = await proxy.exited;
    const took = Date.now() - t0;
    expect(code).toBe(0);
    expect(took).toBeLessThan(2000);
    expect(await waitFor(() => started.every((p) => !alive(p)), 1000)).toBe(true);
    await client.close().catch(() => undefined);
  });

  it('--max-sessions: a session past the cap gets 503 (-32063) naming the flag and starts nothing; ending one makes room', async () => {
    const cwd = tempDir('ward-listen-cap-');
    writePolicy(cwd);
    const pids = join(cwd, 'server.pids');
    const proxy = await startProxy(cwd, ['--max-sessions', '2'], pids);
    const a = await sdkClient(proxy.url, 'a');
    const b = await sdkClient(proxy.url, 'b');
    expect(await echoText(b.client, 'b')).toContain('echo: b');
    expect(serverPids(pids)).toHaveLength(2);

    const third = await post(proxy.url, INIT, GOOD_HEADERS);
    expect(third.status).toBe(503);
    const err = errorCode(third.body);
    expect(err.code).toBe(-32063);
    expect(err.message).toContain('2 of 2');
    expect(err.message).toContain('--max-sessions');
    expect(serverPids(pids)).toHaveLength(2);
    expect(await waitFor(() => proxy.stderr().includes('too many sessions'), 2000)).toBe(true);

    await a.transport.terminateSession(); // DELETE: the session and its server end
    const aPid = serverPids(pids)[0]!;
    expect(await waitFor(() => !alive(aPid), 5000)).toBe(true);
    const c = await sdkClient(proxy.url, 'c');
    expect(await echoText(c.client, 'c')).toContain('echo: c');
    expect(serverPids(pids)).toHaveLength(3);
    await Promise.all([a.client.close(), b.client.close(), c.client.close()]);
  });

  it('--session-idle-timeout: an idle session ends (its server stops, its id gets 404 -32001); an active one stays', async () => {
    const cwd = tempDir('ward-listen-idle-');
    writePolicy(cwd);
    const pids = join(cwd, 'server.pids');
    const proxy = await startProxy(cwd, ['--session-idle-timeout', '1s'], pids);
    const idle = await sdkClient(proxy.url, 'idle');
    expect(await echoText(idle.client, 'once')).toContain('echo: once');
    const active = await sdkClient(proxy.url, 'active');
    const [idlePid, activePid] = serverPids(pids);
    const idleSession = idle.transport.sessionId!;

    // The active client calls every 300 ms for 2.5 s; the idle one says nothing.
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      expect(await echoText(active.client, 'tick')).toContain('echo: tick');
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(alive(idlePid!)).toBe(false);
    expect(alive(activePid!)).toBe(true);
    expect(await waitFor(() => proxy.stderr().includes('MCP session expired (idle)'), 2000)).toBe(true);

    const stale = await post(proxy.url, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { ...GOOD_HEADERS, 'mcp-session-id': idleSession, 'mcp-protocol-version': '2025-11-25' });
    expect(stale.status).toBe(404);
    expect(errorCode(stale.body).code).toBe(-32001);
    expect(await echoText(active.client, 'still here')).toContain('echo: still here');
    await Promise.all([idle.client.close().catch(() => undefined), active.client.close()]);
  });

  it('bad --max-sessions and --session-idle-timeout values are usage errors (exit 6) that name the flag', () => {
    const cwd = tempDir('ward-listen-flags-');
    writePolicy(cwd);
    const run = (...flags: string[]) =>
      ward(['mcp', 'proxy', '--policy', 'policy.yaml', '--listen', '127.0.0.1:0', ...flags, '--', process.execPath, DUAL], { cwd });
    for (const [flags, named] of [
      [['--max-sessions', '0'], '--max-sessions 0'],
      [['--max-sessions', 'many'], '--max-sessions many'],
      [['--session-idle-timeout', '5'], '--session-idle-timeout 5: give a unit'],
      [['--session-idle-timeout', 'soon'], '--session-idle-timeout soon: not a duration'],
    ] as const) {
      const r = run(...flags);
      expect(r.code, r.stderr).toBe(6);
      expect(r.stderr).toContain(named);
    }
  });
});
