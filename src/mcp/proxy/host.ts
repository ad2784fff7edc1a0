import type { InboxConfig } from './approval-inbox.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { EXIT, type ExitCode } from '../../contract/exit-codes.js';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isJsonDuplicateKeyError, parseJsonText, type JsonObject } from '../../canon/index.js';
import { readBody } from '../../edge/body.js';
import { BearerAuth, isLoopbackHost, LoopbackGuard, type OriginRefusal } from '../../edge/guard.js';
import { HttpError } from '../../edge/http-error.js';
import { errorResponse, RPC } from './jsonrpc.js';
import type { ContextEnvelope } from '../../context/index.js';
import type { KillSwitchState } from '../../gate/kill-switch.js';
import { loadKillSwitch } from '../../decision/inputs.js';
import type { SigningKey, VerifyKey } from '../../keys/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import { checkProfile } from '../../policy/profile.js';
import type { GateRuntime } from '../../decision/gate-run.js';
import type { TraceSink } from '../../decision/trace-sink.js';
import type { ApprovalMode } from './elicit.js';
import { Gatekeeper } from './gatekeeper.js';
import { DecisionThread } from './decision-thread.js';
import { PinStore, pinsDir } from './pins.js';
import { UNKNOWN_WORKSPACE, type MappingOptions } from './intent.js';
import type { ProxyLog } from './log.js';
import { ChildServerPeer, DeferredPeer, StreamPeer, type Peer } from './peer.js';
import { oversizeId } from './framing.js';
import { boundedFetch } from './upstream-bound.js';
import type { DenyAs } from './replies.js';
import { RunCapture } from './run-capture.js';
import { perRequestSignals, SdkPeer } from './sdk-peer.js';
import { ProxySession } from './session.js';
import type { UnknownMethods } from './methods.js';
import { DEFAULT_REQUEST_LIMITS, limitExceeded, type RequestLimits } from './limits.js';
import { watchFile } from './watch.js';
import { SessionWitness } from './witness.js';
import type { DecisionTelemetry } from '../../telemetry/telemetry.js';
import { ProxyMetrics } from './metrics.js';

export type Upstream = { command: string; args: string[] } | { url: string; headers: Record<string, string> };

export interface ListenOptions {
  host: string;
  port: number;
  path: string;
  /** Bearer token clients must present (required off loopback). */
  authToken?: string | undefined;
  /** Largest request body accepted from a client. */
  maxRequestBytes: number;
  /**
   * A session with no message either way for this long (and no request in flight) is ended, its
   * server stopped; the client gets 404 for it and starts a new one. 0: never.
   */
  idleTimeoutMs?: number | undefined;
  /** Sessions open at once; an initialize past it is refused (HTTP 503) and starts nothing. */
  maxSessions?: number | undefined;
}

/** `--session-idle-timeout` default (and `ListenOptions.idleTimeoutMs`): 30 minutes. The CLI's default says the same. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
/** `--max-sessions` default (and `ListenOptions.maxSessions`). The CLI's default says the same. */
export const DEFAULT_MAX_SESSIONS = 32;

