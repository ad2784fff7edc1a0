import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { parseGoDuration, parseJsonText, type JsonObject } from '../../canon/index.js';
import { parseContextEnvelope } from '../../context/index.js';
import { EXIT, type ExitCode } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError, isWardError } from '../../errors.js';
import { checkProfileKeyFlags, loadVerifyKeys } from '../../keys/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import { checkProfile } from '../../policy/profile.js';
import { FileTraceSink } from '../../decision/trace-sink.js';
import { pathFlag, STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';
import { openCheckedPool, storeLocationOf } from '../store-access.js';
import { readInputText } from '../input.js';
import { signingKeyFromFlags } from './keys.js';
import { startHostTelemetry, stopHostTelemetry } from '../telemetry-flags.js';
import type { McpCallFlags } from './mcp-call.js';
import { DEFAULT_REQUEST_LIMITS } from '../../mcp/proxy/limits.js';

/** The one-shot mode's flags (`--call`, mcp-decision-service.md §6.4) and the proxy's own. */
interface ProxyFlags extends McpCallFlags {
  otel?: boolean;
  decisionLog?: string;
  policy?: string;
  contextEnvelope?: string;
  stateDir?: string;
  upstreamUrl?: string;
  upstreamHeader: string[];
  listen?: string;
  listenPath: string;
  authTokenEnv?: string;
  sessionIdleTimeout: string;
  maxSessions: string;
  toolPrefix: string;
  targetsMap?: string;
  argSource: string;
  identity?: string;
  workspace?: string;
  riskClass: string;
  denyAs: 'result' | 'error';
  approvalDir?: string;
  approvalPublicKey?: string;
  approvalPublicKeyEnv?: string;
  approval: 'token' | 'elicit' | 'inbox';
  approvalJwks?: string;
  approvalInbox?: string;
  approvalInboxTokenEnv?: string;
  callTimeout: string;
  pinTools?: boolean;
  store?: string;
  storePasswordFile?: string;
  hideBlockedTools?: boolean;
  unknownMethods: 'refuse' | 'decide';
  unknownMethodRiskClass: string;
  maxCallBytes: string;
  maxCallKeys: string;
  captureIntents?: boolean;
  runCapture: boolean;
  witness: boolean;
  maxMessageBytes: string;
  logFile?: string;
  verbose?: boolean;
  traceSink: 'journal' | 'file';
  traceSync: 'write' | 'fsync';
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `ward mcp proxy`: the MCP protocol proxy (mcp.md), and the reference one-shot `--call` mode. */
export function registerProxy(mcp: Command, ctx: CliContext): void {
  mcp
    .command('proxy')
    .description('put Ward in front of an MCP server: every tools/call is decided, traced, and only allowed calls reach the server')
    .usage('--policy <file> [options] -- <server command> [args...]')
    .argument('[command...]', 'the MCP server to start (after --); or, reference style, <policy> <call>')
    .option('--policy <file>', 'policy YAML; reloaded when it changes (a bad edit keeps the old policy)')
    .option('--context-envelope <file>', 'context envelope verified at startup and bound to every call')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--upstream-url <url>', 'proxy to a Streamable HTTP MCP server instead of starting one')
    .option('--upstream-header <name:value>', 'HTTP header for the upstream server (repeatable)', collect, [])
    .option('--listen <host:port>', 'serve Streamable HTTP to clients instead of stdio (non-loopback needs --auth-token-env)')
    .option('--listen-path <path>', 'MCP endpoint path with --listen', '/mcp')
    .option('--auth-token-env <var>', 'environment variable holding the bearer token clients must send (--listen)')
    .option('--session-idle-timeout <duration>', 'with --listen: end a session (and stop its server) after this long without a message either way and nothing in flight (0: never)', '30m')
    .option('--max-sessions <n>', 'with --listen: sessions open at once; a new initialize past it gets HTTP 503 (JSON-RPC -32063)', '32')
    .option('--tool-prefix <prefix>', 'prefix for intent tool names (e.g. fs. gives fs.read_file)', '')
    .option('--targets-map <file>', 'JSON file mapping argument names to targets (extends the defaults)')
    .option('--arg-source <source>', 'provenance of the model\'s arguments: user, tool_output, external, system', 'tool_output')
    .option('--identity <id>', 'intent identity (default mcp-client:<clientInfo.name>)')
    .option('--workspace <path>', 'intent workspace, made absolute: the directory the server resolves relative paths against (without it, a relative path is not evaluable)')
    .option('--risk-class <class>', 'intent risk class', 'high')
    .addOption(new Option('--deny-as <form>', 'denied calls: an isError tool result, or JSON-RPC error -32060').choices(['result', 'error']).default('result'))
    .option('--approval-dir <dir>', 'approval tokens for require_approval calls (default <state>/approvals)')
    .option('--approval-public-key <file>', 'approval verify key (default: the signing key)')
    .option('--approval-public-key-env <var>', 'approval verify key from the environment')
    .option('--approval-jwks <file>', 'approval verify keys: a JWKS, e.g. the approvers list of ward serve --approver-keys')
    .addOption(
      new Option(
        '--approval <mode>',
        'token: approvals only from --approval-dir; elicit: also ask the user inline (MCP elicitation) when the client supports it; inbox: also report the call to a ward serve approvals inbox and hold it until a person answers there',
      )
        .choices(['token', 'elicit', 'inbox'])
        .default('token'),
    )
    .option('--approval-inbox <url>', 'with --approval inbox: the ward serve daemon (e.g. http://127.0.0.1:8787)')
    .option('--approval-inbox-token-env <var>', 'environment variable holding the daemon\'s bearer token (loopback daemons without a token need none)')
    .option('--call-timeout <duration>', 'Go duration a forwarded request may take before the client gets an error (0: none)', '0')
    .option('--pin-tools', 'pin tool definitions on first tools/list; block tools whose definition changes')
    .option('--store <url>', 'keep --pin-tools pins in the cluster\'s PostgreSQL (postgres://…; also WARD_STORE_URL): an accept on any host applies to every proxy')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .addOption(
      new Option('--unknown-methods <mode>', 'MCP methods Ward does not know: refuse (never forwarded; traced) or decide (by policy as tool mcp.method, the method as target)')
        .choices(['refuse', 'decide'])
        .default('refuse'),
    )
    .option('--unknown-method-risk-class <class>', 'with --unknown-methods decide: the risk class of their intents (a fail_closed class blocks them unless a rule allows)', 'critical')
    .option('--max-call-bytes <n>', 'largest client request accepted, in bytes (over it: JSON-RPC error -32064, not forwarded)', String(DEFAULT_REQUEST_LIMITS.maxBytes))
    .option('--max-call-keys <n>', 'most object members and array elements in one request\'s params (over it: -32064, not forwarded)', String(DEFAULT_REQUEST_LIMITS.maxKeys))
    .option('--hide-blocked-tools', 'drop tools from tools/list that the policy blocks whatever the arguments')
    .option('--capture-intents', 'keep each normalized intent beside its trace (for ward regress replay); may hold sensitive arguments')
    .option('--no-run-capture', 'do not capture sessions as runs in the store')
    .option('--otel', 'export a span per decided tools/call over OTLP and pass its context to the server in _meta.traceparent (also WARD_OTEL=1; docs/observability.md)')
    .option('--decision-log <file>', 'append each decision as a JSON line to this file (also WARD_DECISION_LOG; docs/observability.md)')
    .option('--no-witness', 'do not witness sessions: arguments that carry values of earlier tool results keep the --arg-source provenance (docs/witness.md)')
    .addOption(
      new Option('--trace-sink <kind>', 'journal: traces durably queued in a journal (group-committed fdatasync), then written as files; file: one fsynced file per trace')
        .choices(['journal', 'file'])
        .default('journal'),
    )
    .addOption(
      new Option('--trace-sync <when>', 'journal: answer once the trace is written to the OS (survives a crash of Ward; fdatasync follows in the background) or once it is fdatasynced (survives a power loss)')
        .choices(['write', 'fsync'])
        .default('write'),
    )
    .option('--max-message-bytes <n>', 'largest JSON-RPC message accepted on stdio', String(64 * 1024 * 1024))
    .option('--log-file <file>', 'also write diagnostics here as JSON lines (stdout carries protocol only)')
    .option('--verbose', 'more diagnostics on stderr')
    // The reference one-shot mode (implemented in src/mcp/service).
    .option('--call <file|->', 'one-shot: decide one tool-call payload and print the decision (reference mode)')
    .option('--adapter <name>', 'one-shot payload format: mcp, openai, anthropic, claude_code, langchain, contextos')
    .addOption(new Option('--profile <profile>', 'evaluation profile').choices(['standard', 'oss-prod']))
    .option('--job-root <dir>', 'one-shot: job state root')
    .option('--kill-switch-state <file>', 'kill-switch state JSON (reloaded when it changes)')
    .option('--trace-out <file>', 'one-shot: write the signed trace here')
    .option('--run-id <id>', 'one-shot: run id')
    .option('--runpack-out <file>', 'one-shot: also write a runpack')
    .option('--pack-out <file>', 'one-shot: also write a pack')
    .option('--export-log-out <file>', 'one-shot: append a JSONL decision log')
    .option('--export-otel-out <file>', 'one-shot: append an OpenTelemetry-style JSONL record')
    .addOption(new Option('--key-mode <mode>', 'signing key: default (.ward/keys), dev (ephemeral) or prod (explicit key)').choices(['default', 'dev', 'prod']))
    .option('--private-key <file>', 'trace signing key file')
    .option('--private-key-env <var>', 'environment variable holding the signing key')
    .option('--json', 'one-shot: one line of JSON')
    .action(async (command: string[], flags: ProxyFlags) => {
      const explicitServer = ctx.argv.includes('--');
      if (!explicitServer && !flags.upstreamUrl) {
        // Reference positional form: `ward mcp proxy <policy> <call>`.
        const rest = [...command];
        if (!flags.policy && rest.length && /\.ya?ml$/i.test(rest[0]!)) flags.policy = rest.shift();
        if (!flags.call && rest.length === 1) flags.call = rest.shift();
      }
      if (flags.call) {
        const { runMcpCall } = await import('./mcp-call.js');
        return runMcpCall(ctx, flags);
      }
      await runProxy(ctx, flags, command);
    });
}

async function runProxy(ctx: CliContext, flags: ProxyFlags, command: string[]): Promise<void> {
  const usage = (message: string) =>
    new WardError(ERROR_CODES.USAGE, message, {
      hint: 'ward mcp proxy --policy policy.yaml -- <server command> [args...]   (or --upstream-url URL)',
    });
  if (!flags.policy) throw usage('--policy is required');
  if (flags.upstreamUrl && command.length) throw usage('give either --upstream-url or a server command after --, not both');
  if (!flags.upstreamUrl && command.length === 0) throw usage('no MCP server: give its command after -- or --upstream-url');
  const profile = flags.profile ?? 'standard';
  checkProfileKeyFlags(profile, flags, 'gate');
  const maxMessageBytes = Number(flags.maxMessageBytes);
  if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1024) throw usage('--max-message-bytes must be an integer >= 1024');
  // Start-up order (docs/mcp-proxy.md): over stdio the server is spawned first, so its own start-up
  // overlaps Ward's loading. It is sent nothing and the client is not read until the runtime is
  // built; if loading fails, the server is stopped before the error is reported.
  let early: import('../../mcp/proxy/peer.js').ChildServerPeer | undefined;
  if (!flags.upstreamUrl && !flags.listen) {
    const { ChildServerPeer } = await import('../../mcp/proxy/peer.js');
    early = new ChildServerPeer({ command: command[0]!, args: command.slice(1), cwd: ctx.cwd, env: ctx.env, maxMessageBytes });
    // A spawn error (ENOENT) is reported by runStdio, as before, once the rest has loaded.
    early.spawn().catch(() => undefined);
  }
  // A client that gives up while Ward loads (SIGINT/SIGTERM) must not leave the server behind:
  // it was sent nothing, so it is stopped at once, and the signal then ends the proxy as before.
  const spawned = early;
  const onLoadSignal = (signal: NodeJS.Signals) => {
    releaseLoadSignals();
    spawned?.child?.kill('SIGTERM');
    process.kill(process.pid, signal);
  };
  const releaseLoadSignals = () => {
    process.off('SIGINT', onLoadSignal);
    process.off('SIGTERM', onLoadSignal);
  };
  if (spawned) {
    process.once('SIGINT', onLoadSignal);
    process.once('SIGTERM', onLoadSignal);
  }
  try {
    await loadAndRun(ctx, flags, command, usage, profile, maxMessageBytes, early, releaseLoadSignals);
  } catch (err) {
    releaseLoadSignals();
    await early?.close();
    throw err;
  }
}

/** Everything `ward mcp proxy` loads (policy, key, journal, runtime), then the transport. */
async function loadAndRun(
  ctx: CliContext,
  flags: ProxyFlags,
  command: string[],
  usage: (message: string) => WardError,
  profile: 'standard' | 'oss-prod',
  maxMessageBytes: number,
  early: import('../../mcp/proxy/peer.js').ChildServerPeer | undefined,
  loaded: () => void,
): Promise<void> {
  const { ProxyRuntime, runStdio, runListen, isLoopback, ProxyLog, loadTargetsMap, DEFAULT_TARGET_MAPPING } = await import('../../mcp/proxy/index.js');
  const { checkArgSource, UNKNOWN_WORKSPACE } = await import('../../mcp/proxy/intent.js');
  const { JournalTraceSink } = await import('../../mcp/proxy/journal-sink.js');

  const state = stateDir(ctx, flags.stateDir);
  const policyPath = pathFlag(ctx, flags.policy!, '--policy');
  const policy = loadPolicyFile(policyPath);
  checkProfile(policy.policy, profile);
  const envelope = flags.contextEnvelope ? await loadEnvelope(ctx, flags.contextEnvelope) : undefined;
  const key = signingKeyFromFlags(ctx, flags, state);
  const approvalKeySet = Boolean(flags.approvalPublicKey || flags.approvalPublicKeyEnv || flags.approvalJwks);
  if (flags.approval === 'elicit' && approvalKeySet) {
    throw usage('--approval elicit records inline approvals signed with the proxy\'s signing key, which --approval-public-key would not accept; drop one of them');
  }
  const inbox = inboxConfig(ctx, flags, approvalKeySet, usage);
  const approvalKeys = approvalKeySet
    ? loadVerifyKeys({ publicKeyPath: flags.approvalPublicKey, publicKeyEnv: flags.approvalPublicKeyEnv, jwksPath: flags.approvalJwks }, ctx.env, ctx.cwd)
    : [key.key];
  const callTimeoutMs = durationMs(flags.callTimeout, '--call-timeout');

  let listen: { host: string; port: number; path: string; authToken?: string; maxRequestBytes: number; idleTimeoutMs: number; maxSessions: number } | undefined;
  if (flags.listen) {
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(flags.listen);
    if (!m) throw usage('--listen must be host:port (e.g. 127.0.0.1:8788)');
    const host = m[1]!.replace(/^\[|\]$/g, '');
    const maxSessions = Number(flags.maxSessions);
    if (!/^\d+$/.test(flags.maxSessions.trim()) || !Number.isSafeInteger(maxSessions) || maxSessions < 1) throw usage(`--max-sessions ${flags.maxSessions}: expected an integer >= 1`);
    listen = {
      host,
      port: Number(m[2]),
      path: flags.listenPath,
      maxRequestBytes: Math.min(maxMessageBytes, 16 * 1024 * 1024),
      idleTimeoutMs: durationMs(flags.sessionIdleTimeout, '--session-idle-timeout'),
      maxSessions,
    };
    if (flags.authTokenEnv) {
      const token = ctx.env[flags.authTokenEnv];
      if (!token) throw usage(`--auth-token-env ${flags.authTokenEnv}: the variable is empty or unset`);
      listen.authToken = token;
    } else if (!isLoopback(host)) {
      throw usage(`--listen ${flags.listen} is not loopback: clients must authenticate; set --auth-token-env VAR`);
    }
  }
  const upstreamHeaders: Record<string, string> = {};
  for (const h of flags.upstreamHeader) {
    const i = h.indexOf(':');
    if (i <= 0) throw usage(`--upstream-header ${h}: expected name:value`);
    upstreamHeaders[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }

  const log = new ProxyLog(ctx.stderr, flags.logFile ? pathFlag(ctx, flags.logFile, '--log-file') : undefined, Boolean(flags.verbose));
  for (const w of key.warnings) log.warn(w);
  const pinStore = flags.pinTools ? await clusterPinStore(ctx, flags, log) : undefined;
  const traceDir = resolve(state, 'traces');
  // stdout is the MCP channel on the stdio transport: no decision log there.
  const telemetry = await startHostTelemetry(ctx, flags, 'mcp-proxy', Boolean(listen));
  const rt = new ProxyRuntime({
    cwd: ctx.cwd,
    env: ctx.env,
    stateDir: state,
    policyPath,
    runtime: {
      policy,
      signingKey: key.key,
      traceFormat: 'ward',
      // A server the proxy starts uses this file system; one behind --upstream-url may not.
      pathResolution: flags.upstreamUrl ? 'lexical' : 'filesystem',
      traceDir,
      rateLimitStatePath: resolve(state, 'gate_rate_limits.json'),
      profile,
      captureIntents: Boolean(flags.captureIntents),
    },
    sink: flags.traceSink === 'file' ? new FileTraceSink(traceDir) : new JournalTraceSink(traceDir, resolve(state, 'mcp-journal'), flags.traceSync),
    signingKey: key.key,
    envelope,
    mapping: {
      toolPrefix: flags.toolPrefix,
      targets: flags.targetsMap ? loadTargetsMap(pathFlag(ctx, flags.targetsMap, '--targets-map')) : DEFAULT_TARGET_MAPPING,
      argSource: checkArgSource(flags.argSource),
      ...(flags.identity ? { identity: flags.identity } : {}),
      // Absolute: the core joins relative path targets to it (a relative --workspace is taken from the cwd).
      // No --workspace: the directory the server resolves relative paths against is unknown (its
      // allowed directories, its own cwd): relative path targets are then not evaluable.
      workspace: flags.workspace === undefined ? UNKNOWN_WORKSPACE : pathFlag(ctx, flags.workspace, '--workspace'),
      riskClass: flags.riskClass,
    },
    approvalDir: flags.approvalDir ? pathFlag(ctx, flags.approvalDir, '--approval-dir') : resolve(state, 'approvals'),
    approvalMode: flags.approval,
    inbox,
    approvalKeys,
    killSwitchPath: flags.killSwitchState ? pathFlag(ctx, flags.killSwitchState, '--kill-switch-state') : undefined,
    denyAs: flags.denyAs,
    callTimeoutMs,
    pinTools: Boolean(flags.pinTools),
    pinStore,
    hideBlockedTools: Boolean(flags.hideBlockedTools),
    maxMessageBytes,
    captureRuns: flags.runCapture,
    witness: flags.witness,
    unknownMethods: { mode: flags.unknownMethods, riskClass: flags.unknownMethodRiskClass },
    limits: { maxBytes: positiveInt(flags.maxCallBytes, '--max-call-bytes', usage), maxKeys: positiveInt(flags.maxCallKeys, '--max-call-keys', usage) },
    upstream: flags.upstreamUrl ? { url: flags.upstreamUrl, headers: upstreamHeaders } : { command: command[0]!, args: command.slice(1) },
    log,
    telemetry,
  });
  log.debug('policy loaded', { policy_digest: policy.digest });

  if (listen) {
    const { stop } = await runListen(rt, listen);
    await new Promise<void>((done) => {
      const onSignal = () => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        void stop().then(done);
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    });
    await log.close();
    ctx.exitCode = EXIT.OK;
    await stopHostTelemetry(telemetry);
    return;
  }
  // SIGINT/SIGTERM end the session in order: the server is stopped, traces are flushed, the run spooled.
  const stopping = new AbortController();
  const onSignal = () => stopping.abort();
  loaded();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const code = await runStdio(rt, process.stdin, process.stdout, stopping.signal, early);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await log.close();
  process.stdin.destroy();
  ctx.exitCode = code as ExitCode;
  await stopHostTelemetry(telemetry);
}

/** `--store` (or WARD_STORE_URL): pins in the cluster's PostgreSQL; otherwise undefined (files in the state directory). */
async function clusterPinStore(ctx: CliContext, flags: ProxyFlags, log: { warn(message: string, fields?: Record<string, unknown>): void }) {
  const location = storeLocationOf(ctx, flags);
  if (location.kind !== 'postgres') return undefined;
  const db = await openCheckedPool(location.config, 'ward-mcp-proxy');
  const { openClusterPinStore } = await import('../../mcp/proxy/pins-store.js');
  return openClusterPinStore(db, (err) => log.warn('tool pins in the cluster store', { error: err.message }));
}

/**
 * `--approval inbox`: where calls are reported, and with which token. The token comes from the
 * environment only (never argv, where `ps` shows it); a daemon that is not on loopback must be
 * reached with one, and approvals must verify with the approvers' keys, not the proxy's own.
 */
function inboxConfig(ctx: CliContext, flags: ProxyFlags, approvalKeySet: boolean, usage: (m: string) => WardError) {
  if (flags.approval !== 'inbox') {
    if (flags.approvalInbox || flags.approvalInboxTokenEnv) throw usage('--approval-inbox needs --approval inbox');
    return undefined;
  }
  if (!flags.approvalInbox) throw usage('--approval inbox needs --approval-inbox <url> (the ward serve daemon)');
  let url: URL;
  try {
    url = new URL(flags.approvalInbox);
  } catch {
    throw usage(`--approval-inbox: not a URL (e.g. http://127.0.0.1:8787)`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw usage('--approval-inbox must be an http(s) URL without credentials or query (the token comes from --approval-inbox-token-env)');
  }
  let token: string | undefined;
  if (flags.approvalInboxTokenEnv) {
    token = ctx.env[flags.approvalInboxTokenEnv];
    if (!token) throw usage(`--approval-inbox-token-env ${flags.approvalInboxTokenEnv}: the variable is empty or unset`);
  } else if (!isLoopbackHost(url.hostname)) {
    throw usage(`--approval-inbox ${url.host} is not loopback: the daemon needs a bearer token; set --approval-inbox-token-env VAR`);
  }
  if (!approvalKeySet) {
    throw usage('--approval inbox: approvals are signed by the approvers, not by this proxy; give their keys with --approval-jwks <approvers list> (or --approval-public-key)');
  }
  return { url: url.toString(), ...(token ? { token } : {}) };
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function positiveInt(text: string, flag: string, usage: (m: string) => WardError): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) throw usage(`${flag} ${text}: expected an integer >= 1`);
  return n;
}

function durationMs(text: string, flag: string): number {
  if (/^\d+$/.test(text.trim())) {
    if (text.trim() === '0') return 0;
    throw new WardError(ERROR_CODES.USAGE, `${flag} ${text}: give a unit, e.g. 30s or 500ms`);
  }
  try {
    const ns = parseGoDuration(text.trim());
    if (ns < 0n) throw new Error('negative');
    return Number(ns / 1_000_000n);
  } catch {
    throw new WardError(ERROR_CODES.USAGE, `${flag} ${text}: not a duration (e.g. 30s, 2m, 500ms)`);
  }
}

/** Verified once at startup; a bad envelope stops the proxy before any call is accepted. */
async function loadEnvelope(ctx: CliContext, path: string) {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new WardError(ERROR_CODES.USAGE, 'context envelope path must be a local filesystem path');
  }
  try {
    const text = await readInputText(ctx, path, 'context envelope');
    return { envelope: parseContextEnvelope(text), json: parseJsonText(text) as JsonObject };
  } catch (err) {
    if (isWardError(err)) throw err;
    throw new WardError(ERROR_CODES.ENVELOPE_INVALID, `context envelope ${path}: ${(err as Error).message}`, {
      hint: 'fix or regenerate the envelope; the proxy does not start without a valid one',
    });
  }
}
