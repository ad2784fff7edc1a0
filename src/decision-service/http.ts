import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { isJsonObject, type JsonObject, type JsonValue } from '../canon/index.js';
import { parseJsonBody, readBody } from '../edge/body.js';
import { BearerAuth, type LoopbackGuard } from '../edge/guard.js';
import { HttpError } from '../edge/http-error.js';
import { ERROR_CODES, isWardError } from '../errors.js';
import {
  checkedLocalPath,
  DecisionTraceWriter,
  evaluateDecisionAsync,
  type DecisionRequest,
  type DecisionResult,
  type DecisionServiceConfig,
} from './evaluate.js';
import { appendSessionJournal, sweepRetention, type RetentionRule } from './session.js';

/**
 * The HTTP decision service (`mcp-decision-service.md` §6.5): `POST /v1/evaluate` (JSON),
 * `/v1/evaluate/sse` (one `evaluate` event) and `/v1/evaluate/stream` (one NDJSON line). Used by
 * `ward mcp serve` and mounted by the `ward serve` daemon via `createEvaluateHandler`.
 */
export const EVALUATE_ROUTES = ['/v1/evaluate', '/v1/evaluate/sse', '/v1/evaluate/stream'] as const;
export const DEFAULT_MAX_REQUEST_BYTES = 1 << 20;

export type HttpVerdictStatus = 'compat' | 'strict';

export interface EvaluateHandlerOptions {
  config: DecisionServiceConfig;
  /** Default 1 MiB. */
  maxRequestBytes?: number;
  /** `compat` (default): every decision is 200. `strict`: block 403, require_approval/dry_run 409. */
  httpVerdictStatus?: HttpVerdictStatus;
  /** When set, requests need `Authorization: Bearer <token>` (constant-time compare). */
  authToken?: string | undefined;
  /** Host and Origin checks (`ward mcp serve` on loopback); the daemon applies its own before mounting. */
  loopbackGuard?: LoopbackGuard | undefined;
  /** Session journals (`--session-dir`); journaling is on whenever a session id is known. */
  sessionDir?: string | undefined;
  /** Retention sweeps after each request. */
  retention?: readonly RetentionRule[];
  /** Where traces are written (asynchronously, durably, before the answer); one per server by default. */
  traceWriter?: DecisionTraceWriter;
  /** Told of each decision once its trace is written, before the answer (the daemon's telemetry span). */
  onDecision?: (result: DecisionResult, req: IncomingMessage, startedAt: number) => void;
}

/** Returns true when it handled the request (an evaluate route), false for any other path. */
export type EvaluateHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const REQUEST_KEYS = new Set([
  'adapter',
  'call',
  'run_id',
  'session_id',
  'session_journal',
  'checkpoint_interval',
  'trace_path',
  'runpack_out',
  'emit_runpack',
  'pack_out',
  'emit_pack',
]);

/**
 * Build the `/v1/evaluate*` handler. The daemon mounts it with
 * `if (await evaluate(req, res)) return;` before its own routes.
 */
export function createEvaluateHandler(opts: EvaluateHandlerOptions): EvaluateHandler {
  const maxBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const strict = opts.httpVerdictStatus === 'strict';
  const auth = opts.authToken ? new BearerAuth(opts.authToken) : undefined;
  const writer = opts.traceWriter ?? new DecisionTraceWriter();
  return async (req, res) => {
    const startedAt = Date.now();
    const path = (req.url ?? '/').split('?')[0]!;
    const route = EVALUATE_ROUTES.find((r) => r === path || r + '/' === path);
    if (!route) return false;
    try {
      if (req.method !== 'POST') throw new HttpError('method', 'method not allowed', { headers: { allow: 'POST' } });
      if (auth) checkBearer(auth, req);
      const contentType = req.headers['content-type'];
      if (contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
        throw new HttpError('content_type', 'content type must be application/json');
      }
      const request = parseRequest(await readBody(req, maxBytes), opts);
      let result: DecisionResult;
      try {
        // The trace is written off the event loop; the answer waits for it, other requests do not.
        result = await evaluateDecisionAsync(opts.config, request.decision, writer);
      } catch (err) {
        throw decisionFailure(err);
      }
      opts.onDecision?.(result, req, startedAt);
      const warnings = sideEffects(opts, request, result);
      const payload = responseJson(result, warnings);
      const status = strict ? (result.verdict === 'block' ? 403 : result.verdict === 'require_approval' || result.verdict === 'dry_run' ? 409 : 200) : 200;
      send(res, route, status, payload);
    } catch (err) {
      sendError(res, err, maxBytes);
    }
    return true;
  };
}

