import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { REPO, WARD } from '../../cli/run.js';
import type { Gatekeeper } from '../../../src/mcp/proxy/gatekeeper.js';
import type { JsonRpcMessage } from '../../../src/mcp/proxy/jsonrpc.js';
import { ProxyLog } from '../../../src/mcp/proxy/log.js';
import type { Inbound, Peer } from '../../../src/mcp/proxy/peer.js';
import { ProxySession } from '../../../src/mcp/proxy/session.js';

export const TINY = join(REPO, 'fixtures', 'mcp', 'tiny-server.mjs');
export const EVERYTHING = join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = join(REPO, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

export const POLICY = `default_verdict: allow
rules:
  - name: block-writes
    priority: 10
    effect: block
    match:
      tool_names: [write_note, write_file, get-env]
  - name: approve-deletes
    priority: 20
    effect: require_approval
    match:
      tool_names: [delete_note]
`;

export function writePolicy(dir: string, text = POLICY): string {
  const path = join(dir, 'policy.yaml');
  writeFileSync(path, text);
  return path;
}

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close: () => Promise<void>;
}

/** An SDK client talking to `server` (a command line), directly or through `ward mcp proxy`. */
export async function connect(server: string[], opts: { cwd: string; ward?: string[]; env?: Record<string, string> }): Promise<Connected> {
  const args = opts.ward ? [WARD, 'mcp', 'proxy', ...opts.ward, '--', ...server] : server;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: opts.ward ? args : server.slice(1),
    cwd: opts.cwd,
    env: { ...(process.env as Record<string, string>), WARD_STATE_DIR: '', ...opts.env },
    stderr: 'pipe',
    maxBufferSize: 64 * 1024 * 1024, // the SDK default (10 MB) is below a 10 MB tool result's message
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'ward-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport, stderr: () => err, close: () => client.close() };
}

export const node = (script: string, ...args: string[]) => [process.execPath, script, ...args];

export function traceFiles(cwd: string): string[] {
  try {
    return readdirSync(join(cwd, '.ward', 'traces')).filter((n) => n.startsWith('trace_'));
  } catch {
    return [];
  }
}

/** The proxy as a raw process: newline-delimited JSON-RPC in and out, for fault cases. */
export class RawProxy {
  readonly child: ChildProcess;
  private buf = '';
  readonly messages: Record<string, unknown>[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private waiters: (() => void)[] = [];

  constructor(wardArgs: string[], server: string[], cwd: string, env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [WARD, 'mcp', 'proxy', ...wardArgs, '--', ...server], {
      cwd,
      env: { ...process.env, WARD_STATE_DIR: '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString();
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        this.messages.push(JSON.parse(line) as Record<string, unknown>);
        for (const w of this.waiters.splice(0)) w();
      }
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  send(msg: unknown): void {
    this.child.stdin!.write((typeof msg === 'string' ? msg : JSON.stringify(msg)) + '\n');
  }

  async waitFor(pred: (m: Record<string, unknown>) => boolean, ms = 15000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.messages.find(pred);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(this.messages)}; stderr ${this.stderr}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
  }

  response(id: number | string): Promise<Record<string, unknown>> {
    return this.waitFor((m) => m['id'] === id && ('result' in m || 'error' in m));
  }

  async initialize(): Promise<void> {
    this.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await this.response(0);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  call(id: number, name: string, args: Record<string, unknown> = {}): void {
    this.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  }

  end(): void {
    this.child.stdin!.end();
  }
}

const listeners: ChildProcess[] = [];

/**
 * Start `node <args>` (a `ward mcp proxy … --listen 127.0.0.1:0` command line) with no user state
 * directory; `url` resolves with the address it announces on stderr, and rejects if it exits first
 * or is silent for 20 s. Call `stopListeners()` after each test.
 */
export function startListening(cwd: string, args: string[], env: Record<string, string> = {}): { child: ChildProcess; url: Promise<URL>; stderr: () => string } {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, WARD_STATE_DIR: '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  listeners.push(child);
  let err = '';
  const url = new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`proxy did not listen: ${err}`)), 20_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(new URL(m[1]!));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`proxy exited ${String(code)}: ${err}`));
    });
  });
  url.catch(() => undefined); // a caller that never awaits it (the process was meant to fail) leaves no unhandled rejection
  return { child, url, stderr: () => err };
}

export function stopListeners(): void {
  for (const c of listeners.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
}

/** An in-process peer that records what the session sends it; `next` waits for a message. */
export class RecordingPeer implements Peer {
  onmessage?: (m: Inbound) => void;
  onmalformed?: (reason: string, id: string | number | null) => void;
  onclose?: (error?: Error) => void;
  readonly sent: JsonRpcMessage[] = [];
  private waiters: { test: (m: JsonRpcMessage) => boolean; resolve: (m: JsonRpcMessage) => void }[] = [];
  constructor(private readonly onSend?: (msg: JsonRpcMessage) => void) {}
  async send(msg: JsonRpcMessage): Promise<void> {
    this.sent.push(msg);
    this.onSend?.(msg);
    this.waiters = this.waiters.filter((w) => !(w.test(msg) && (w.resolve(msg), true)));
  }
  next(test: (m: JsonRpcMessage) => boolean): Promise<JsonRpcMessage> {
    const seen = this.sent.find(test);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => this.waiters.push({ test, resolve }));
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

/** A ProxySession between two in-process peers, with the defaults the in-process tests share (no pins, blocks as results, no timeout). */
export function inProcessSession(o: { client: Peer; server: Peer; gate: Gatekeeper; sessionId: string; approvalDir: string }): ProxySession {
  return new ProxySession({
    client: o.client,
    server: o.server,
    gate: o.gate,
    log: new ProxyLog(() => undefined, undefined, false),
    sessionId: o.sessionId,
    runId: `mcp_${o.sessionId}`,
    denyAs: 'result',
    approvalDir: o.approvalDir,
    callTimeoutMs: 0,
    pinTools: false,
    hideBlockedTools: false,
    routeRelated: false,
  });
}
