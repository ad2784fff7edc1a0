import { Command, Option } from 'commander';
import { ERROR_CODES, WardError } from '../../errors.js';
import { checkProfileKeyFlags } from '../../keys/index.js';
import { STATE_DIR_HELP, type CliContext } from '../context.js';
import type { McpCallFlags } from './mcp-call.js';
import { DEFAULT_REQUEST_LIMITS } from '../../mcp/proxy/limits.js';
import type { ChildServerPeer } from '../../mcp/proxy/peer.js';

// Over stdio the server is spawned before anything else loads (docs/mcp-proxy.md, start-up): this
// module imports only what the flags and the spawn need; the rest is in ./mcp-proxy-run.js.

/** The one-shot mode's flags (`--call`, mcp-decision-service.md §6.4) and the proxy's own. */
export interface ProxyFlags extends McpCallFlags {
  otel?: boolean;
  otelTargets?: boolean;
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
  decisionThread: boolean;
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
    .option('--no-decision-thread', 'with --listen: decide large calls on the event loop too (by default they are decided on a worker thread, so other sessions do not wait)')
    .option('--hide-blocked-tools', 'drop tools from tools/list that the policy blocks whatever the arguments')
    .option('--capture-intents', 'keep each normalized intent beside its trace (for ward regress replay); may hold sensitive arguments')
    .option('--no-run-capture', 'do not capture sessions as runs in the store')
    .option('--otel', 'export a span per relayed request and per decision over OTLP and pass its context to the server in _meta.traceparent (also WARD_OTEL=1; docs/observability.md)')
    .option('--decision-log <file>', 'append each decision as a JSON line to this file (also WARD_DECISION_LOG; docs/observability.md)')
    .option('--otel-targets', 'put canonical targets (paths, hosts, record ids: values) in spans and logs as ward.targets; off by default (also WARD_OTEL_TARGETS=1; docs/observability.md "Targets")')
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
    // The reference one-shot mode (implemented in src/decision-service).
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
  const stdioServer = !flags.upstreamUrl && !flags.listen;
  let early: ChildServerPeer | undefined;
  // A client that gives up while Ward loads (SIGINT/SIGTERM) must not leave the server behind:
  // it was sent nothing, so it is stopped at once, and the signal then ends the proxy as before.
  // Listening before the spawn: a signal sent as soon as the server is seen finds the handler.
  const onLoadSignal = (signal: NodeJS.Signals) => {
    releaseLoadSignals();
    early?.child?.kill('SIGTERM');
    process.kill(process.pid, signal);
  };
  const releaseLoadSignals = () => {
    process.off('SIGINT', onLoadSignal);
    process.off('SIGTERM', onLoadSignal);
  };
  if (stdioServer) {
    process.once('SIGINT', onLoadSignal);
    process.once('SIGTERM', onLoadSignal);
    const { ChildServerPeer } = await import('../../mcp/proxy/peer.js');
    early = new ChildServerPeer({ command: command[0]!, args: command.slice(1), cwd: ctx.cwd, env: ctx.env, maxMessageBytes });
    // A spawn error (ENOENT) is reported by runStdio, as before, once the rest has loaded.
    early.spawn().catch(() => undefined);
  }
  try {
    const { loadAndRun } = await import('./mcp-proxy-run.js');
    await loadAndRun(ctx, flags, command, usage, profile, maxMessageBytes, early, releaseLoadSignals);
  } catch (err) {
    releaseLoadSignals();
    await early?.close();
    throw err;
  }
}
