import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { storeLocationOf } from '../store-access.js';
import { defaultKeyPaths, loadVerifyKeys, readPrivateKeyFile, readPublicKeyFile, resolveSigningKey, type KeyMode } from '../../keys/index.js';
import type { TraceFormat } from '../../trace/index.js';
import { STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';
import { collect } from '../input.js';
import { goJsonLine } from '../output.js';
import { approvalTokenReuse } from './gate-tokens.js';
import { signingKeyOptionsFromFlags } from './keys.js';
import { JsonLog } from '../../daemon/log.js';
import { startHostTelemetry, stopHostTelemetry } from '../telemetry-flags.js';

interface ServeFlags {
  policyPublicKey: string[];
  policy: string;
  listen: string;
  stateDir?: string;
  authTokenEnv?: string;
  allowedHost?: string;
  keyMode: KeyMode;
  privateKey?: string;
  privateKeyEnv?: string;
  approvalPublicKey?: string;
  approvalPublicKeyEnv?: string;
  traceFormat: TraceFormat;
  profile: 'standard' | 'oss-prod';
  rateLimitState?: string;
  approvalTokenReuse?: string;
  approverKeys?: string;
  approvalArgs: 'redact' | 'show';
  maxBodyBytes: string;
  maxQueue: string;
  maxBatch: string;
  headersTimeoutMs: string;
  requestTimeoutMs: string;
  keepAliveTimeoutMs: string;
  shutdownTimeoutMs: string;
  ingestIntervalMs: string;
  watch: boolean;
  captureIntents?: boolean;
  traceDurability: boolean;
  store?: string;
  storePasswordFile?: string;
  storePool: string;
  storeAcquireTimeoutMs: string;
  storeStatementTimeoutMs: string;
  storeQueryTimeoutMs: string;
  storeCommitTimeoutMs: string;
  replica?: string;
  json?: boolean;
  otel?: boolean;
  otelTargets?: boolean;
  decisionLog?: string;
}

/** `ward serve`: the governance daemon (docs/daemon.md). */
/** How often `ward serve` says it is still starting. */
const STARTUP_PROGRESS_MS = 5_000;

export function register(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the governance daemon: decisions, traces and the pack store over HTTP (docs/daemon.md)')
    .requiredOption('--policy <file>', 'policy YAML; reloaded on change and on SIGHUP (a bad policy keeps the old one)')
    .option('--listen <addr>', 'host:port to listen on; non-loopback addresses require --auth-token-env', '127.0.0.1:7433')
    .option('--state-dir <dir>', `${STATE_DIR_HELP}; the daemon owns it`)
    .option('--auth-token-env <var>', 'environment variable holding the bearer token clients must send')
    .option('--allowed-host <names>', 'comma-separated extra Host header names accepted (loopback accepts localhost, 127.0.0.1, [::1])')
    .addOption(new Option('--key-mode <mode>', 'signing key: default (.ward/keys), dev (ephemeral) or prod (explicit key)').choices(['default', 'dev', 'prod']).default('default'))
    .option('--private-key <file>', 'trace signing key file (base64, JWK or PEM); re-read on SIGHUP (a bad key keeps the old one)')
    .option('--private-key-env <var>', 'environment variable holding the signing key')
    .option('--approval-public-key <file>', 'key that verifies approval and delegation tokens (default: the signing key)')
    .option('--approval-public-key-env <var>', 'the same, from an environment variable')
    .addOption(new Option('--trace-format <format>', 'trace field set').choices(['ward', 'gait']).default('ward'))
    .addOption(new Option('--profile <profile>', 'evaluation profile').choices(['standard', 'oss-prod']).default('standard'))
    .option('--rate-limit-state <file>', 'rate-limit counters (default <state>/gate_rate_limits.json)')
    .option('--approver-keys <file>', 'the approvers list: a JWKS of approvers\' Ed25519 public keys (optional "ward_approver" per key), re-read when it changes; they sign approvals in the console (docs/console.md)')
    .addOption(new Option('--approval-args <mode>', 'argument values in the approvals inbox: redact (default, only their digest) or show').choices(['redact', 'show']).default('redact'))
    .option('--approval-token-reuse <mode>', 'once (default): a token grants one decision, on any replica; ttl: reusable until it expires (docs/approvals.md)', 'once')
    .option('--max-body-bytes <n>', 'largest JSON request body', '1048576')
    .option('--max-queue <n>', 'decisions waiting for their trace write, at most; beyond it requests get 429', '4096')
    .option('--max-batch <n>', 'requests per /v1/gate/eval/batch call, at most', '256')
    .option('--headers-timeout-ms <ms>', 'time allowed to send the request headers (slow clients are cut off)', '10000')
    .option('--request-timeout-ms <ms>', 'time allowed to send the whole request', '30000')
    .option('--keep-alive-timeout-ms <ms>', 'idle keep-alive connections are closed after this', '5000')
    .option('--shutdown-timeout-ms <ms>', 'on SIGTERM, wait at most this long for in-flight requests', '10000')
    .option('--ingest-interval-ms <ms>', 'ingest the spool and <state>/traces this often (0: only at start)', '5000')
    .option('--capture-intents', 'store each decision\'s normalized intent and envelope beside its trace (for replay; off for privacy)')
    .option('--no-watch', 'do not reload the policy when its file changes (SIGHUP still reloads)')
    .option('--no-trace-durability', 'UNSAFE, benchmarks only: sign traces but do not store them')
    .option('--store <url>', 'a PostgreSQL store shared by replicas (postgres://user@host/db; also WARD_STORE_URL; no password here)')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .option('--store-pool <n>', 'PostgreSQL connections of this replica', '10')
    .option('--store-acquire-timeout-ms <ms>', 'wait at most this long for a free connection, then answer 503 with Retry-After', '2000')
    .option('--store-statement-timeout-ms <ms>', 'server-side limit per PostgreSQL statement', '10000')
    .option('--store-query-timeout-ms <ms>', 'client-side limit per PostgreSQL statement: a frozen or partitioned server gets no longer (then 503 with Retry-After)', '4000')
    .option('--store-commit-timeout-ms <ms>', 'a decision whose trace commit is not confirmed within this long is answered 503 (outcome unknown: the trace may still be committed)', '3000')
    .option('--replica <name>', 'this replica\'s name in the cluster (default host:pid)')
    .option('--policy-public-key <file>', 'public key trusted to sign policies published to the cluster (repeatable; default WARD_POLICY_PUBLIC_KEY, else this replica\'s signing key)', collect, [])
    .option('--json', 'print the start-up line as JSON')
    .option('--otel', 'export a span per decision over OTLP (also WARD_OTEL=1; endpoint and the rest from the standard OTEL_* variables; docs/observability.md)')
    .option('--decision-log <file>', 'append each decision as a JSON line to this file, - for stdout (also WARD_DECISION_LOG; docs/observability.md)')
    .option('--otel-targets', 'put canonical targets (paths, hosts, record ids: values) in spans and logs as ward.targets; off by default (also WARD_OTEL_TARGETS=1; docs/observability.md "Targets")')
    .action(async (flags: ServeFlags) => {
      await serve(ctx, flags);
    });
}

async function serve(ctx: CliContext, flags: ServeFlags): Promise<void> {
  const { startDaemon } = await import('../../daemon/index.js');
  const { host, port } = parseListen(flags.listen);
  const state = stateDir(ctx, flags.stateDir);
  let authToken: string | undefined;
  if (flags.authTokenEnv) {
    authToken = (ctx.env[flags.authTokenEnv] ?? '').trim();
    if (authToken.length < 16) {
      throw new WardError(ERROR_CODES.USAGE, `--auth-token-env ${flags.authTokenEnv}: the variable must hold a token of at least 16 characters`, {
        hint: `e.g. export ${flags.authTokenEnv}=$(openssl rand -hex 32)`,
      });
    }
  }
  const keyOptions = signingKeyOptionsFromFlags(ctx, flags, state);
  const key = resolveSigningKey(keyOptions);
  // On SIGHUP the same source is read again: the key file (or the variable), or the default key,
  // which is not created again if it went missing. An ephemeral dev key has nothing to re-read.
  const signingKeySource =
    key.source === 'ephemeral'
      ? undefined
      : key.source === 'default'
        ? () => readPrivateKeyFile(defaultKeyPaths(state).privateKey)
        : () => resolveSigningKey(keyOptions).key;
  // Without an approval key, tokens are verified with the current signing key (it follows reloads).
  const tokenKeys =
    flags.approvalPublicKey || flags.approvalPublicKeyEnv
      ? loadVerifyKeys({ publicKeyPath: flags.approvalPublicKey, publicKeyEnv: flags.approvalPublicKeyEnv }, ctx.env, ctx.cwd)
      : undefined;
  const durable = flags.traceDurability !== false;
  const location = storeLocationOf(ctx, flags);
  const postgres =
    location.kind === 'postgres'
      ? {
          config: location.config,
          poolSize: count(flags.storePool, '--store-pool'),
          acquireTimeoutMs: count(flags.storeAcquireTimeoutMs, '--store-acquire-timeout-ms'),
          statementTimeoutMs: count(flags.storeStatementTimeoutMs, '--store-statement-timeout-ms'),
          queryTimeoutMs: count(flags.storeQueryTimeoutMs, '--store-query-timeout-ms'),
          commitTimeoutMs: count(flags.storeCommitTimeoutMs, '--store-commit-timeout-ms'),
          ...(flags.replica ? { replica: flags.replica } : {}),
          ...(flags.policyPublicKey.length ? { policyPublicKeys: flags.policyPublicKey.map((f) => readPublicKeyFile(resolve(ctx.cwd, f))) } : {}),
        }
      : undefined;
  // Start-up can take long (journal recovery, store indexing, a busy machine): say so at once, in
  // the daemon's JSON log on stderr (stdout keeps its one line for scripts), and every few seconds
  // until listening.
  const began = Date.now();
  const startupLog = new JsonLog((text) => ctx.stderr(text));
  startupLog.log({ level: 'info', msg: 'starting', policy: flags.policy, state_dir: state, store: postgres ? 'postgres' : 'local' });
  startupLog.flush();
  const progress = setInterval(() => {
    startupLog.log({ level: 'info', msg: 'still starting', elapsed_ms: Date.now() - began });
    startupLog.flush();
  }, STARTUP_PROGRESS_MS);
  progress.unref();
  const telemetry = await startHostTelemetry(ctx, flags, 'serve');
  const daemon = await startDaemon({
    stateDir: state,
    policyPath: resolve(ctx.cwd, flags.policy),
    host,
    port,
    authToken,
    allowedHosts: (flags.allowedHost ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    signingKey: key.key,
    signingKeySource,
    ...(tokenKeys ? { tokenVerifyKeys: tokenKeys } : {}),
    ...(flags.approverKeys ? { approverKeysPath: resolve(ctx.cwd, flags.approverKeys) } : {}),
    approvalArgs: flags.approvalArgs,
    keyWarnings: key.warnings,
    traceFormat: flags.traceFormat,
    profile: flags.profile,
    ...(flags.rateLimitState ? { rateLimitStatePath: resolve(ctx.cwd, flags.rateLimitState) } : {}),
    approvalTokenReuse: approvalTokenReuse(flags.approvalTokenReuse),
    maxBodyBytes: count(flags.maxBodyBytes, '--max-body-bytes'),
    maxBatchItems: count(flags.maxBatch, '--max-batch'),
    queueCapacity: count(flags.maxQueue, '--max-queue'),
    headersTimeoutMs: count(flags.headersTimeoutMs, '--headers-timeout-ms'),
    requestTimeoutMs: count(flags.requestTimeoutMs, '--request-timeout-ms'),
    keepAliveTimeoutMs: count(flags.keepAliveTimeoutMs, '--keep-alive-timeout-ms'),
    shutdownTimeoutMs: count(flags.shutdownTimeoutMs, '--shutdown-timeout-ms'),
    ingestIntervalMs: count(flags.ingestIntervalMs, '--ingest-interval-ms', 0),
    watchPolicy: flags.watch !== false,
    captureIntents: flags.captureIntents === true,
    traceDurability: durable,
    logWrite: (text) => ctx.stderr(text),
    storeThread: true,
    postgres,
    telemetry,
  }).finally(() => clearInterval(progress));
  const cluster = daemon.context.cluster;
  const digest = daemon.context.policies.current.digest;
  const warnings = [...key.warnings, ...(durable ? [] : ['UNSAFE: --no-trace-durability: traces are signed and discarded; benchmarks only'])];
  if (flags.json) {
    ctx.stdout(
      goJsonLine({
        ok: true,
        url: daemon.url,
        pid: process.pid,
        state_dir: state,
        ...(cluster ? { store: cluster.db.display, replica: cluster.replica, key_id: daemon.context.keys.current.keyId } : {}),
        policy_digest: digest,
        trace_durability: durable,
        auth: Boolean(authToken),
        warnings,
      }) + '\n',
    );
  } else {
    ctx.stdout(`ward serve: listening on ${daemon.url} (policy ${digest.slice(0, 12)}, state ${state}${cluster ? `, store ${cluster.db.display}, replica ${cluster.replica}` : ''})\n`);
    for (const w of warnings) ctx.stdout(`warning: ${w}\n`);
  }

  await new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      process.off('SIGHUP', hup);
      void daemon.close().then(() => stopHostTelemetry(telemetry)).then(done, (err: unknown) => {
        ctx.stderr(`error: shutdown: ${(err as Error).message}\n`);
        done();
      });
    };
    const hup = () => void daemon.reload('sighup');
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    process.on('SIGHUP', hup);
  });
  ctx.exitCode = EXIT.OK;
}

/** `host:port`, `[v6]:port`, `:port` (loopback) or a bare port. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim()) ?? /^()()(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new WardError(ERROR_CODES.USAGE, `invalid --listen ${JSON.stringify(text)}`, { hint: 'use host:port, e.g. 127.0.0.1:7433 (port 0 picks a free port)' });
  }
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

function count(text: string, flag: string, min = 1): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) throw new WardError(ERROR_CODES.USAGE, `${flag} must be an integer ≥ ${min}`);
  return Number(text);
}