/** `/healthz` plus the evaluate routes: the whole `ward mcp serve` request listener. */
export function createMcpServeListener(opts: EvaluateHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const evaluate = createEvaluateHandler(opts);
  return (req, res) => {
    const refused = opts.loopbackGuard?.refusal(req);
    if (refused) {
      const error =
        refused.code === 'host_missing'
          ? new HttpError('host_missing', 'missing Host header')
          : new HttpError(refused.code, `${refused.code === 'host' ? 'Host' : 'Origin'} ${JSON.stringify(refused.header)} is not allowed on this loopback listener`);
      sendError(res, error, 0);
      return;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/healthz') {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendJson(res, 405, JSON.stringify({ ok: false, error: 'method not allowed' }) + '\n', { allow: 'GET' });
        return;
      }
      sendJson(res, 200, JSON.stringify({ ok: true, service: 'gait.mcp.serve' }) + '\n');
      return;
    }
    void evaluate(req, res).then((handled) => {
      if (!handled) sendJson(res, 404, JSON.stringify({ ok: false, error: 'not found' }) + '\n');
    });
  };
}

/** 401 in the service's words: no usable `Bearer <token>` is "missing", a wrong token "invalid". */
function checkBearer(auth: BearerAuth, req: IncomingMessage): void {
  const refused = auth.refusal(req.headers.authorization);
  if (refused === undefined) return;
  throw new HttpError('auth', refused === 'mismatch' ? 'invalid bearer authorization' : 'missing bearer authorization', { headers: { 'www-authenticate': 'Bearer' } });
}

/**
 * The service's error envelope (`mcp-decision-service.md` §6.5): `{ok:false, error}` plus any
 * details (`duplicate_key`, `duplicate_key_path`), with the status of the error's code.
 */
function sendError(res: ServerResponse, err: unknown, maxBytes: number): void {
  const e = err instanceof HttpError ? err : new HttpError('bad_request', (err as Error).message ?? String(err));
  const message = e.code === 'body_too_large' ? `request body exceeds ${maxBytes} bytes` : e.message;
  const headers = { ...(e.code === 'auth' || e.code === 'method' || e.code === 'unavailable' || e.code === 'overload' ? e.options.headers : {}) };
  // The client may still be sending an oversized body: answer, then close the connection.
  if (e.status === 413) res.setHeader('connection', 'close');
  sendJson(res, e.status, JSON.stringify({ ok: false, error: message, ...e.options.details }) + '\n', headers);
}

/**
 * Why a decision could not be made (§6.5: `bad_request`), except where the host could not record
 * its trace (a cluster replica's database down or saturated, or its commit queue full): that is a
 * moment, not the request's fault, and never an answer — 503 or 429 with `Retry-After`.
 */
function decisionFailure(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isWardError(err) && (err.code === ERROR_CODES.STORE_UNAVAILABLE || err.code === ERROR_CODES.STORE_BUSY)) {
    return new HttpError('unavailable', err.message, { headers: { 'retry-after': '1' }, cause: err });
  }
  return new HttpError('bad_request', err instanceof Error ? err.message : String(err));
}

interface ParsedRequest {
  decision: DecisionRequest;
  sessionJournal: string | undefined;
  checkpointInterval: number;
}