export interface ProxyConfig {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stateDir: string;
  policyPath: string;
  runtime: GateRuntime;
  sink: TraceSink;
  signingKey: SigningKey;
  envelope?: { envelope: ContextEnvelope; json: JsonObject } | undefined;
  mapping: MappingOptions;
  approvalDir: string;
  /** `--approval`: `token` (approval directory only), `elicit` (also ask the user inline) or `inbox` (also a daemon's approvals inbox). */
  approvalMode?: ApprovalMode | undefined;
  /** `--approval inbox`: the daemon calls that need approval are reported to. */
  inbox?: InboxConfig | undefined;
  approvalKeys: readonly VerifyKey[];
  killSwitchPath?: string | undefined;
  denyAs: DenyAs;
  callTimeoutMs: number;
  pinTools: boolean;
  /** Where pins persist (default `<state>/mcp-pins`; `--store`: the cluster's PostgreSQL). */
  pinStore?: PinStore | undefined;
  hideBlockedTools: boolean;
  maxMessageBytes: number;
  /** Capture each session as a run (runpack spooled for the store). */
  captureRuns: boolean;
  /**
   * Witness each session (docs/witness.md): remember what tool results showed the model, so an
   * argument carrying such a value is `tool_output` whatever `--arg-source` says. On by default;
   * `--no-witness` turns it off.
   */
  witness?: boolean | undefined;
  /** `--unknown-methods` / `--unknown-method-risk-class` (docs/mcp-proxy.md "Every method that reads or acts"). */
  unknownMethods?: { mode: UnknownMethods; riskClass: string } | undefined;
  /** `--max-call-bytes` / `--max-call-keys` (default `DEFAULT_REQUEST_LIMITS`). */
  limits?: RequestLimits | undefined;
  /**
   * Decide large calls (limits.ts `OFF_LOOP_THRESHOLD`) on a worker thread, so one session's
   * large call does not stall the others (`--listen`; docs/mcp-proxy.md "Limits").
   */
  offLoop?: boolean | undefined;
  /** `--otel` / `--decision-log` (docs/observability.md); undefined: off. */
  telemetry?: DecisionTelemetry | undefined;
  upstream: Upstream;
  log: ProxyLog;
}

/** Shared by every session: the gatekeeper, with policy and kill-switch hot reload. */
export class ProxyRuntime {
  readonly gate: Gatekeeper;
  private readonly stops: (() => void)[] = [];
  private killSwitch: { state: KillSwitchState } | { unavailable: true } | undefined;
  /** `--pin-tools`: pins persist per server in `<state>/mcp-pins`. */
  readonly pinStore: PinStore;
  private readonly thread: DecisionThread | undefined;
  /** With `--otel`: the proxy's counters, exported over OTLP (every session counts into them). */
  readonly metrics: ProxyMetrics | undefined;

  constructor(readonly cfg: ProxyConfig) {
    // The intent's workspace is absolute (the core resolves relative path targets against it), or unknown.
    if (!isAbsolute(cfg.mapping.workspace) && cfg.mapping.workspace !== UNKNOWN_WORKSPACE) {
      cfg.mapping = { ...cfg.mapping, workspace: resolve(cfg.cwd, cfg.mapping.workspace) };
    }
    if (cfg.killSwitchPath) this.killSwitch = this.readKillSwitch();
    this.pinStore = cfg.pinStore ?? new PinStore(pinsDir(cfg.stateDir));
    const decisions = { runtime: cfg.runtime, mapping: cfg.mapping, envelope: cfg.envelope, approvalDir: cfg.approvalDir, approvalKeys: cfg.approvalKeys };
    this.thread = cfg.offLoop ? new DecisionThread(decisions) : undefined;
    this.gate = new Gatekeeper({ ...decisions, sink: cfg.sink, killSwitch: () => this.killSwitch, thread: this.thread });
    const telemetry = cfg.telemetry;
    if (telemetry) {
      const metrics = new ProxyMetrics(() => telemetry.stats());
      telemetry.exportMetrics(() => metrics.snapshot());
      this.metrics = metrics;
    }
    this.stops.push(watchFile(cfg.policyPath, () => this.reloadPolicy()));
    if (cfg.killSwitchPath) this.stops.push(watchFile(cfg.killSwitchPath, () => (this.killSwitch = this.readKillSwitch())));
  }

  /** Validate the edited policy first; a bad edit keeps the policy in force and says why. */
  reloadPolicy(): void {
    const rt = this.cfg.runtime;
    try {
      const next = loadPolicyFile(this.cfg.policyPath);
      checkProfile(next.policy, rt.profile);
      if (next.digest === rt.policy.digest) return;
      rt.policy = next;
      this.cfg.log.info('policy reloaded', { policy_digest: next.digest });
    } catch (err) {
      this.cfg.log.error('policy reload failed; keeping the previous policy', {
        policy_digest: rt.policy.digest,
        error: (err as Error).message,
      });
    }
  }

