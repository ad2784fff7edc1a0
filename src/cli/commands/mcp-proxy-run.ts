import { resolve } from 'node:path';
import { parseGoDuration } from '../../canon/index.js';
import { EXIT, type ExitCode } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { loadVerifyKeys } from '../../keys/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import { checkProfile } from '../../policy/profile.js';
import { loadEnvelope } from '../../decision/inputs.js';
import { FileTraceSink } from '../../decision/trace-sink.js';
import { ProxyRuntime, runStdio, runListen, isLoopback, ProxyLog, loadTargetsMap, DEFAULT_TARGET_MAPPING } from '../../mcp/proxy/index.js';
import { checkArgSource, UNKNOWN_WORKSPACE } from '../../mcp/proxy/intent.js';
import { JournalTraceSink } from '../../mcp/proxy/journal-sink.js';
import type { ChildServerPeer } from '../../mcp/proxy/peer.js';
import { pathFlag, stateDir, type CliContext } from '../context.js';
import { openCheckedPool, storeLocationOf } from '../store-access.js';
import { readInputText } from '../input.js';
import { signingKeyFromFlags } from './keys.js';
import { startHostTelemetry, stopHostTelemetry } from '../telemetry-flags.js';
import type { ProxyFlags } from './mcp-proxy.js';

/*
 * `ward mcp proxy` once its server is spawned (src/cli/commands/mcp-proxy.ts): the policy, key,
 * journal and runtime, then the transport. A module of its own so that the command imports none of
 * this before the spawn: the server's start-up overlaps the loading of everything here.
 */

/** Everything `ward mcp proxy` loads (policy, key, journal, runtime), then the transport. */
export async function loadAndRun(
  ctx: CliContext,
  flags: ProxyFlags,
  command: string[],
  usage: (message: string) => WardError,
  profile: 'standard' | 'oss-prod',
  maxMessageBytes: number,
  early: ChildServerPeer | undefined,
  loaded: () => void,
): Promise<void> {

  const state = stateDir(ctx, flags.stateDir);
  const policyPath = pathFlag(ctx, flags.policy!, '--policy');
  const policy = loadPolicyFile(policyPath);
  checkProfile(policy.policy, profile);
  const envelope = flags.contextEnvelope ? await loadEnvelope(() => readInputText(ctx, flags.contextEnvelope!, 'context envelope'), flags.contextEnvelope) : undefined;
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
    offLoop: Boolean(listen) && flags.decisionThread,
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
