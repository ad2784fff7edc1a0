import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BearerAuth, isLoopbackHost, LoopbackGuard } from '../edge/guard.js';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import { buildJwks, loadKeyRing, type SigningKey, type VerifyKey } from '../keys/index.js';
import { migrate, PgPool } from '../pg/index.js';
import { acquireStoreLock, type StoreLock } from '../store/lock.js';
import { openLevelStore } from '../store/level.js';
import type { EvidenceStore } from '../store/types.js';
import { attachControlPlane, controlSettingsFromEnv, type AttachedControlPlane } from './cluster-control.js';
import { ClusterKeySet } from './cluster-keys.js';
import { DEFAULTS, type ClusterParts, type DaemonContext, type DaemonOptions, type PostgresOptions } from './context.js';
import { ApproverKeys, attachConsole } from './console/index.js';
import { decisionServiceRoutes } from './decision-service.js';
import { GateService } from './gate-service.js';
import { Journal, journalDir, recoverJournal } from './journal.js';
import { StorageFaults } from '../state/storage-fault.js';
import { sweepTempFiles } from '../state/atomic-file.js';
import { spoolDir } from '../store/spool.js';
import { SigningKeyHolder } from './key-holder.js';
import { JsonLog } from './log.js';
import { trackTelemetryLoss } from '../telemetry/loss-gauge.js';
import { DaemonMetrics } from './metrics.js';
import { PolicyHolder, type ReloadTrigger } from './policy-holder.js';
import { countRoundTrips, StoreHealth } from './pg-health.js';
import { PgGroupCommitSink } from './pg-sink.js';
import { openClusterStore } from './pg-store.js';
import { answerClientError, RequestHandler, type Guards } from './request.js';
import { overloaded, ROUTES, type Route } from './routes.js';
import { consoleAssetRoutes } from './console/assets.js';
import { openStoreThread } from './store-thread.js';
import { DiscardingSink, GroupCommitSink, type DaemonTraceSink } from './trace-sink.js';
import type { SignedTrace } from '../trace/index.js';


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
  const approvers = new ApproverKeys(opts.approverKeysPath); // a bad approvers file fails the start, before any state is taken
  const options: ResolvedOptions = { ...DEFAULTS, ...opts };
  const metrics = new DaemonMetrics();
  const log = new JsonLog(opts.logWrite ?? ((text) => void process.stderr.write(text)));
  const policies = new PolicyHolder(opts.policyPath, options.profile ?? 'standard');
  const ring = loadKeyRing(opts.stateDir);
  const { lock, store, cluster } = opts.postgres ? await openClusterState(opts, opts.postgres, ring, metrics, log) : { ...(await openState(opts, log)), cluster: undefined };
  const sink = cluster ? openPgSink(options, store, metrics, cluster) : await openTraceSink(options, store, metrics, log).catch(async (err: unknown) => {
    await store.close();
    lock.release();
    throw err;
  });
  const keys = new SigningKeyHolder(opts.signingKey, opts.signingKeySource);
  const gate = createGateService(options, policies, keys, sink, metrics, cluster, approvers);
  const ctx = createContext(options, ring, { store, policies, keys, gate, sink, metrics }, cluster);
  watchReloads(ctx, ring, log);
  trackGauges(ctx);
  const stopIngest = await startIngestion(ctx, log);
  const decisionService = decisionServiceRoutes(opts, policies, keys, options.maxBodyBytes, cluster ? commitThrough(sink) : undefined);
  const consoleApi = attachConsole(gate, { policy: () => policies.current, stateDir: opts.stateDir, approvers, extraKeys: () => opts.tokenVerifyKeys ?? [], approvalArgs: opts.approvalArgs, metrics });
  let control: AttachedControlPlane | undefined;
  const releaseState = async () => {
    stopIngest();
    await control?.close();
    await decisionService.close();
    await sink.close();
    cluster?.keys.stop();
    cluster?.health.stop();
    await store.close();
    await cluster?.db.close();
    lock.release();
  };
  try {
    if (cluster) {
      const settings = controlSettingsFromEnv();
      const trusted = opts.postgres?.policyPublicKeys;
      control = await attachControlPlane(ctx, cluster.db, log, trusted ? { ...settings, policyPublicKeys: trusted } : settings);
    }
  } catch (err) {
    await releaseState();
    throw err;
  }
  const routes: Route[] = [...ROUTES, ...(control?.routes ?? []), ...decisionService.routes, ...consoleApi.routes, ...consoleAssetRoutes()];
  const guards = { ...guardsFor(opts), sessions: consoleApi.parts.sessions };
  const requests = new RequestHandler(ctx, routes, guards, log);
  const server = createHttpServer(options, requests, metrics);
  const url = await listen(server, opts).catch(async (err: unknown) => {
    await releaseState();
    throw err;
  });
  if (options.watchPolicy !== false) policies.watchFile();
  ctx.state.ready = true;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      ctx.state.draining = true;
      consoleApi.parts.close(); // open event streams end, so draining does not wait for them
      await stopServing(server, requests, options.shutdownTimeoutMs);
      policies.close();
      await releaseState();
      log.log({ level: 'info', msg: 'stopped' });
      log.flush();
    })());
  log.log({
    level: 'info',
    msg: 'listening',
    url,
    policy_digest: policies.current.digest,
    trace_durability: sink.durable,
    auth: Boolean(guards.auth),
    ...(cluster ? { store: cluster.db.display, replica: cluster.replica } : {}),
  });
  return { url, server, context: ctx, close, reload: ctx.reload };
}