  /** A long-running host always requires its kill switch: an unreadable state blocks every call until it is fixed. */
  private readKillSwitch(): { state: KillSwitchState } | { unavailable: true } {
    const path = this.cfg.killSwitchPath!;
    return loadKillSwitch(() => readFileSync(path, 'utf8'), {
      required: true,
      path,
      onUnavailable: (err) => this.cfg.log.error('kill-switch state unreadable; every call is blocked until it is fixed', { error: err.message }),
    });
  }

  /** The server side of one session. */
  upstreamPeer(): Peer {
    const up = this.cfg.upstream;
    if ('command' in up) {
      return new ChildServerPeer({ command: up.command, args: up.args, cwd: this.cfg.cwd, env: this.cfg.env, maxMessageBytes: this.cfg.maxMessageBytes });
    }
    const { StreamableHTTPClientTransport, upstreamFetch } = loadedHttpModules();
    const max = this.cfg.maxMessageBytes;
    let peer: SdkPeer | undefined;
    // The same --max-message-bytes a stdio server's lines have; an answer over it is reported with its id.
    const bounded = boundedFetch(perRequestSignals(upstreamFetch), max, (bytes, id, response) =>
      peer?.onmalformed?.(`message of ${bytes} bytes or more exceeds the ${max}-byte limit (--max-message-bytes)`, id, { response }),
    );
    const transport = new StreamableHTTPClientTransport(new URL(up.url), {
      requestInit: { headers: up.headers },
      fetch: bounded as never, // no per-request listeners on the transport's own signal (perRequestSignals)
    });
    peer = new SdkPeer(transport as never, (err) => this.cfg.log.warn('upstream transport error', { error: err.message }));
    return peer;
  }

  newSession(client: Peer, server: Peer, sessionId: string, routeRelated: boolean): { session: ProxySession; capture: RunCapture | undefined; witness: SessionWitness | undefined } {
    const runId = `mcp_${sessionId.replace(/[^A-Za-z0-9]/g, '').slice(0, 32)}`;
    const capture = this.cfg.captureRuns ? new RunCapture(runId) : undefined;
    const witness = this.cfg.witness === false ? undefined : new SessionWitness(`witness:${runId}`);
    const session = new ProxySession({
      client,
      server,
      gate: this.gate,
      log: this.cfg.log,
      sessionId,
      runId,
      denyAs: this.cfg.denyAs,
      approvalDir: this.cfg.approvalDir,
      approvalMode: this.cfg.approvalMode,
      inbox: this.cfg.inbox,
      callTimeoutMs: this.cfg.callTimeoutMs,
      pinTools: this.cfg.pinTools,
      pins: this.cfg.pinTools ? { store: this.pinStore, upstream: upstreamIdentity(this.cfg.upstream) } : undefined,
      hideBlockedTools: this.cfg.hideBlockedTools,
      routeRelated,
      capture,
      witness,
      unknownMethods: this.cfg.unknownMethods,
      limits: this.cfg.limits,
      telemetry: this.cfg.telemetry,
      metrics: this.metrics,
    });
    return { session, capture, witness };
  }

  /**
   * After a session: its run goes to the store's spool (written durably), signed, with the
   * session's witnessed context envelope when Ward built one (else the pinned `--context-envelope`).
   */
  finishSession(capture: RunCapture | undefined, witness?: SessionWitness): void {
    if (!capture || capture.size === 0) return;
    try {
      const path = capture.spool(this.cfg.stateDir, this.cfg.signingKey, witness?.envelope() ?? this.cfg.envelope?.envelope);
      this.cfg.log.info('session captured as a run', { run_id: capture.runId, calls: capture.size, spool: path });
    } catch (err) {
      this.cfg.log.error('could not capture the session as a run', { run_id: capture.runId, error: (err as Error).message });
    }
  }

  async close(): Promise<void> {
    for (const stop of this.stops) stop();
    await this.thread?.close();
    await this.pinStore.close();
    await this.cfg.sink.close();
  }
}