/** The request body (§6.5): one JSON object, unknown fields rejected, `call` a non-empty object. */
function parseRequest(body: Buffer, opts: EvaluateHandlerOptions): ParsedRequest {
  // A repeated key (at any depth, e.g. two `call`s or two `arguments`) is refused, naming it.
  const value: JsonValue = parseJsonBody(body, 'decode request: ');
  if (!isJsonObject(value)) throw new HttpError('bad_request', 'decode request: body must be a JSON object');
  for (const key of Object.keys(value)) {
    if (!REQUEST_KEYS.has(key)) throw new HttpError('bad_request', `decode request: unknown field ${JSON.stringify(key)}`);
  }
  const str = (key: string): string => {
    const v = value[key];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new HttpError('bad_request', `decode request: ${key} must be a string`);
    return v.trim();
  };
  const bool = (key: string): boolean => {
    const v = value[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') throw new HttpError('bad_request', `decode request: ${key} must be a boolean`);
    return v;
  };
  const call = value['call'];
  if (!isJsonObject(call) || Object.keys(call).length === 0) throw new HttpError('bad_request', 'call is required and must be a non-empty JSON object');
  const cfg = opts.config;
  const artifactPath = (key: string): string | undefined => {
    const v = str(key);
    if (v === '') return undefined;
    if (!cfg.allowClientArtifactPaths) {
      throw new HttpError('bad_request', `${key} is not allowed; start ward mcp serve with --allow-client-artifact-paths`);
    }
    try {
      return resolve(cfg.cwd, checkedLocalPath(v, key));
    } catch (err) {
      throw new HttpError('bad_request', (err as Error).message);
    }
  };
  const traceOut = artifactPath('trace_path');
  const runpackOut = artifactPath('runpack_out');
  const packOut = artifactPath('pack_out');
  const sessionJournal = artifactPath('session_journal');
  const emitRunpack = bool('emit_runpack');
  const emitPack = bool('emit_pack');
  if (emitPack && !cfg.packDir && !packOut) throw new HttpError('bad_request', 'emit_pack requires --pack-dir');
  if (emitRunpack && !cfg.runpackDir && !runpackOut) throw new HttpError('bad_request', 'emit_runpack requires --runpack-dir');
  const interval = value['checkpoint_interval'];
  if (interval !== undefined && interval !== null && (typeof interval !== 'number' || !Number.isSafeInteger(interval) || interval < 0)) {
    throw new HttpError('bad_request', 'decode request: checkpoint_interval must be a non-negative integer');
  }
  const adapter = str('adapter');
  return {
    decision: {
      payload: call as JsonObject,
      ...(adapter ? { adapter } : {}),
      runId: str('run_id') || undefined,
      sessionId: str('session_id') || undefined,
      traceOut,
      runpackOut,
      emitRunpack,
      packOut,
      emitPack,
    },
    sessionJournal,
    checkpointInterval: typeof interval === 'number' ? interval : 0,
  };
}

/** Session journaling and retention sweeps; their notes become warnings. Failures never undo a decision. */
function sideEffects(opts: EvaluateHandlerOptions, request: ParsedRequest, result: DecisionResult): string[] {
  const warnings: string[] = [];
  if (result.sessionId && (opts.sessionDir || request.sessionJournal)) {
    try {
      const entry = appendSessionJournal(opts.sessionDir ?? '.', request.sessionJournal, result);
      warnings.push(`session_journal=${entry.path} sequence=${entry.sequence}`);
    } catch (err) {
      warnings.push(`session journal not written: ${(err as Error).message}`);
    }
  }
  for (const rule of opts.retention ?? []) {
    const note = sweepRetention(rule);
    if (note) warnings.push(note);
  }
  return warnings;
}

/** Fields the decision writes after `warnings` (struct order). */
const AFTER_WARNINGS = new Set(['relationship', 'result_envelope']);

/** The decision object in struct order plus `exit_code`; HTML is not escaped; trailing newline added by the sender. */
function responseJson(result: DecisionResult, extraWarnings: string[]): string {
  const existing = Array.isArray(result.output['warnings']) ? (result.output['warnings'] as JsonValue[]) : [];
  const warnings = [...existing, ...extraWarnings];
  const out: JsonObject = {};
  let placed = false;
  for (const [key, value] of Object.entries(result.output)) {
    if (key === 'warnings') continue;
    if (!placed && AFTER_WARNINGS.has(key)) {
      if (warnings.length > 0) out['warnings'] = warnings;
      placed = true;
    }
    out[key] = value;
  }
  if (!placed && warnings.length > 0) out['warnings'] = warnings;
  out['exit_code'] = result.exitCode;
  return JSON.stringify(out);
}

function send(res: ServerResponse, route: (typeof EVALUATE_ROUTES)[number], status: number, json: string): void {
  if (route === '/v1/evaluate/sse') {
    const body = `event: evaluate\ndata: ${json}\n\n`;
    res.writeHead(status, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  if (route === '/v1/evaluate/stream') {
    const body = json + '\n';
    res.writeHead(status, { 'content-type': 'application/x-ndjson', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  sendJson(res, status, json + '\n');
}

function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
