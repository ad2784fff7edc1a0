import type { SigningKey, VerifyKey } from '../keys/index.js';
import type { PgConnectionConfig, PgPool } from '../pg/index.js';
import type { EvidenceStore } from '../store/types.js';
import type { TraceFormat } from '../trace/index.js';
import type { ClusterKeySet } from './cluster-keys.js';
import type { GateService } from './gate-service.js';
import type { DecisionTelemetry } from '../telemetry/telemetry.js';
import type { SigningKeyHolder } from './key-holder.js';
import type { DaemonMetrics } from './metrics.js';
import type { StoreHealth } from './pg-health.js';
import type { PolicyHolder, ReloadTrigger } from './policy-holder.js';
import type { DaemonTraceSink } from './trace-sink.js';

// What `startDaemon` is given and what every route is handed: types only, so the routes and the
// server both depend on this file and not on each other.

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
  /**
   * `--approver-keys FILE`: the approvers list (a JWKS; docs/console.md). Their keys verify
   * approvals signed in the console and, like `tokenVerifyKeys`, approval tokens on every decision.
   */
  approverKeysPath?: string | undefined;
  /** `--approval-args show`: argument values appear in the approvals inbox (default: only their digest). */
  approvalArgs?: 'redact' | 'show' | undefined;
  keyWarnings?: readonly string[];
  traceFormat?: TraceFormat;
  profile?: 'standard' | 'oss-prod';
  rateLimitStatePath?: string;
  /** `once` (default) or `ttl`: see GateServiceOptions.approvalTokenReuse. */
  approvalTokenReuse?: 'once' | 'ttl';
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
  /** OpenTelemetry spans and the decision log (`--otel`, `--decision-log`; docs/observability.md); undefined: off. */
  telemetry?: DecisionTelemetry | undefined;
  /** Where JSON log lines go (default stderr). */
  logWrite?: (text: string) => void;
  /** Own the store on a worker thread, so indexing never stalls requests (`ward serve` does). */
  storeThread?: boolean;
  /** Test hook: delay each group commit. */
  commitDelayMs?: number;
  /** While the disk is full or failing: probe (preallocate a segment, retry ingestion) this often (ms, default 500). */
  storageRetryMs?: number;
  /**
   * A PostgreSQL store shared by replicas (`--store postgres://…`); absent: the local LevelDB store.
   * Traces then go straight into PostgreSQL (no journal) and tokens, limits, keys and the control
   * plane are shared through it (docs/daemon.md "On PostgreSQL (cluster)").
   */
  postgres?: PostgresOptions | undefined;
}

export interface PostgresOptions {
  config: PgConnectionConfig;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** How long a statement waits for a free connection before ERR_STORE_BUSY (default 2,000 ms). */
  acquireTimeoutMs?: number;
  /** Server-side limit per statement (default 10,000 ms). */
  statementTimeoutMs?: number;
  /** Client-side limit per statement (default: the statement timeout + 1,000 ms; `--store-query-timeout-ms`). */
  queryTimeoutMs?: number;
  /** A decision whose trace commit is not confirmed within this long gets 503 (default 3,000 ms; `--store-commit-timeout-ms`). */
  commitTimeoutMs?: number;
  /** A decision on PostgreSQL not answered within this long (shared tokens, limits, commit) gets 503 (default 4,500 ms). */
  decisionTimeoutMs?: number;
  /** This replica's name in `ward_signing_keys` and `pg_stat_activity` (default host:pid). */
  replica?: string;
  /** How often the cluster's key set is re-read (default 10,000 ms). */
  keyRefreshMs?: number;
  /** Keys trusted to sign policy publications (`--policy-public-key`; default `WARD_POLICY_PUBLIC_KEY`, else this replica's signing key). */
  policyPublicKeys?: readonly VerifyKey[];
}

/** What a replica on PostgreSQL holds beyond a single daemon. */
export interface ClusterParts {
  db: PgPool;
  replica: string;
  keys: ClusterKeySet;
  health: StoreHealth;
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
  /** Set on a replica on PostgreSQL. */
  cluster?: ClusterParts | undefined;
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
