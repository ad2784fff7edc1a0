import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { BearerAuth, isLoopbackHost, LoopbackGuard } from '../edge/guard.js';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import { buildJwks, loadKeyRing, type VerifyKey } from '../keys/index.js';
import { acquireStoreLock, type StoreLock } from '../store/lock.js';
import { openLevelStore } from '../store/level.js';
import type { EvidenceStore } from '../store/types.js';
import { DEFAULTS, type DaemonContext, type DaemonOptions } from './context.js';
import { decisionServiceRoutes } from './decision-service.js';
import { GateService } from './gate-service.js';
import { Journal, journalDir, recoverJournal } from './journal.js';
import { SigningKeyHolder } from './key-holder.js';
import { JsonLog } from './log.js';
import { DaemonMetrics } from './metrics.js';
import { PolicyHolder, type ReloadTrigger } from './policy-holder.js';
import { answerClientError, RequestHandler, type Guards } from './request.js';
import { ROUTES } from './routes.js';
import { openStoreThread } from './store-thread.js';
import { DiscardingSink, GroupCommitSink, type DaemonTraceSink } from './trace-sink.js';


export interface Daemon {
  readonly url: string;
  readonly server: Server;
  readonly context: DaemonContext;
  /** Graceful stop: refuse new work, finish in-flight requests, flush traces, close the store. */
  close(): Promise<void>;
  reload(trigger: ReloadTrigger): ReturnType<PolicyHolder['reload']>;
}

type ResolvedOptions = DaemonContext['options'] & { [K in keyof typeof DEFAULTS]: number };

/**
 * Start the daemon: take the state directory's daemon lock (a second daemon fails here, at once,
 * naming the holder), open the store under its own lock, replay the journal, load the policy,
 * then listen. Each step below is one function; a failure undoes the steps before it.
 */
export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  refuseOpenListener(opts);
  const options: ResolvedOptions = { ...DEFAULTS, ...opts };
  const metrics = new DaemonMetrics();
  const log = new JsonLog(opts.logWrite ?? ((text) => void process.stderr.write(text)));
  const policies = new PolicyHolder(opts.policyPath, options.profile ?? 'standard');
  const { lock, store } = await openState(opts, log);
  const sink = openTraceSink(options, store, metrics);
  const keys = new SigningKeyHolder(opts.signingKey, opts.signingKeySource);
  const gate = createGateService(options, policies, keys, sink, metrics);
  const ring = loadKeyRing(opts.stateDir);
  const ctx = createContext(options, ring, { store, policies, keys, gate, sink, metrics });
  watchReloads(ctx, ring, log);
  trackGauges(ctx);
  const stopIngest = await startIngestion(ctx, log);
  const decisionService = decisionServiceRoutes(opts, policies, keys, options.maxBodyBytes);
  const guards = guardsFor(opts);
  const requests = new RequestHandler(ctx, [...ROUTES, ...decisionService.routes], guards, log);
  const server = createHttpServer(options, requests, metrics);
  const url = await listen(server, opts).catch(async (err: unknown) => {
    stopIngest();
    await decisionService.close();
    await sink.close();
    await store.close();
    lock.release();
    throw err;
  });
  if (options.watchPolicy !== false) policies.watchFile();
  ctx.state.ready = true;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      ctx.state.draining = true;
      await stopServing(server, requests, options.shutdownTimeoutMs);
      stopIngest();
      policies.close();
      await decisionService.close();
      await sink.close();
      await store.close();
      lock.release();
      log.log({ level: 'info', msg: 'stopped' });
      log.flush();
    })());
  log.log({ level: 'info', msg: 'listening', url, policy_digest: policies.current.digest, trace_durability: sink.durable, auth: Boolean(guards.auth) });
  return { url, server, context: ctx, close, reload: ctx.reload };
}

/** A listener anyone on the network can reach must have a token. */
function refuseOpenListener(opts: DaemonOptions): void {
  if (!isLoopbackHost(opts.host) && !opts.authToken) {
    throw new WardError(ERROR_CODES.USAGE, `refusing to listen on non-loopback address ${opts.host} without authentication`, {
      hint: 'set a token in an environment variable and pass --auth-token-env VAR (clients send Authorization: Bearer <token>)',
    });
  }
}

