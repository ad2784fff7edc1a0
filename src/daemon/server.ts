import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import { buildJwks, loadKeyRing, type SigningKey, type VerifyKey } from '../keys/index.js';
import { acquireStoreLock, type StoreLock } from '../store/lock.js';
import { openLevelStore } from '../store/level.js';
import type { EvidenceStore } from '../store/types.js';
import type { TraceFormat } from '../trace/record.js';
import { GateService } from './gate-service.js';
import { BearerAuth, HostGuard, isLoopbackHost } from './guard.js';
import { errorResponse, HttpError, sendJson } from './http.js';
import { JsonLog } from './log.js';
import { DaemonMetrics } from './metrics.js';
import { SigningKeyHolder } from './key-holder.js';
import { PolicyHolder, type ReloadTrigger } from './policy-holder.js';
import { matchRoute, ROUTES, type Exchange, type Handler, type Route } from './routes.js';
import { DiscardingSink, GroupCommitSink, type DaemonTraceSink } from './trace-sink.js';
import { Journal, journalDir, recoverJournal } from './journal.js';
import { openStoreThread } from './store-thread.js';

export interface DaemonOptions {
  stateDir: string;
  policyPath: string;
  host: string;
  port: number;
  /** Bearer token; required when `host` is not loopback. */
  authToken?: string | undefined;
  /** Extra Host header names accepted on a loopback listener. */
  allowedHosts?: readonly string[];
  signingKey: SigningKey;
  /**
   * Re-reads the signing key's source on reload (SIGHUP): the `--private-key` file, the
   * `--private-key-env` variable or the default `<state>/keys` key. Undefined: the key never changes
   * (an ephemeral dev key).
   */
  signingKeySource?: (() => SigningKey) | undefined;
  /** Keys that verify approval/delegation tokens (default: the current signing key). */
  tokenVerifyKeys?: readonly VerifyKey[];
  keyWarnings?: readonly string[];
  traceFormat?: TraceFormat;
  profile?: 'standard' | 'oss-prod';
  rateLimitStatePath?: string;
  maxBodyBytes?: number;
  maxPackBytes?: number;
  maxBatchItems?: number;
  queueCapacity?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  shutdownTimeoutMs?: number;
  /** false only for benchmarks: traces are signed and discarded (UNSAFE). */
  traceDurability?: boolean;
  watchPolicy?: boolean;
  /** Ingest the spool and `<state>/traces` this often (ms; 0 = only at start). */
  ingestIntervalMs?: number;
  /** Keep each decision's normalized intent beside its trace (privacy: off by default). */
  captureIntents?: boolean;
  /** Where JSON log lines go (default stderr). */
  logWrite?: (text: string) => void;
  /** Own the store on a worker thread, so indexing never stalls requests (`ward serve` does). */
  storeThread?: boolean;
  /** Test hook: delay each group commit. */
  commitDelayMs?: number;
}

/** Everything a route needs; one per daemon. */
export interface DaemonContext {
  options: Required<Pick<DaemonOptions, 'maxBodyBytes' | 'maxPackBytes' | 'maxBatchItems'>> & DaemonOptions;
  store: EvidenceStore;
  policies: PolicyHolder;
  keys: SigningKeyHolder;
  gate: GateService;
  sink: DaemonTraceSink;
  metrics: DaemonMetrics;
  /** The daemon's key set (every key this process signed with, and the state directory's ring); replaced on key reload. */
  verifyKeys: readonly VerifyKey[];
  jwksText: string;
  state: { draining: boolean; ready: boolean };
  reload(trigger: ReloadTrigger): ReturnType<PolicyHolder['reload']>;
}

export interface Daemon {
  readonly url: string;
  readonly server: Server;
  readonly context: DaemonContext;
  /** Graceful stop: refuse new work, finish in-flight requests, flush traces, close the store. */
  close(): Promise<void>;
  reload(trigger: ReloadTrigger): ReturnType<PolicyHolder['reload']>;
}

export const DEFAULTS = {
  port: 7433,
  maxBodyBytes: 1024 * 1024,
  maxPackBytes: 64 * 1024 * 1024,
  maxBatchItems: 256,
  queueCapacity: 4096,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  shutdownTimeoutMs: 10_000,
  ingestIntervalMs: 5_000,
} as const;

/**
 * Start the daemon: take the state directory's daemon lock (a second daemon fails here, at once,
 * naming the holder), open the store under its own lock, load the policy, then listen.
 */