/** How Ward reaches the server, as part of its pins key: the command line, or the URL. */
function upstreamIdentity(up: Upstream): string[] | string {
  return 'command' in up ? [up.command, ...up.args] : up.url;
}

interface HttpModules {
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  NodeStreamableHTTPServerTransport: typeof NodeStreamableHTTPServerTransport;
  /** Upstream HTTP with Nagle off on every connection Ward opens. */
  upstreamFetch: (input: string | URL, init?: Record<string, unknown>) => Promise<Response>;
}
let httpModules: HttpModules | undefined;

/**
 * The MCP SDK's HTTP transports and undici, loaded by `runListen` and by a `runStdio` whose server
 * is reached over HTTP: a stdio proxy in front of a server it starts never loads them (about 100
 * modules with zod), so it answers `initialize` sooner (docs/mcp-proxy.md, start-up order).
 */
async function loadHttpModules(): Promise<HttpModules> {
  if (!httpModules) {
    const [client, node, undici] = await Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/node'), import('undici')]);
    const agent = new undici.Agent({ connect: { noDelay: true }, keepAliveTimeout: 30_000 });
    httpModules = {
      StreamableHTTPClientTransport: client.StreamableHTTPClientTransport,
      NodeStreamableHTTPServerTransport: node.NodeStreamableHTTPServerTransport,
      upstreamFetch: (input, init) => undici.fetch(input, { ...init, dispatcher: agent } as never) as unknown as Promise<Response>,
    };
  }
  return httpModules;
}

/** What loadHttpModules loaded (runListen and runStdio load it before any session needs it). */
function loadedHttpModules(): HttpModules {
  if (!httpModules) throw new Error('the HTTP transports are not loaded (loadHttpModules)');
  return httpModules;
}

/** stdio toward the client: one session for the life of the process. Resolves with the exit code (0, 1, or 7 when the server command does not exist). */
export async function runStdio(rt: ProxyRuntime, input: Readable, output: Writable, signal?: AbortSignal, spawned?: ChildServerPeer): Promise<ExitCode> {
  const log = rt.cfg.log;
  // `spawned`: the server `ward mcp proxy` spawned before loading the rest (docs/mcp-proxy.md,
  // start-up order). The client is read only from session.start() on, so nothing it sent is
  // forwarded or answered before the runtime (policy, key, journal) exists.
  if (!spawned && !('command' in rt.cfg.upstream)) await loadHttpModules();
  const server = spawned ?? rt.upstreamPeer();
  const client = new StreamPeer(input, output, rt.cfg.maxMessageBytes);
  const sessionId = `mcp_${randomBytes(12).toString('hex')}`;
  const { session, capture, witness } = rt.newSession(client, server, sessionId, false);
  try {
    await session.start();
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    log.error('could not start the MCP server', {
      error: (err as Error).message,
      ...(missing ? { hint: 'the server command was not found: check its spelling, or that it is installed and on PATH (try running it directly)' } : {}),
    });
    await rt.close();
    return missing ? EXIT.DEPENDENCY_MISSING : EXIT.INTERNAL;
  }
  if (server instanceof ChildServerPeer) log.debug('MCP server started', { pid: server.pid });
  signal?.addEventListener('abort', () => void session.end(undefined, undefined), { once: true });
  const end = await session.done;
  rt.finishSession(capture, witness);
  await rt.close();
  if (end.error) {
    log.error(`session ended: ${end.error.message}`);
    return EXIT.INTERNAL;
  }
  return EXIT.OK;
}

/** Is the --listen host loopback (the edge kit's one rule: 127.0.0.0/8, ::1, IPv4-mapped loopback, localhost)? */
export const isLoopback = isLoopbackHost;

/** A refused Host or Origin, in the words (and JSON-RPC code) the MCP SDK's own guards use. */
function refusalMessage(refused: OriginRefusal): { status: number; message: string } {
  if (refused.code === 'host_missing') return { status: 400, message: 'Missing Host header' };
  if (refused.code === 'host') return { status: 403, message: refused.name !== undefined ? `Invalid Host: ${refused.name}` : `Invalid Host header: ${refused.header}` };
  return { status: 403, message: refused.name !== undefined ? `Invalid Origin: ${refused.name}` : `Invalid Origin header: ${refused.header}` };
}