/**
 * The daemon lock, then the store (on a worker thread for `ward serve`), then the journal's
 * replay: decisions answered before a crash are stored before anything is served.
 */
async function openState(opts: DaemonOptions, log: JsonLog): Promise<{ lock: StoreLock; store: EvidenceStore }> {
  const lock = acquireDaemonLock(opts.stateDir);
  let store: EvidenceStore;
  try {
    store = opts.storeThread ? await openStoreThread(opts.stateDir) : await openLevelStore(opts.stateDir);
  } catch (err) {
    lock.release();
    throw err;
  }
  try {
    const recovered = await recoverJournal(opts.stateDir, store);
    if (recovered.segments > 0) log.log({ level: 'info', msg: 'journal recovered', ...recovered });
  } catch (err) {
    await store.close();
    lock.release();
    throw err;
  }
  return { lock, store };
}

/** Where answered decisions' traces go: the group-committed journal, or nowhere (benchmarks only). */
function openTraceSink(options: ResolvedOptions, store: EvidenceStore, metrics: DaemonMetrics): DaemonTraceSink {
  const journal = new Journal(journalDir(options.stateDir), store, {
    // On its own thread the store takes large batches (few fsyncs competing with the journal's);
    // on the event loop, small ones (each batch's indexing blocks requests while it runs).
    ingestChunk: options.storeThread ? 4096 : 256,
    ingestDelayMs: options.storeThread ? 1000 : 100,
    onIngest: (_n, seconds) => metrics.ingestLatency.observe(seconds),
  });
  metrics.ingestBacklog.track(() => journal.pendingIngest);
  if (options.traceDurability === false) return new DiscardingSink();
  return new GroupCommitSink(journal, metrics, { capacity: options.queueCapacity, ...(options.commitDelayMs ? { commitDelayMs: options.commitDelayMs } : {}) });
}

function createGateService(options: ResolvedOptions, policies: PolicyHolder, keys: SigningKeyHolder, sink: DaemonTraceSink, metrics: DaemonMetrics): GateService {
  const fixedTokenKeys = options.tokenVerifyKeys;
  return new GateService(policies, sink, metrics, {
    // Read per decision: a key reload switches new decisions to the new key.
    get signingKey() {
      return keys.current;
    },
    get tokenVerifyKeys() {
      return fixedTokenKeys ?? [keys.current];
    },
    traceFormat: options.traceFormat ?? 'ward',
    profile: options.profile ?? 'standard',
    traceDir: join(options.stateDir, 'traces'),
    auditDir: join(options.stateDir, 'audits'),
    rateLimitStatePath: options.rateLimitStatePath ?? join(options.stateDir, 'gate_rate_limits.json'),
    warnings: options.keyWarnings ?? [],
    captureIntents: options.captureIntents === true,
  });
}

function createContext(options: ResolvedOptions, ring: readonly VerifyKey[], parts: Pick<DaemonContext, 'store' | 'policies' | 'keys' | 'gate' | 'sink' | 'metrics'>): DaemonContext {
  const ctx: DaemonContext = {
    options,
    ...parts,
    verifyKeys: [],
    jwksText: '',
    state: { draining: false, ready: false },
    // SIGHUP: the policy and the signing key are each re-read, validated and switched, or kept.
    reload: (trigger) => {
      parts.keys.reload(trigger);
      return parts.policies.reload(trigger);
    },
  };
  publishKeys(ctx, ring);
  return ctx;
}

/** The published key set: the current key, every key this process signed with, and the key ring. */
function publishKeys(ctx: DaemonContext, ring: readonly VerifyKey[]): void {
  const set = new Map<string, VerifyKey>();
  if (!ring.some((k) => k.keyId === ctx.keys.current.keyId)) set.set(ctx.keys.current.keyId, ctx.keys.current);
  for (const k of [...ring, ...ctx.keys.usedKeys]) if (!set.has(k.keyId)) set.set(k.keyId, k);
  ctx.verifyKeys = [...set.values()];
  ctx.jwksText = JSON.stringify(buildJwks(ctx.verifyKeys), null, 2) + '\n';
}