/**
 * On PostgreSQL, the decision service's traces are committed through the replica's sink (with its
 * admission control) before the answer, like every gate decision's.
 */
function commitThrough(sink: DaemonTraceSink): (trace: SignedTrace) => Promise<unknown> {
  return (trace) => {
    try {
      if (!sink.admit()) return Promise.reject(overloaded());
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return sink.write(trace);
  };
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
  // Temporary files a writer that died (or a full disk) left in the directories the daemon ingests.
  for (const dir of [join(opts.stateDir, 'traces'), spoolDir(opts.stateDir)]) sweepTempFiles(dir);
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

/**
 * A replica on PostgreSQL: the daemon lock of its own state directory, a pool, the schema migrated
 * (under the advisory lock: replicas starting together migrate once), the evidence store, and this
 * replica's signing key registered in the cluster's key set before it signs anything. A journal a
 * single-node daemon left in the state directory is replayed into PostgreSQL first.
 */
async function openClusterState(opts: DaemonOptions, pgOpts: PostgresOptions, ring: readonly VerifyKey[], metrics: DaemonMetrics, log: JsonLog): Promise<{ lock: StoreLock; store: EvidenceStore; cluster: ClusterParts }> {
  const lock = acquireDaemonLock(opts.stateDir);
  const replica = pgOpts.replica ?? `${hostname()}:${process.pid}`;
  const db = new PgPool(pgOpts.config, {
    max: pgOpts.poolSize ?? 10,
    acquireTimeoutMs: pgOpts.acquireTimeoutMs ?? 2000,
    statementTimeoutMs: pgOpts.statementTimeoutMs ?? 10_000,
    ...(pgOpts.queryTimeoutMs !== undefined ? { queryTimeoutMs: pgOpts.queryTimeoutMs } : {}),
    applicationName: `ward serve ${replica}`.slice(0, 63),
  });
  metrics.clusterMetrics();
  countRoundTrips(db, metrics.storeRoundTrips);
  let store: EvidenceStore | undefined;
  try {
    const migrated = await migrate(db);
    if (migrated.ran.length > 0) log.log({ level: 'info', msg: 'schema migrated', store: db.display, ran: migrated.ran, version: migrated.version });
    store = await openClusterStore(db, opts.stateDir);
    const recovered = await recoverJournal(opts.stateDir, store);
    if (recovered.segments > 0) log.log({ level: 'info', msg: 'journal recovered', ...recovered });
    const health = new StoreHealth(db);
    metrics.storeUp.track(() => (health.up ? 1 : 0));
    const keys = new ClusterKeySet(db, replica, pgOpts.keyRefreshMs !== undefined ? { refreshMs: pgOpts.keyRefreshMs } : {});
    // The state directory's key ring (current and retired keys, `ward keys rotate`) is registered
    // too: traces those keys signed may be in the store (imported from a single node), and every
    // replica must verify them.
    await keys.register([opts.signingKey, ...ring]);
    await keys.refresh();
    health.observe(undefined);
    return { lock, store, cluster: { db, replica, keys, health } };
  } catch (err) {
    await store?.close().catch(() => undefined);
    await db.close();
    lock.release();
    throw err;
  }
}

function openPgSink(options: ResolvedOptions, store: EvidenceStore, metrics: DaemonMetrics, cluster: ClusterParts): DaemonTraceSink {
  if (options.traceDurability === false) return new DiscardingSink();
  return new PgGroupCommitSink(store, metrics, {
    capacity: options.queueCapacity,
    // Commits overlap (the next group forms while earlier COMMITs wait for the WAL flush, which
    // PostgreSQL shares between concurrent commits): up to four, as the journal's syncs, leaving two
    // connections of the pool to reads and shared tokens and limits; never fewer than two, so with a
    // tiny pool a commit stuck on a lock makes the next group fail after the acquire timeout (503 at
    // once) instead of queueing behind it.
    maxInFlight: Math.min(4, Math.max(2, cluster.db.pool.options.max - 2)),
    onCommit: (err) => cluster.health.observe(err),
    refusal: () => cluster.health.refusal,
    ...(options.postgres?.commitTimeoutMs !== undefined ? { commitTimeoutMs: options.postgres.commitTimeoutMs } : {}),
    ...(options.commitDelayMs ? { commitDelayMs: options.commitDelayMs } : {}),
  });
}

/**
 * Where answered decisions' traces go: the group-committed journal, or nowhere (benchmarks only).
 * The journal's first segment is preallocated before the daemon listens: with no room for it the
 * start fails (ERR_STORAGE_FULL) instead of reporting ready with nowhere to write.
 */
async function openTraceSink(options: ResolvedOptions, store: EvidenceStore, metrics: DaemonMetrics, log: JsonLog): Promise<DaemonTraceSink> {
  const faults = new StorageFaults({
    // Logged once per episode (its cause, then its end), counted per failed write.
    onFault: (f) => log.log({ level: 'error', msg: 'storage fault: refusing decisions until writes succeed', source: f.source, errno: f.code, error: f.message }),
    onRecovered: (f, seconds) => log.log({ level: 'info', msg: 'storage recovered: serving decisions', source: f.source, errno: f.code, seconds: Math.round(seconds * 1000) / 1000 }),
    onError: (source, code) => metrics.storageErrors.inc({ source, code }),
  });
  const journal = new Journal(journalDir(options.stateDir), store, {
    // On its own thread the store takes large batches (few fsyncs competing with the journal's);
    // on the event loop, small ones (each batch's indexing blocks requests while it runs).
    ingestChunk: options.storeThread ? 4096 : 256,
    ingestDelayMs: options.storeThread ? 1000 : 100,
    onIngest: (_n, seconds) => metrics.ingestLatency.observe(seconds),
    faults,
    ...(options.storageRetryMs !== undefined ? { retryMs: options.storageRetryMs } : {}),
  });
  metrics.ingestBacklog.track(() => journal.pendingIngest);
  metrics.storageFault.track(() => (faults.current ? 1 : 0));
  try {
    await journal.preallocate();
  } catch (err) {
    await journal.close().catch(() => undefined);
    throw err;
  }
  if (options.traceDurability === false) return new DiscardingSink();
  return new GroupCommitSink(journal, metrics, { capacity: options.queueCapacity, ...(options.commitDelayMs ? { commitDelayMs: options.commitDelayMs } : {}) });
}

function createGateService(options: ResolvedOptions, policies: PolicyHolder, keys: SigningKeyHolder, sink: DaemonTraceSink, metrics: DaemonMetrics, cluster: ClusterParts | undefined, approvers: ApproverKeys): GateService {
  const fixedTokenKeys = options.tokenVerifyKeys;
  const signing = cluster ? registeredKey(keys, cluster) : () => keys.current;
  return new GateService(policies, sink, metrics, {
    // Read per decision: a key reload switches new decisions to the new key.
    get signingKey() {
      return signing();
    },
    // The approvers list (--approver-keys) is trusted besides them; read per decision (the file may change).
    get tokenVerifyKeys() {
      const base = fixedTokenKeys ?? [keys.current];
      return approvers.path ? [...base, ...approvers.keys()] : base;
    },
    traceFormat: options.traceFormat ?? 'ward',
    profile: options.profile ?? 'standard',
    traceDir: join(options.stateDir, 'traces'),
    auditDir: join(options.stateDir, 'audits'),
    rateLimitStatePath: options.rateLimitStatePath ?? join(options.stateDir, 'gate_rate_limits.json'),
    warnings: options.keyWarnings ?? [],
    captureIntents: options.captureIntents === true,
    clusterDb: cluster?.db,
    approvalTokenReuse: options.approvalTokenReuse,
  });
}

/**
 * On PostgreSQL a reloaded key signs only once it is registered in the cluster's key set, so no
 * trace in the store names a key another replica cannot find; until then the previous key signs.
 * A registration that fails is retried on the next key refresh.
 */
function registeredKey(keys: SigningKeyHolder, cluster: ClusterParts): () => SigningKey {
  let active = keys.current;
  const registered = new Set([active.keyId]);
  let registering: SigningKey | undefined;
  const tryRegister = (key: SigningKey) => {
    if (registering === key) return;
    registering = key;
    void cluster.keys.register([key]).then(
      () => {
        registered.add(key.keyId);
        if (keys.current === key) active = key;
      },
      () => undefined,
    ).finally(() => {
      if (registering === key) registering = undefined;
    });
  };
  return () => {
    const current = keys.current;
    if (current === active) return active;
    if (registered.has(current.keyId)) return (active = current);
    tryRegister(current);
    return active;
  };
}

function createContext(options: ResolvedOptions, ring: readonly VerifyKey[], parts: Pick<DaemonContext, 'store' | 'policies' | 'keys' | 'gate' | 'sink' | 'metrics'>, cluster: ClusterParts | undefined): DaemonContext {
  const ctx: DaemonContext = {
    options,
    ...parts,
    verifyKeys: [],
    jwksText: '',
    state: { draining: false, ready: false },
    cluster,
    // SIGHUP: the policy and the signing key are each re-read, validated and switched, or kept.
    reload: (trigger) => {
      parts.keys.reload(trigger);
      return parts.policies.reload(trigger);
    },
  };
  publishKeys(ctx, ring);
  return ctx;
}

/**
 * The published key set: the current key, every key this process signed with, and the key ring;
 * on PostgreSQL also every key registered by any replica.
 */
function publishKeys(ctx: DaemonContext, ring: readonly VerifyKey[]): void {
  const set = new Map<string, VerifyKey>();
  if (!ring.some((k) => k.keyId === ctx.keys.current.keyId)) set.set(ctx.keys.current.keyId, ctx.keys.current);
  for (const k of [...ring, ...ctx.keys.usedKeys, ...(ctx.cluster?.keys.keys ?? [])]) if (!set.has(k.keyId)) set.set(k.keyId, k);
  ctx.verifyKeys = [...set.values()];
  ctx.jwksText = JSON.stringify(buildJwks(ctx.verifyKeys), null, 2) + '\n';
}

/** Key and policy reloads: republish the key set, count and log each outcome. */
function watchReloads(ctx: DaemonContext, initialRing: readonly VerifyKey[], log: JsonLog): void {
  const stateDir = ctx.options.stateDir;
  let ring = initialRing;
  const cluster = ctx.cluster;
  if (cluster) {
    // The cluster's key set changed (a replica started or rotated): publish it.
    cluster.keys.onChange = () => publishKeys(ctx, ring);
    cluster.keys.start(
      () => ctx.keys.usedKeys,
      (err) => log.log({ level: 'error', msg: 'cluster key refresh', error: err.message }),
    );
  }
  ctx.keys.onReload((result, trigger) => {
    try {
      ring = loadKeyRing(stateDir); // `ward keys rotate` retires keys there
    } catch (err) {
      log.log({ level: 'error', msg: 'key ring reload', trigger, error: (err as Error).message });
    }
    publishKeys(ctx, ring);
    if (cluster && result.ok) {
      // Register the reloaded key before it signs (see registeredKey), then publish the cluster's set.
      void cluster.keys.register([...ctx.keys.usedKeys, ...ring]).then(
        () => cluster.keys.refresh(),
        (err: unknown) => log.log({ level: 'error', msg: 'key registration', error: (err as Error).message }),
      ).catch(() => undefined);
    }
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
  metrics.ready.track(() => (state.ready && !state.draining && !sink.storageFault ? 1 : 0));
  const telemetry = ctx.options.telemetry;
  if (telemetry) {
    trackTelemetryLoss(metrics.telemetryLost, () => telemetry.stats());
    // With --otel, the same series as /metrics also go out over OTLP (docs/observability.md).
    telemetry.exportMetrics(() => metrics.snapshot());
  }
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
