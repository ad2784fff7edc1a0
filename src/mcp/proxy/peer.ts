import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { isJsonDuplicateKeyError, parseJsonText } from '../../canon/index.js';
import { LineReader, oversizeId } from './framing.js';
import { messageKind, salvageId, type JsonRpcId, type JsonRpcMessage, type MessageKind } from './jsonrpc.js';

export interface Inbound {
  msg: JsonRpcMessage;
  kind: MessageKind;
  /** The bytes received (stdio), forwarded unchanged when the message is not rewritten. */
  raw?: Buffer;
}

/**
 * One side of the proxy: the MCP client or the MCP server. A peer frames and unframes messages
 * and nothing else; routing and policy live in the session.
 */
export interface Peer {
  /** Send one message. `raw` is the exact encoding to write when the transport is byte-oriented. */
  send(msg: JsonRpcMessage, raw?: Buffer, relatedRequestId?: JsonRpcId): Promise<void>;
  onmessage?: (m: Inbound) => void;
  /**
   * Input that is not a JSON-RPC 2.0 message: `id` when one could be salvaged. `oversize`: a
   * message over the size limit, discarded unread (`response`: it looked like an answer).
   */
  onmalformed?: (reason: string, id: JsonRpcId | null, oversize?: { response: boolean }) => void;
  /** The peer is gone; `error` says why when it was not an orderly end. */
  onclose?: (error?: Error) => void;
  /** The negotiated protocol version, for transports that must echo it (Streamable HTTP client). */
  setProtocolVersion?(version: string): void;
  start(): Promise<void>;
  close(): Promise<void>;
}

const NL = Buffer.from('\n');

/**
 * Parse one received line into an inbound message, or report why it is not one. `strict` (what the
 * client sends, which Ward decides on and forwards as received): a line that repeats a member name
 * in one object is refused, since Ward and the server could read different messages from it (a
 * server that keeps the first `"method"` would run a call Ward read as something else).
 */
export function decodeLine(line: Buffer, peer: Pick<Peer, 'onmessage' | 'onmalformed'>, strict = false): void {
  let msg: unknown;
  const text = line.toString('utf8');
  try {
    msg = strict ? parseJsonText(text) : JSON.parse(text);
  } catch (err) {
    if (isJsonDuplicateKeyError(err)) {
      peer.onmalformed?.(`${err.message} (a message must not repeat a member name)`, salvageId(JSON.parse(text)));
      return;
    }
    if (err instanceof RangeError) {
      // Valid JSON nested too deeply for Ward to read: refused with the request's id when one can be had.
      let id: JsonRpcId | null = null;
      try {
        id = salvageId(JSON.parse(text));
      } catch {
        id = null;
      }
      peer.onmalformed?.('nesting too deep to read', id);
      return;
    }
    peer.onmalformed?.('not JSON', null);
    return;
  }
  const kind = messageKind(msg);
  if (!kind) {
    peer.onmalformed?.('not a JSON-RPC 2.0 message', salvageId(msg));
    return;
  }
  peer.onmessage?.({ msg: msg as JsonRpcMessage, kind, raw: line });
}

/** A discarded over-limit line, reported with the id its edges show (so its request can still be answered). */
function reportOversize(peer: Pick<Peer, 'onmalformed'>, bytes: number, limit: number, edges: { head: Buffer; tail: Buffer }): void {
  const { id, response } = oversizeId(edges);
  peer.onmalformed?.(`message of ${bytes} bytes exceeds the ${limit}-byte limit (--max-message-bytes)`, id, { response });
}

/** Write one framed message; small ones in a single write (one syscall, one wake-up of the reader). */
export function writeFramed(out: Writable, msg: JsonRpcMessage, raw: Buffer | undefined): boolean {
  const body = raw ?? Buffer.from(JSON.stringify(msg), 'utf8');
  if (body.length < 65536) return out.write(Buffer.concat([body, NL], body.length + 1));
  out.cork();
  out.write(body);
  const ok = out.write(NL);
  process.nextTick(() => out.uncork());
  return ok;
}

/** Newline-delimited JSON over a readable/writable pair (the proxy's own stdin/stdout). */
export class StreamPeer implements Peer {
  onmessage?: (m: Inbound) => void;
  onmalformed?: (reason: string, id: JsonRpcId | null, oversize?: { response: boolean }) => void;
  onclose?: (error?: Error) => void;
  private readonly reader: LineReader;
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    maxMessageBytes: number,
  ) {
    this.reader = new LineReader(
      maxMessageBytes,
      (line) => decodeLine(line, this, true),
      (bytes, edges) => reportOversize(this, bytes, maxMessageBytes, edges),
    );
  }

  async start(): Promise<void> {
    this.input.on('data', this.ondata);
    this.input.once('end', this.onend);
    this.input.once('close', this.onend);
    this.input.on('error', this.onerror);
    this.output.on('error', this.onerror);
  }

  send(msg: JsonRpcMessage, raw?: Buffer): Promise<void> {
    if (this.closed || this.output.destroyed) return Promise.reject(new Error('client stream closed'));
    writeFramed(this.output, msg, raw);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.ondata);
    this.input.pause();
  }

  private readonly ondata = (chunk: Buffer) => this.reader.push(chunk);
  private readonly onend = () => this.finish();
  private readonly onerror = (err: Error) => this.finish(err);

  private finish(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.ondata);
    this.onclose?.(error);
  }
}

export interface ChildServerOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  maxMessageBytes: number;
  /** Where the server's stderr goes (inherited by default: it is the user's diagnostics). */
  stderr?: 'inherit' | 'ignore' | 'pipe';
}

/**
 * The MCP server as a child process over stdio. It starts with the proxy and ends with it; the
 * child gets the proxy's whole environment (the client configured it for the server).
 */
