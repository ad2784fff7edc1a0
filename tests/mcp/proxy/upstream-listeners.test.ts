import { spawn, type ChildProcess } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { perRequestSignals } from '../../../src/mcp/proxy/sdk-peer.js';
import { tempDir } from '../../cli/run.js';
import { connect, EVERYTHING, TINY, writePolicy } from './helpers.js';

/**
 * The SDK's Streamable HTTP client transport hands its one transport-lifetime abort signal to every
 * fetch; undici adds an `abort` listener to it per request and removes it only when the request is
 * garbage-collected. Ward gives each upstream request its own signal (`perRequestSignals`).
 */
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

function start(args: string[], pattern: RegExp, stream: 'stdout' | 'stderr', env: Record<string, string> = {}): Promise<RegExpExecArray> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
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
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('Streamable HTTP upstream: no abort listeners pile up on the transport signal', () => {
  it('with per-request signals the transport signal holds no per-call listeners over 500 calls', async () => {
    const port = (await start([TINY, '--http', '0'], /\{"port":(\d+)\}/, 'stdout'))[1]!;
    const agent = new Agent({});
    const f = (input: string | URL, init?: Record<string, unknown>) => undiciFetch(input, { ...init, dispatcher: agent } as never);
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { fetch: perRequestSignals(f) as never });
    const client = new Client({ name: 'ward-test', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    const signal = (transport as unknown as { _abortController: AbortController })._abortController.signal;
    let most = 0;
    try {
      for (let i = 0; i < 500; i++) {
        const r = await client.callTool({ name: 'echo', arguments: { text: `n${i}` } });
        expect(JSON.stringify(r.content)).toContain(`echo: n${i}`);
        most = Math.max(most, getEventListeners(signal, 'abort').length);
      }
    } finally {
      await client.close();
      await agent.close();
    }
    // Without per-request signals this grows by one per call until a GC runs (hundreds here).
    expect(most).toBeLessThan(10);
  });

  it('closing the transport still aborts requests in flight', async () => {
    let seen = 0;
    const hanging = (_input: string | URL, init?: { signal?: AbortSignal | null }) =>
      new Promise((_resolve, reject) => {
        seen++;
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted')));
      });
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'), { fetch: perRequestSignals(hanging) as never });
    await transport.start();
    const errors: Error[] = [];
    transport.onerror = (e) => void errors.push(e);
    const sent = transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toBe(1);
    await transport.close();
    expect(String(await sent)).toMatch(/abort/i);
  });

  it('ward mcp proxy --upstream-url: 600 calls to server-everything (streamableHttp) and no MaxListenersExceededWarning', async () => {
    const cwd = tempDir('ward-mcp-upstream-listeners-');
    writePolicy(cwd);
    const port = await freePort();
    await start([EVERYTHING, 'streamableHttp'], /listening on port/i, 'stderr', { PORT: String(port) });
    const p = await connect([], { cwd, ward: ['--policy', 'policy.yaml', '--upstream-url', `http://127.0.0.1:${port}/mcp`] });
    try {
      for (let i = 0; i < 600; i += 10) {
        const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => p.client.callTool({ name: 'echo', arguments: { message: `m${i + j}` } })));
        batch.forEach((r, j) => expect(JSON.stringify(r.content)).toContain(`m${i + j}`));
      }
    } finally {
      await p.close();
    }
    expect(p.stderr()).not.toMatch(/MaxListenersExceeded/);
  }, 120_000);
});