interface HttpSession {
  id: string;
  transport: NodeStreamableHTTPServerTransport;
  session: ProxySession;
  /** The SDK transport accepted this session's initialize (it is then routable by its id). */
  initialized: boolean;
}

/** `application/json`, with or without parameters (the SDK transport's own test). */
function isJsonContentType(value: string | undefined): boolean {
  return (value ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/**
 * Streamable HTTP toward clients (`--listen`): one proxy session — and one upstream connection or
 * server process — per MCP session. Host and Origin are checked on loopback (DNS rebinding), a
 * bearer token is required off loopback.
 *
 * Sessions are bounded: a server is started only for an initialize the SDK transport accepted
 * (its first message is what starts it), at most `maxSessions` exist at once, an idle one ends
 * after `idleTimeoutMs`, and `stop()` ends every session, initialized or not.
 */
export async function runListen(rt: ProxyRuntime, listen: ListenOptions, onListening?: (url: string) => void): Promise<{ server: Server; stop: () => Promise<void> }> {
  await loadHttpModules();
  const log = rt.cfg.log;
  const maxSessions = listen.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleTimeoutMs = listen.idleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS;
  /** Initialized sessions, by id. */
  const sessions = new Map<string, HttpSession>();
  /** Every session that exists, initialized or still being set up: counted against the cap, ended by stop(). */
  const live = new Set<HttpSession>();
  let stopping = false;
  const guard = isLoopbackHost(listen.host) ? new LoopbackGuard([listen.host]) : undefined;
  const auth = listen.authToken !== undefined ? new BearerAuth(listen.authToken) : undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== listen.path) return rejectRpc(res, 404, `not found: the MCP endpoint is ${listen.path}`);
    if (refusedAtEdge(req, res, guard, auth)) return;
    if (stopping) return rejectRpc(res, 503, 'Ward is shutting down', { Connection: 'close' });
    const limits = rt.cfg.limits ?? DEFAULT_REQUEST_LIMITS;
    /** `refused`: the session the POST is for (its refusals get spans, `--otel`); none before a session exists. */
    const readPost = async (refused?: ListenerRefusals) => {
      const post = await readJsonPost(req, res, listen.maxRequestBytes, limits, log, refused);
      return post && !refusedOverLimit(res, post, limits, log, refused) ? post : undefined;
    };
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const s = sessions.get(sid);
      if (!s || s.session.isEnded) return rejectRpc(res, 404, 'Session not found', {}, RPC.SESSION_NOT_FOUND);
      s.session.touch();
      if (req.method !== 'POST') return s.transport.handleRequest(req, res);
      const refused: ListenerRefusals = (cause, requests, code) => s.session.listenerRefused(cause, requests, code);
      const post = await readPost(refused);
      if (!post) return;
      const reused = s.session.reusedRequestIds(post.body);
      if (reused.length) return refuseReusedIds(res, post.body, reused, log, refused);
      await s.transport.handleRequest(req, res, post.body);
      return;
    }
    if (req.method !== 'POST') return rejectRpc(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    // A new session starts with initialize; read it first so no server is started for anything else.
    const post = await readPost();
    if (!post) return;
    const body = post.body;
    if (refusedInitialize(req, res, body)) return;
    if (live.size >= maxSessions) {
      log.warn('new MCP session refused: too many sessions', { sessions: live.size, max_sessions: maxSessions });
      return rejectRpc(
        res,
        503,
        `Too many MCP sessions: ${live.size} of ${maxSessions} are open. End one (HTTP DELETE with its Mcp-Session-Id), wait for idle sessions to expire, or raise --max-sessions.`,
        { 'Retry-After': '5' },
        RPC.TOO_MANY_SESSIONS,
      );
    }

    await startSession(rt, { sessions, live }, listen.maxRequestBytes, req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      log.error('HTTP request failed', { error: err.message });
      if (!res.headersSent) rejectRpc(res, 500, 'internal error');
      else res.end();
    });
  });
  server.on('connection', (socket) => socket.setNoDelay(true));
  await new Promise<void>((resolve, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : listen.port;
  const shown = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  const where = `http://${shown}:${port}${listen.path}`;
  log.info(`listening on ${where}`, { max_sessions: maxSessions, session_idle_timeout_ms: idleTimeoutMs });
  onListening?.(where);

  const sweep = startIdleSweep(sessions, idleTimeoutMs, log);

  const stop = async () => {
    stopping = true;
    if (sweep) clearInterval(sweep);
    await Promise.all([...live].map((s) => s.session.end(undefined, undefined)));
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections?.();
    await closed;
    await rt.close();
  };
  return { server, stop };
}

/**
 * A body over `--max-call-bytes` that is a request (or a batch) is refused unread — not even
 * parsed, which alone would hold the event loop for a 250k-key body: its id is taken from its
 * first or last bytes (`-32064` for it, HTTP 200) or, when neither end names one, the POST is
 * refused with HTTP 413 (`-32064`, id null), which fails the client's send at once. A body that is
 * an answer (a client's reply to a server request) is not a call and is read as usual. True when
 * it was refused (and answered).
 */
function refusedOversizeRequest(res: ServerResponse, buf: Buffer, limits: RequestLimits, log: ProxyLog, refused?: ListenerRefusals): boolean {
  const head = buf.subarray(0, 512);
  const { id, response } = oversizeId({ head, tail: buf.subarray(Math.max(0, buf.length - 512)) });
  const batch = /^\s*\[/.test(head.toString('utf8'));
  if (response && !batch) return false;
  const message = limitExceeded(undefined, buf.length, limits)!;
  log.warn('request over a limit refused unread; not forwarded', { id, why: message });
  // Unread: its method and _meta are unknown, its id only when not a batch.
  refused?.('limit_exceeded', [{ id: batch ? null : id }], RPC.LIMIT_EXCEEDED);
  if (id === null || batch) {
    rejectRpc(res, 413, message, { Connection: 'close' }, RPC.LIMIT_EXCEEDED);
    return true;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(errorResponse(id, RPC.LIMIT_EXCEEDED, message)));
  return true;
}

/** The messages of a POST body that are requests (a method and an id): what a refusal must answer. */
function requestsOf(body: unknown): { id: string | number; method: string; params: unknown }[] {
  return (Array.isArray(body) ? body : [body]).flatMap((m) => {
    if (typeof m !== 'object' || m === null) return [];
    const { id, method, params } = m as Record<string, unknown>;
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? [{ id, method, params }] : [];
  });
}

/** The session's refusal spans for requests the listener answered itself (`ProxySession.listenerRefused`). */
type ListenerRefusals = ProxySession['listenerRefused'];

/** A POST Ward answers itself, one JSON-RPC error per request in it (HTTP 200); nothing of it is handed on. */
function answerRequests(res: ServerResponse, body: unknown, error: (id: string | number) => { code: number; message: string }): void {
  const errors = requestsOf(body).map(({ id }) => {
    const e = error(id);
    return errorResponse(id, e.code, e.message);
  });
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(errors.length === 1 ? errors[0] : errors));
}

/**
 * A POST whose requests reuse ids still in flight in the session: answered here (a `-32600` for
 * every request in it), so the first request keeps its stream.
 */
function refuseReusedIds(res: ServerResponse, body: unknown, reused: readonly (string | number)[], log: ProxyLog, refused?: ListenerRefusals): void {
  log.warn('request reuses the id of a request still in flight; refused, not forwarded', { ids: reused.join(',') });
  // Every request of the POST is refused for the reused one(s): each gets the refusal's span.
  refused?.('id_reused', requestsOf(body), RPC.INVALID_REQUEST);
  answerRequests(res, body, (id) => ({
    code: RPC.INVALID_REQUEST,
    message: reused.includes(id) ? `Invalid Request: id ${JSON.stringify(id)} is already in use by a request Ward has not answered yet; use a new id` : 'Invalid Request: not processed: another request in this batch reused an id in flight',
  }));
}

/**
 * A POST with a request over `--max-call-bytes` or `--max-call-keys`: refused here, before the SDK
 * transport validates it or a session decides it (`-32064` naming the limit for every request in
 * it). True when it was refused (and answered).
 */
function refusedOverLimit(res: ServerResponse, post: { body: unknown; bytes: number }, limits: RequestLimits, log: ProxyLog, refused?: ListenerRefusals): boolean {
  const requests = requestsOf(post.body);
  const over = requests.length ? limitExceeded(requests.length === 1 ? requests[0]!.params : requests.map((r) => r.params), post.bytes, limits) : undefined;
  if (!over) return false;
  log.warn('request over a limit refused; not forwarded', { ids: requests.map((r) => r.id).join(','), why: over });
  refused?.('limit_exceeded', requests, RPC.LIMIT_EXCEEDED);
  answerRequests(res, post.body, () => ({ code: RPC.LIMIT_EXCEEDED, message: over }));
  return true;
}

/** A refusal in JSON-RPC form (`id: null`), as the MCP SDK's transport answers one. */
function rejectRpc(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code: number = RPC.HTTP_REJECTED): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The edge kit's Host/Origin guard (loopback) and bearer check; true when the request was refused (and answered). */
function refusedAtEdge(req: IncomingMessage, res: ServerResponse, guard: LoopbackGuard | undefined, auth: BearerAuth | undefined): boolean {
  const refused = guard?.refusal(req);
  if (refused) {
    const { status, message } = refusalMessage(refused);
    rejectRpc(res, status, message);
    return true;
  }
  const unauthorized = auth?.refusal(req.headers.authorization);
  if (unauthorized) {
    rejectRpc(res, 401, unauthorized === 'mismatch' ? 'invalid bearer authorization' : 'missing bearer authorization', { 'WWW-Authenticate': 'Bearer' });
    return true;
  }
  return false;
}

/**
 * Ward reads every POST body itself, strictly (a repeated member name is refused: Ward and the
 * server could otherwise read different messages from it), and hands the transport the result.
 * Undefined when the request was refused (and answered).
 */
async function readJsonPost(req: IncomingMessage, res: ServerResponse, maxBytes: number, limits: RequestLimits, log: ProxyLog, refused?: ListenerRefusals): Promise<{ body: unknown; bytes: number } | undefined> {
  let text: string;
  let bytes: number;
  try {
    const buf = await readBody(req, maxBytes);
    bytes = buf.length;
    if (bytes > limits.maxBytes && refusedOversizeRequest(res, buf, limits, log, refused)) return undefined;
    text = buf.toString('utf8');
  } catch (err) {
    // Over the limit (declared or read): 413 and the connection closes; a client gone mid-body gets nothing useful either way.
    const tooLarge = err instanceof HttpError && err.code === 'body_too_large';
    if (tooLarge) {
      refused?.('limit_exceeded', [{}], RPC.HTTP_REJECTED);
      rejectRpc(res, 413, 'request body too large', { Connection: 'close' });
    } else rejectRpc(res, 400, 'Parse error: Invalid JSON', {}, RPC.PARSE_ERROR);
    return undefined;
  }
  try {
    return { body: parseJsonText(text), bytes };
  } catch (err) {
    // Unread: one refusal's span for the POST, without a method or an id.
    if (isJsonDuplicateKeyError(err)) {
      log.warn('request with a repeated member name refused; not forwarded', { error: err.message });
      refused?.('malformed', [{}], RPC.INVALID_REQUEST);
      rejectRpc(res, 400, `Invalid Request: ${err.message} (a message must not repeat a member name)`, {}, RPC.INVALID_REQUEST);
    } else if (err instanceof RangeError) {
      refused?.('malformed', [{}], RPC.INVALID_REQUEST);
      rejectRpc(res, 400, 'Invalid Request: nesting too deep to read', {}, RPC.INVALID_REQUEST);
    } else {
      refused?.('malformed', [{}], RPC.PARSE_ERROR);
      rejectRpc(res, 400, 'Parse error: Invalid JSON', {}, RPC.PARSE_ERROR);
    }
    return undefined;
  }
}

/**
 * A new session starts with an initialize; what the SDK transport would refuse is refused here,
 * before anything exists for it. True when the request was refused (and answered).
 */
function refusedInitialize(req: IncomingMessage, res: ServerResponse, body: unknown): boolean {
  const isInit = (m: unknown) => typeof m === 'object' && m !== null && (m as Record<string, unknown>)['method'] === 'initialize';
  if (!(Array.isArray(body) ? body.some(isInit) : isInit(body))) {
    rejectRpc(res, 400, 'Bad Request: Server not initialized');
    return true;
  }
  const accept = req.headers['accept'] ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    rejectRpc(res, 406, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    return true;
  }
  if (!isJsonContentType(req.headers['content-type'])) {
    rejectRpc(res, 415, 'Unsupported Media Type: Content-Type must be application/json');
    return true;
  }
  if (Array.isArray(body) && body.length > 1) {
    rejectRpc(res, 400, 'Invalid Request: Only one initialization request is allowed', {}, RPC.INVALID_REQUEST);
    return true;
  }
  return false;
}

/** Idle expiry: a client that goes away without DELETE does not keep its server forever. */
function startIdleSweep(sessions: ReadonlyMap<string, HttpSession>, idleTimeoutMs: number, log: ProxyLog): NodeJS.Timeout | undefined {
  if (idleTimeoutMs <= 0) return undefined;
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const e of sessions.values()) {
      const since = e.session.idleSince();
      if (since === undefined || now - since < idleTimeoutMs) continue;
      log.info('MCP session expired (idle)', { session: e.id, idle_ms: now - since });
      void e.session.end();
    }
  }, Math.min(Math.max(Math.floor(idleTimeoutMs / 4), 200), 60_000));
  sweep.unref();
  return sweep;
}