export class ChildServerPeer implements Peer {
  onmessage?: (m: Inbound) => void;
  onmalformed?: (reason: string, id: JsonRpcId | null, oversize?: { response: boolean }) => void;
  onclose?: (error?: Error) => void;
  child: ChildProcess | undefined;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private closing = false;
  private ended = false;
  private spawning: Promise<void> | undefined;
  private reading = false;
  private readonly reader: LineReader;

  constructor(private readonly opts: ChildServerOptions) {
    this.reader = new LineReader(
      opts.maxMessageBytes,
      (line) => decodeLine(line, this),
      (bytes, edges) => reportOversize(this, bytes, opts.maxMessageBytes, edges),
    );
  }

  /**
   * Spawn the server process without reading from it yet (`ward mcp proxy` does this first, so the
   * server's own start-up overlaps Ward's loading). What the server writes waits in the pipe, in
   * order, until `start()` attaches the session's reader; nothing is sent to it before the session
   * sends. Idempotent: the same promise, resolved on `spawn`, rejected on a spawn error (ENOENT).
   */
  spawn(): Promise<void> {
    this.spawning ??= new Promise<void>((resolve, reject) => {
      const child = spawn(this.opts.command, [...this.opts.args], {
        cwd: this.opts.cwd,
        env: this.opts.env,
        stdio: ['pipe', 'pipe', this.opts.stderr ?? 'inherit'],
        shell: false,
      });
      this.child = child;
      child.once('error', (err) => {
        if (!this.ended) reject(err);
        this.end(err);
      });
      child.once('spawn', () => resolve());
      child.stdin!.on('error', () => undefined); // EPIPE after a crash is reported by 'exit'
      child.once('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
      });
      child.once('close', (code, signal) => {
        this.exitCode ??= code;
        this.exitSignal ??= signal;
        this.end(
          this.closing
            ? undefined
            : new Error(`MCP server exited ${signal ? `on signal ${signal}` : `with status ${String(code)}`}`),
        );
      });
      // Nagle is irrelevant for pipes; sockets are handled where they are opened.
    });
    return this.spawning;
  }

  /** Spawn (unless `spawn()` already did) and start reading the server's messages. */
  async start(): Promise<void> {
    const spawned = this.spawn();
    this.read();
    await spawned;
  }

  /** Attach the reader once: the stream flows from here on (and only then can it end and 'close'). */
  private read(): void {
    if (this.reading || !this.child) return;
    this.reading = true;
    this.child.stdout!.on('data', (chunk: Buffer) => this.reader.push(chunk));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  send(msg: JsonRpcMessage, raw?: Buffer): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.ended) return Promise.reject(new Error('MCP server is not running'));
    writeFramed(stdin, msg, raw);
    return Promise.resolve();
  }

  /** End stdin, then SIGTERM after 2 s and SIGKILL after 4 s (the MCP stdio shutdown sequence). */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.ended) return;
    this.closing = true;
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    // A server spawned early and never read from (Ward failed to load): drain its output so its
    // exit is seen ('close' waits for stdout to end).
    if (!this.reading) child.stdout?.resume();
    child.stdin?.end();
    const wait = (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    if (await wait(2000)) return;
    child.kill('SIGTERM');
    if (await wait(2000)) return;
    child.kill('SIGKILL');
    await closed;
  }

  private end(error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.onclose?.(error);
  }
}

/**
 * A peer that is started on first use: `start()` does nothing, the first `send()` starts the
 * wrapped peer (and waits for it). Over Streamable HTTP a session's server is wrapped in one, so a
 * server process is started only once the SDK transport has validated the client's `initialize`
 * and handed it on (an `initialize` the transport rejects — 406, 415, 400 — starts nothing).
 */
export class DeferredPeer implements Peer {
  onmessage?: (m: Inbound) => void;
  onmalformed?: (reason: string, id: JsonRpcId | null, oversize?: { response: boolean }) => void;
  onclose?: (error?: Error) => void;
  private starting: Promise<void> | undefined;
  /** The wrapped peer has started: a send goes straight to it (no promise hop). */
  private ready = false;
  /** Sends waiting for the start, in order; a later send may not overtake them. */
  private queued = 0;
  private closed = false;

  constructor(
    readonly inner: Peer,
    private readonly onStartError?: (err: Error) => void,
  ) {
    inner.onmessage = (m) => this.onmessage?.(m);
    inner.onmalformed = (reason, id, oversize) => this.onmalformed?.(reason, id, oversize);
    inner.onclose = (error) => this.onclose?.(error);
  }

  /** Has the wrapped peer been started (or is it starting)? */
  get started(): boolean {
    return this.starting !== undefined;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  private ensure(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('MCP server connection closed'));
    this.starting ??= this.inner.start().then(
      () => {
        this.ready = true;
      },
      (err: Error) => {
        this.onStartError?.(err);
        throw err;
      },
    );
    return this.starting;
  }

  /**
   * Once the wrapped peer runs, a message is handed to it synchronously: over Streamable HTTP an
   * extra promise hop let the SDK transport write the client's response headers (a syscall that
   * wakes the client) before the call went to the server, on every call.
   */
  send(msg: JsonRpcMessage, raw?: Buffer, relatedRequestId?: JsonRpcId): Promise<void> {
    if (this.ready && this.queued === 0 && !this.closed) return this.inner.send(msg, raw, relatedRequestId);
    this.queued++;
    return this.ensure().then(
      () => {
        this.queued--;
        return this.inner.send(msg, raw, relatedRequestId);
      },
      (err: Error) => {
        this.queued--;
        throw err;
      },
    );
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (!this.starting) return;
    try {
      await this.starting;
    } catch {
      return; // never started
    }
    await this.inner.close();
  }
}