export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  if (!isLoopbackHost(opts.host) && !opts.authToken) {
    throw new WardError(ERROR_CODES.USAGE, `refusing to listen on non-loopback address ${opts.host} without authentication`, {
      hint: 'set a token in an environment variable and pass --auth-token-env VAR (clients send Authorization: Bearer <token>)',
    });
  }
  const options = { ...DEFAULTS, ...opts };
  const metrics = new DaemonMetrics();
  const policies = new PolicyHolder(opts.policyPath, options.profile ?? 'standard');
  const lock = acquireDaemonLock(opts.stateDir);
  let store: EvidenceStore;
  try {
    store = opts.storeThread ? await openStoreThread(opts.stateDir) : await openLevelStore(opts.stateDir);
  } catch (err) {
    lock.release();
    throw err;
  }
  const log = new JsonLog(opts.logWrite ?? ((text) => void process.stderr.write(text)));
  const durable = options.traceDurability !== false;
  // Decisions answered before a crash are in the journal: store them before serving anything.
  let recovered;
  try {
    recovered = await recoverJournal(opts.stateDir, store);
  } catch (err) {
    await store.close();
    lock.release();
    throw err;
  }
  if (recovered.segments > 0) log.log({ level: 'info', msg: 'journal recovered', ...recovered });
  const journal = new Journal(journalDir(opts.stateDir), store, {
    // On its own thread the store takes large batches (few fsyncs competing with the journal's);
    // on the event loop, small ones (each batch's indexing blocks requests while it runs).
    ingestChunk: opts.storeThread ? 4096 : 256,
    ingestDelayMs: opts.storeThread ? 1000 : 100,
    onIngest: (_n, seconds) => metrics.ingestLatency.observe(seconds) });
  const sink: DaemonTraceSink = durable
    ? new GroupCommitSink(journal, metrics, { capacity: options.queueCapacity, ...(opts.commitDelayMs ? { commitDelayMs: opts.commitDelayMs } : {}) })
    : new DiscardingSink();
  metrics.ingestBacklog.track(() => journal.pendingIngest);
  const keys = new SigningKeyHolder(opts.signingKey, opts.signingKeySource);
  const fixedTokenKeys = opts.tokenVerifyKeys;
  const gate = new GateService(policies, sink, metrics, {
    // Read per decision: a key reload switches new decisions to the new key.
    get signingKey() {
      return keys.current;
    },
    get tokenVerifyKeys() {
      return fixedTokenKeys ?? [keys.current];
    },
    traceFormat: options.traceFormat ?? 'ward',
    profile: options.profile ?? 'standard',
    traceDir: join(opts.stateDir, 'traces'),
    auditDir: join(opts.stateDir, 'audits'),
    rateLimitStatePath: options.rateLimitStatePath ?? join(opts.stateDir, 'gate_rate_limits.json'),
    warnings: opts.keyWarnings ?? [],
    captureIntents: opts.captureIntents === true,
  });
  let ring: readonly VerifyKey[] = loadKeyRing(opts.stateDir);
  const state = { draining: false, ready: false };

  const ctx: DaemonContext = {
    options,
    store,
    policies,
    keys,
    gate,
    sink,
    metrics,
    verifyKeys: [],
    jwksText: '',
    state,
    reload: (trigger) => reloadAll(trigger),
  };
  /** The published key set: the current key, every key this process signed with, and the key ring. */
  const publishKeys = () => {
    const set = new Map<string, VerifyKey>();
    if (!ring.some((k) => k.keyId === keys.current.keyId)) set.set(keys.current.keyId, keys.current);
    for (const k of [...ring, ...keys.usedKeys]) if (!set.has(k.keyId)) set.set(k.keyId, k);
    ctx.verifyKeys = [...set.values()];
    ctx.jwksText = JSON.stringify(buildJwks(ctx.verifyKeys), null, 2) + '\n';
  };
  publishKeys();
  keys.onReload((result, trigger) => {
    try {
      ring = loadKeyRing(opts.stateDir); // `ward keys rotate` retires keys there
    } catch (err) {
      log.log({ level: 'error', msg: 'key ring reload', trigger, error: (err as Error).message });
    }
    publishKeys();
    log.log({ level: result.ok ? 'info' : 'error', msg: 'key reload', trigger, ok: result.ok, key_id: result.key_id, changed: result.changed, ...(result.error ? { error: result.error } : {}) });
  });
  /** SIGHUP: the policy and the signing key are each re-read, validated and switched, or kept. */
  const reloadAll = (trigger: ReloadTrigger) => {
    keys.reload(trigger);
    return policies.reload(trigger);
  };
  policies.onReload((result, trigger) => {
    metrics.policyReloads.inc({ result: result.ok ? 'ok' : 'failed', trigger });
    log.log({ level: result.ok ? 'info' : 'error', msg: 'policy reload', trigger, ok: result.ok, policy_digest: result.digest, changed: result.changed, ...(result.error ? { error: result.error } : {}) });
  });
  metrics.queueDepth.track(() => sink.depth);
  metrics.queueCapacity.track(() => (Number.isFinite(sink.capacity) ? sink.capacity : -1));
  metrics.policyReloadFailing.track(() => (policies.failing ? 1 : 0));
  metrics.policyLoadedAt.track(() => policies.loadedAtDate.getTime() / 1000);
  metrics.ready.track(() => (state.ready && !state.draining ? 1 : 0));

  // Evidence other processes left for the store owner (spooled records, `gate eval` trace files).
  await ingestQuietly(store, log);
  let ingesting = false;
  const ingestTimer =
    options.ingestIntervalMs > 0
      ? setInterval(() => {
          if (ingesting || state.draining) return;
          ingesting = true;
          void ingestQuietly(store, log).finally(() => (ingesting = false));
        }, options.ingestIntervalMs)
      : undefined;
  ingestTimer?.unref();

  // The daemon's routes plus the reference decision service (`/v1/evaluate*`).
  const decisionService = await decisionServiceRoutes(opts, policies, keys, options.maxBodyBytes);
  const routes = [...ROUTES, ...decisionService.routes];

  const auth = opts.authToken ? new BearerAuth(opts.authToken) : undefined;
  const hostGuard = isLoopbackHost(opts.host) ? new HostGuard(opts.allowedHosts) : opts.allowedHosts?.length ? new HostGuard(opts.allowedHosts) : undefined;
  let inFlight = 0;
  metrics.inFlight.track(() => inFlight);
  const idPrefix = randomBytes(4).toString('hex');
  let nextId = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    inFlight++;
    const ex: Exchange = { req, res, id: idPrefix + (nextId++).toString(16).padStart(16, '0'), route: 'unmatched', status: 0, exitCode: 0 };
    res.setHeader('x-request-id', ex.id);
    if (state.draining) res.setHeader('connection', 'close');
    try {
      const match = matchRoute(req, routes);
      ex.route = match.route?.name ?? 'unmatched';
      hostGuard?.check(req);
      if (auth && !match.route?.public) auth.check(req);
      if (!match.route) throw new HttpError(404, `no such endpoint: ${req.method ?? ''} ${(req.url ?? '').split('?', 1)[0]}`, { hint: 'see docs/daemon.md for the API', reason: 'not_found' });
      const handler = match.route.methods[req.method ?? ''];
      if (!handler) {
        throw new HttpError(405, `method ${req.method ?? ''} not allowed on ${match.route.name}`, {
          headers: { allow: Object.keys(match.route.methods).join(', ') },
          reason: 'method',
        });
      }
      if (state.draining && !match.route.public) throw new HttpError(503, 'shutting down', { headers: { 'retry-after': '1' }, reason: 'draining' });
      await handler(ctx, ex, match.params);
    } catch (err) {
      const e = errorResponse(err);
      const reason = err instanceof HttpError ? err.options.reason : undefined;
      if (reason && reason !== 'bad_request') metrics.rejected.inc({ reason });
      if (e.status >= 500 && !(err instanceof HttpError)) {
        log.log({ level: 'error', msg: 'request failed', request_id: ex.id, route: ex.route, error: err instanceof Error ? err.message : String(err) });
      }
      ex.exitCode = e.exitCode;
      ex.errorCode = String(e.body['error_code']);
      if (!res.headersSent) {
        ex.status = e.status;
        sendJson(res, e.status, e.body, { ...e.headers, 'x-ward-exit-code': String(e.exitCode) });
      } else res.destroy();
      if (e.headers['connection'] === 'close') req.resume();
    } finally {
      inFlight--;
      const seconds = (performance.now() - started) / 1000;
      metrics.requests.inc({ route: ex.route, code: String(ex.status) });
      if (ex.route === 'gate.eval') metrics.requestLatency.observe(seconds);
      log.log({
        level: 'info',
        msg: 'request',
        request_id: ex.id,
        method: req.method,
        route: ex.route,
        status: ex.status,
        latency_ms: Math.round(seconds * 1e6) / 1000,
        ...(ex.verdict ? { verdict: ex.verdict } : {}),
        ...(ex.errorCode ? { error_code: ex.errorCode } : {}),
      });
      if (state.draining && inFlight === 0) drainedWaiters.splice(0).forEach((w) => w());
    }
  };

  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, options.headersTimeoutMs),
      maxHeaderSize: 16 * 1024,
      noDelay: true,
    },
    (req, res) => void handle(req, res),
  );
  server.maxHeadersCount = 100;
  server.maxRequestsPerSocket = 0;
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const code = err.code ?? '';
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    metrics.rejected.inc({ reason: status === 408 ? 'timeout' : status === 431 ? 'header_too_large' : 'malformed' });
    if (socket.writable) {
      const body = JSON.stringify({ ok: false, error: status === 408 ? 'request timeout' : 'malformed request', error_code: 'invalid_input' }) + '\n';
      socket.end(`HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    } else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (err: unknown) => {
    await sink.close();
    await store.close();
    lock.release();
    throw new WardError(ERROR_CODES.IO, `listen on ${opts.host}:${opts.port}: ${(err as Error).message}`, { cause: err });
  });
  if (options.watchPolicy !== false) policies.watchFile();
  state.ready = true;
  const address = server.address() as AddressInfo;
  const hostText = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostText}:${address.port}`;

  const drainedWaiters: (() => void)[] = [];
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      state.draining = true;
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([new Promise<void>((r) => drainedWaiters.push(r)), delay(options.shutdownTimeoutMs)]);
      }
      server.closeAllConnections();
      await serverClosed;
      if (ingestTimer) clearInterval(ingestTimer);
      policies.close();
      await decisionService.close();
      await sink.close();
      await store.close();
      lock.release();
      log.log({ level: 'info', msg: 'stopped' });
      log.flush();
    })();
    return closing;
  };
  log.log({ level: 'info', msg: 'listening', url, policy_digest: policies.current.digest, trace_durability: durable, auth: Boolean(auth) });
  return { url, server, context: ctx, close, reload: reloadAll };
}