/**
 * One new MCP session for an accepted-looking initialize: its transport, its proxy session and the
 * upstream (started with the initialize, once the transport has accepted it). Counted in `live`
 * at once; routable in `sessions` once initialized; removed from both when it ends.
 */
async function startSession(
  rt: ProxyRuntime,
  { sessions, live }: { sessions: Map<string, HttpSession>; live: Set<HttpSession> },
  maxRequestBytes: number,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const log = rt.cfg.log;
  const sessionId = randomUUID();
  const { NodeStreamableHTTPServerTransport } = loadedHttpModules();
  const transport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => sessionId,
    onsessioninitialized: (id) => {
      entry.initialized = true;
      sessions.set(id, entry);
    },
    maxRequestBodySize: maxRequestBytes,
  });
  const client = new SdkPeer(transport as never, (err) => log.debug('client transport error', { error: err.message }));
  // The server starts with the first message the session sends it: the initialize, once the
  // transport has accepted it.
  const upstream = new DeferredPeer(rt.upstreamPeer(), (err) =>
    log.error('could not start the MCP server for a new session', { session: sessionId, error: err.message }),
  );
  const { session, capture, witness } = rt.newSession(client, upstream, sessionId, true);
  const entry: HttpSession = { id: sessionId, transport, session, initialized: false };
  live.add(entry);
  void session.done.then((end) => {
    live.delete(entry);
    if (sessions.get(sessionId) === entry) sessions.delete(sessionId);
    if (end.error) log.warn(`session ${sessionId} ended: ${end.error.message}`);
    rt.finishSession(capture, witness);
  });
  try {
    await session.start();
    await transport.handleRequest(req, res, body);
  } finally {
    if (!entry.initialized) {
      // The transport refused the initialize: nothing was started for it; drop what exists.
      log.debug('initialize not accepted by the transport; session discarded', { session: sessionId });
      void session.end();
    } else if (upstream.inner instanceof ChildServerPeer && upstream.started) {
      log.debug('MCP server started', { session: sessionId, pid: upstream.inner.pid });
    }
  }
}
