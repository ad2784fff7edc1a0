import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import type { KeyFlags } from '../../keys/index.js';
import { EXIT } from '../../contract/exit-codes.js';
import { BearerAuth, isLoopbackHost, LoopbackGuard } from '../../edge/guard.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { loadServiceConfig, sharedServiceFlags } from '../../decision-service/config.js';
import { DecisionTraceWriter } from '../../decision-service/evaluate.js';
import { createMcpServeListener, DEFAULT_MAX_REQUEST_BYTES, type HttpVerdictStatus } from '../../decision-service/http.js';
import { parseMaxAge, type RetentionRule } from '../../decision-service/session.js';
import { stateDir, type CliContext } from '../context.js';
import { goJsonLine } from '../output.js';

/** `ward mcp serve` flags (commander camelCase). */
export interface McpServeFlags extends KeyFlags {
  policy?: string;
  contextEnvelope?: string;
  listen: string;
  adapter?: string;
  profile?: string;
  jobRoot?: string;
  killSwitchState?: string;
  authMode: string;
  authTokenEnv?: string;
  maxRequestBytes: string;
  httpVerdictStatus: string;
  allowClientArtifactPaths?: boolean;
  traceDir?: string;
  runpackDir?: string;
  packDir?: string;
  sessionDir?: string;
  traceMaxAge?: string;
  traceMaxCount?: string;
  runpackMaxAge?: string;
  runpackMaxCount?: string;
  packMaxAge?: string;
  packMaxCount?: string;
  sessionMaxAge?: string;
  sessionMaxCount?: string;
  exportLogOut?: string;
  exportOtelOut?: string;
  json?: boolean;
  stateDir?: string;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** `host:port`, `[v6]:port` or `:port` (all interfaces). */
export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new WardError(ERROR_CODES.USAGE, `invalid --listen ${JSON.stringify(text)}`, { hint: 'use host:port, e.g. 127.0.0.1:8787' });
  }
  return { host: m[1] ?? m[2] ?? '', port };
}

function nonNegativeInt(flag: string, value: string | undefined): number {
  const text = (value ?? '0').trim();
  if (!/^\d+$/.test(text)) throw new WardError(ERROR_CODES.USAGE, `invalid ${flag} ${JSON.stringify(value)}: want an integer >= 0`);
  return Number(text);
}

/**
 * Validate everything and start listening. Resolves with the server once it is bound (tests and
 * `runMcpServe` use it); startup errors throw WardError (exit 6).
 */
