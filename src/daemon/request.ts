import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { BearerAuth, LoopbackGuard } from '../edge/guard.js';
import type { ConsoleSessions } from './console/session.js';
import { errorResponse, HttpError } from '../edge/http-error.js';
import { ERROR_CODES, isWardError } from '../errors.js';
import type { DaemonContext } from './context.js';
import { sendJson } from './http.js';
import type { JsonLog } from './log.js';
import type { DaemonMetrics } from './metrics.js';
import { matchRoute, type Exchange, type Route } from './routes.js';

export interface Guards {
  /** Set when a token is configured: every non-public route needs it. */
  auth?: BearerAuth | undefined;
  /** Host and Origin checks (loopback listeners, or any with --allowed-host). */
  loopback?: LoopbackGuard | undefined;
  /** The console's browser sessions and CSRF check (console/session.ts). */
  sessions?: ConsoleSessions | undefined;
}

/**
 * The daemon's request path: guards, routing, the handler, the error envelope, metrics and one
 * log line per request. It counts requests in flight so a graceful close can wait for them.
 */
export class RequestHandler {
  private inFlight = 0;
  private drainedWaiters: (() => void)[] = [];
  private readonly idPrefix = randomBytes(4).toString('hex');
  private nextId = 0;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly routes: readonly Route[],
    private readonly guards: Guards,
    private readonly log: JsonLog,
  ) {
    ctx.metrics.inFlight.track(() => this.inFlight);
  }

  /** Resolves once no request is in flight (at once when none is). */
  drained(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.drainedWaiters.push(resolve));
  }

  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { state, metrics } = this.ctx;
    const started = performance.now();
    this.inFlight++;
    const ex: Exchange = { req, res, id: this.idPrefix + (this.nextId++).toString(16).padStart(16, '0'), route: 'unmatched', status: 0, exitCode: 0 };
    res.setHeader('x-request-id', ex.id);
    if (state.draining) res.setHeader('connection', 'close');
    try {
      await this.dispatch(ex);
    } catch (err) {
      this.fail(ex, err);
    } finally {
      this.inFlight--;
      const seconds = (performance.now() - started) / 1000;
      metrics.requests.inc({ route: ex.route, code: String(ex.status) });
      if (ex.route === 'gate.eval') metrics.requestLatency.observe(seconds);
      this.log.log({
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
      if (state.draining && this.inFlight === 0) this.drainedWaiters.splice(0).forEach((w) => w());
    }
  };

  private async dispatch(ex: Exchange): Promise<void> {
    const { req } = ex;
    const match = matchRoute(req, this.routes);
    ex.route = match.route?.name ?? 'unmatched';
    this.guards.loopback?.check(req);
    const viaSession = this.guards.sessions?.check(req, match.route) ?? false;
    if (this.guards.auth && !match.route?.public && !viaSession) this.guards.auth.check(req);
    if (!match.route) throw new HttpError('not_found', `no such endpoint: ${req.method ?? ''} ${(req.url ?? '').split('?', 1)[0]}`, { hint: 'see docs/daemon.md for the API' });
    const handler = match.route.methods[req.method ?? ''];
    if (!handler) {
      throw new HttpError('method', `method ${req.method ?? ''} not allowed on ${match.route.name}`, {
        headers: { allow: Object.keys(match.route.methods).join(', ') },
      });
    }
    if (this.ctx.state.draining && !match.route.public) throw new HttpError('draining', 'shutting down', { headers: { 'retry-after': '1' } });
    await handler(this.ctx, ex, match.params);
  }

  /** Answer a failed request with the daemon's error envelope (or cut it off when the answer had started). */
  private fail(ex: Exchange, err: unknown): void {
    const e = errorResponse(err);
    if (err instanceof HttpError && err.code !== 'bad_request') this.ctx.metrics.rejected.inc({ reason: err.code });
    // A full disk is logged once per episode (server.ts), counted here per refused request.
    const storageFull = isWardError(err) && err.code === ERROR_CODES.STORAGE_FULL;
    if (storageFull) this.ctx.metrics.rejected.inc({ reason: 'storage_full' });
    if (e.status >= 500 && !(err instanceof HttpError) && !storageFull) {
      this.log.log({ level: 'error', msg: 'request failed', request_id: ex.id, route: ex.route, error: err instanceof Error ? err.message : String(err) });
    }
    ex.exitCode = e.exitCode;
    ex.errorCode = String(e.body['error_code']);
    if (!ex.res.headersSent) {
      ex.status = e.status;
      sendJson(ex.res, e.status, e.body, { ...e.headers, 'x-ward-exit-code': String(e.exitCode) });
    } else ex.res.destroy();
    if (e.headers['connection'] === 'close') ex.req.resume();
  }
}

/**
 * A request Node's parser refused before any handler saw it (malformed, headers too large, too
 * slow): a short JSON answer on the raw socket, counted by reason.
 */
export function answerClientError(metrics: DaemonMetrics, err: NodeJS.ErrnoException, socket: Socket): void {
  const code = err.code ?? '';
  const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  metrics.rejected.inc({ reason: status === 408 ? 'timeout' : status === 431 ? 'header_too_large' : 'malformed' });
  if (socket.writable) {
    const body = JSON.stringify({ ok: false, error: status === 408 ? 'request timeout' : 'malformed request', error_code: 'invalid_input' }) + '\n';
    socket.end(`HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  } else socket.destroy();
}