/**
 * The reference `mcp serve` decision service (`/v1/evaluate`, `/sse`, `/stream`), from the MCP
 * compat module, behind the daemon's own auth, Host guard, logging and metrics. It follows the
 * daemon's policy reloads; its traces are files in `<state>/traces`, ingested like any `gate eval`.
 */
async function decisionServiceRoutes(
  opts: DaemonOptions,
  policies: PolicyHolder,
  keys: SigningKeyHolder,
  maxBodyBytes: number,
): Promise<{ routes: Route[]; close: () => Promise<void> }> {
  const { createEvaluateHandler, EVALUATE_ROUTES } = await import('../mcp/service/http.js');
  const { DecisionTraceWriter } = await import('../mcp/service/evaluate.js');
  const config = {
    policy: policies.current,
    signingKey: keys.current,
    keyWarnings: opts.keyWarnings ?? [],
    profile: opts.profile ?? 'standard',
    defaultAdapter: 'mcp' as const,
    allowClientArtifactPaths: false,
    serve: true,
    jobRoot: join(opts.stateDir, 'jobs'),
    cwd: process.cwd(),
    stateDir: opts.stateDir,
    traceDir: join(opts.stateDir, 'traces'),
  };
  policies.onReload((result) => {
    if (result.ok) config.policy = policies.current;
  });
  keys.onReload(() => {
    config.signingKey = keys.current;
  });
  const traceWriter = new DecisionTraceWriter();
  const evaluate = createEvaluateHandler({ config, maxRequestBytes: maxBodyBytes, traceWriter });
  const handler: Handler = async (_ctx, ex) => {
    await evaluate(ex.req, ex.res);
    ex.status = ex.res.statusCode;
  };
  return {
    routes: EVALUATE_ROUTES.map((path) => ({ name: path.slice(1).replaceAll('/', '.'), segments: path.slice(1).split('/'), methods: { POST: handler } })),
    close: () => traceWriter.close(),
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** One daemon per state directory: Ward's O_EXCL lock (pid, host, start time), checked before the store. */
function acquireDaemonLock(stateDir: string): StoreLock {
  try {
    return acquireStoreLock(join(stateDir, 'daemon.lock'));
  } catch (err) {
    if (isWardError(err) && err.code === ERROR_CODES.STORE_LOCKED) {
      throw new WardError(ERROR_CODES.STORE_LOCKED, `another ward serve owns state directory ${stateDir}: ${err.message.replace(/^store is locked /, 'lock ')}`, {
        hint: 'stop the other daemon, or give this one its own --state-dir; clients can use the running one with --daemon URL',
      });
    }
    throw err;
  }
}

async function ingestQuietly(store: EvidenceStore, log: JsonLog): Promise<void> {
  try {
    const report = await store.ingest();
    if (report.files > 0) log.log({ level: 'info', msg: 'ingest', files: report.files, stored: report.stored.length, duplicates: report.duplicates, conflicts: report.conflicts.length, rejected: report.rejected.length });
  } catch (err) {
    log.log({ level: 'error', msg: 'ingest failed', error: (err as Error).message });
  }
}