export async function startMcpServe(ctx: CliContext, flags: McpServeFlags): Promise<{ server: Server; address: ListenAddress; traceWriter: DecisionTraceWriter }> {
  const listen = parseListen(flags.listen);
  const authMode = (flags.authMode ?? 'off').trim().toLowerCase();
  if (authMode !== 'off' && authMode !== 'token') {
    throw new WardError(ERROR_CODES.USAGE, `unsupported --auth-mode ${authMode}`, { hint: 'use --auth-mode off or --auth-mode token' });
  }
  let token: string | undefined;
  if (authMode === 'token') {
    const name = (flags.authTokenEnv ?? '').trim();
    if (name === '') throw new WardError(ERROR_CODES.USAGE, '--auth-mode token requires --auth-token-env', { hint: 'export WARD_MCP_TOKEN=... and pass --auth-token-env WARD_MCP_TOKEN' });
    token = (ctx.env[name] ?? '').trim();
    if (token === '') throw new WardError(ERROR_CODES.USAGE, `--auth-token-env ${name} is empty or unset`, { hint: `export ${name} with the bearer token clients must send` });
    new BearerAuth(token); // refuses, before listening, a token no client could send
  }
  if (!isLoopbackHost(listen.host) && !token) {
    throw new WardError(ERROR_CODES.USAGE, `non-loopback --listen ${flags.listen} requires --auth-mode token`, {
      hint: 'bind 127.0.0.1, or add --auth-mode token --auth-token-env VAR',
    });
  }
  const maxBytes = nonNegativeInt('--max-request-bytes', flags.maxRequestBytes);
  if (maxBytes === 0) throw new WardError(ERROR_CODES.USAGE, '--max-request-bytes must be > 0');
  const verdictStatus = (flags.httpVerdictStatus ?? 'compat').trim().toLowerCase();
  if (verdictStatus !== 'compat' && verdictStatus !== 'strict') {
    throw new WardError(ERROR_CODES.USAGE, `unsupported --http-verdict-status ${verdictStatus}`, { hint: 'use compat or strict' });
  }

  const state = stateDir(ctx, flags.stateDir);
  const cfg = loadServiceConfig({
    ...sharedServiceFlags(flags),
    stateDir: state,
    cwd: ctx.cwd,
    env: ctx.env,
    serve: true,
    allowClientArtifactPaths: flags.allowClientArtifactPaths === true,
    traceDir: flags.traceDir,
    runpackDir: flags.runpackDir,
    packDir: flags.packDir,
  });
  const sessionDir = resolve(ctx.cwd, flags.sessionDir || resolve(state, 'mcp-serve', 'sessions'));
  const retention: RetentionRule[] = [
    { cls: 'trace' as const, dir: cfg.traceDir, maxAgeMs: parseMaxAge('--trace-max-age', flags.traceMaxAge), maxCount: nonNegativeInt('--trace-max-count', flags.traceMaxCount) },
    { cls: 'runpack' as const, dir: cfg.runpackDir ?? '', maxAgeMs: parseMaxAge('--runpack-max-age', flags.runpackMaxAge), maxCount: nonNegativeInt('--runpack-max-count', flags.runpackMaxCount) },
    { cls: 'pack' as const, dir: cfg.packDir ?? '', maxAgeMs: parseMaxAge('--pack-max-age', flags.packMaxAge), maxCount: nonNegativeInt('--pack-max-count', flags.packMaxCount) },
    { cls: 'session' as const, dir: sessionDir, maxAgeMs: parseMaxAge('--session-max-age', flags.sessionMaxAge), maxCount: nonNegativeInt('--session-max-count', flags.sessionMaxCount) },
  ]
    .filter((r) => r.dir !== '' && (r.maxAgeMs > 0 || r.maxCount > 0))
    .map((r) => ({ ...r, dir: resolve(ctx.cwd, r.dir) }));

  const traceWriter = new DecisionTraceWriter();
  const listener = createMcpServeListener({
    traceWriter,
    config: cfg,
    maxRequestBytes: maxBytes || DEFAULT_MAX_REQUEST_BYTES,
    httpVerdictStatus: verdictStatus as HttpVerdictStatus,
    authToken: token,
    // DNS rebinding and cross-site requests: Host and Origin must name this loopback listener.
    loopbackGuard: isLoopbackHost(listen.host) ? new LoopbackGuard([listen.host]) : undefined,
    sessionDir,
    retention,
  });
  const server = createServer({ noDelay: true, keepAlive: true, requestTimeout: 30_000, headersTimeout: 5_000 }, listener);
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => socket.setNoDelay(true));
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new WardError(ERROR_CODES.USAGE, `listen ${flags.listen}: ${err.code ?? err.message}`, { exitCode: EXIT.INVALID_INPUT })),
    );
    server.listen(listen.port, listen.host === '' ? undefined : listen.host, () => resolvePromise());
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : listen.port;
  const address = { host: listen.host, port };
  const shown = `${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${port}`;
  if (flags.json) {
    ctx.stdout(goJsonLine({ ok: true, listen: shown, policy: flags.policy, adapter: cfg.defaultAdapter, profile: cfg.profile }) + '\n');
  } else {
    ctx.stdout(`mcp serve: listening on http://${shown} (policy ${flags.policy}, adapter ${cfg.defaultAdapter}, profile ${cfg.profile})\n`);
    for (const w of cfg.keyWarnings) ctx.stderr(`warning: ${w}\n`);
  }
  server.on('close', () => void traceWriter.close());
  return { server, address, traceWriter };
}

/** `ward mcp serve`: run until SIGINT/SIGTERM, then stop accepting, finish in-flight requests and exit 0. */
export async function runMcpServe(ctx: CliContext, flags: McpServeFlags): Promise<void> {
  const { server, traceWriter } = await startMcpServe(ctx, flags);
  await new Promise<void>((resolvePromise) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      server.close(() => resolvePromise());
      server.closeIdleConnections();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await traceWriter.close(); // answered decisions already have their traces; nothing else may be pending
  ctx.exitCode = EXIT.OK;
}