/** Key and policy reloads: republish the key set, count and log each outcome. */
function watchReloads(ctx: DaemonContext, initialRing: readonly VerifyKey[], log: JsonLog): void {
  const stateDir = ctx.options.stateDir;
  let ring = initialRing;
  ctx.keys.onReload((result, trigger) => {
    try {
      ring = loadKeyRing(stateDir); // `ward keys rotate` retires keys there
    } catch (err) {
      log.log({ level: 'error', msg: 'key ring reload', trigger, error: (err as Error).message });
    }
    publishKeys(ctx, ring);
    log.log({ level: result.ok ? 'info' : 'error', msg: 'key reload', trigger, ok: result.ok, key_id: result.key_id, changed: result.changed, ...(result.error ? { error: result.error } : {}) });
  });
  ctx.policies.onReload((result, trigger) => {
    ctx.metrics.policyReloads.inc({ result: result.ok ? 'ok' : 'failed', trigger });
    log.log({ level: result.ok ? 'info' : 'error', msg: 'policy reload', trigger, ok: result.ok, policy_digest: result.digest, changed: result.changed, ...(result.error ? { error: result.error } : {}) });
  });
}

function trackGauges(ctx: DaemonContext): void {
  const { metrics, sink, policies, state } = ctx;
  metrics.queueDepth.track(() => sink.depth);
  metrics.queueCapacity.track(() => (Number.isFinite(sink.capacity) ? sink.capacity : -1));
  metrics.policyReloadFailing.track(() => (policies.failing ? 1 : 0));
  metrics.policyLoadedAt.track(() => policies.loadedAtDate.getTime() / 1000);
  metrics.ready.track(() => (state.ready && !state.draining ? 1 : 0));
}

/**
 * Evidence other processes left for the store owner (spooled records, `gate eval` trace files):
 * ingested once now, then every `ingestIntervalMs`. Returns the function that stops the timer.
 */
async function startIngestion(ctx: DaemonContext, log: JsonLog): Promise<() => void> {
  await ingestQuietly(ctx.store, log);
  const interval = ctx.options.ingestIntervalMs ?? DEFAULTS.ingestIntervalMs;
  if (interval <= 0) return () => {};
  let ingesting = false;
  const timer = setInterval(() => {
    if (ingesting || ctx.state.draining) return;
    ingesting = true;
    void ingestQuietly(ctx.store, log).finally(() => (ingesting = false));
  }, interval);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Bearer auth when a token is set; Host and Origin checks on loopback (where the listen address
 * itself is an accepted Host too), or wherever --allowed-host names hosts.
 */
function guardsFor(opts: DaemonOptions): Guards {
  const loopback = isLoopbackHost(opts.host);
  const extra = [...(opts.allowedHosts ?? []), ...(loopback ? [opts.host] : [])];
  return {
    auth: opts.authToken ? new BearerAuth(opts.authToken) : undefined,
    loopback: loopback || (opts.allowedHosts?.length ?? 0) > 0 ? new LoopbackGuard(extra) : undefined,
  };
}

function createHttpServer(options: ResolvedOptions, requests: RequestHandler, metrics: DaemonMetrics): Server {
  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, options.headersTimeoutMs),
      maxHeaderSize: 16 * 1024,
      noDelay: true,
    },
    (req, res) => void requests.handle(req, res),
  );
  server.maxHeadersCount = 100;
  server.maxRequestsPerSocket = 0;
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(metrics, err, socket));
  return server;
}

/** Bind, and resolve with the URL the daemon answers on. */
async function listen(server: Server, opts: DaemonOptions): Promise<string> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    throw new WardError(ERROR_CODES.IO, `listen on ${opts.host}:${opts.port}: ${(err as Error).message}`, { cause: err });
  }
  const address = server.address() as AddressInfo;
  const hostText = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${hostText}:${address.port}`;
}

/** Stop accepting, let requests in flight finish (up to the shutdown timeout), then cut what is left. */
async function stopServing(server: Server, requests: RequestHandler, timeoutMs: number): Promise<void> {
  const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await Promise.race([requests.drained(), delay(timeoutMs)]);
  server.closeAllConnections();
  await serverClosed;
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
