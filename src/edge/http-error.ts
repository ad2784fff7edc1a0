import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { ERROR_CODES, isWardError } from '../errors.js';
import { describeFailure, errorEnvelope } from './json-output.js';

/**
 * Why a host refused a request, and the one HTTP status each reason has. The code is also the
 * `reason` label of the daemon's `ward_http_rejected_total` (except `bad_request`, not counted).
 */
export const HTTP_ERROR_STATUS = {
  bad_request: 400,
  duplicate_key: 400,
  body_error: 400,
  aborted: 400,
  host_missing: 400,
  auth: 401,
  host: 403,
  origin: 403,
  csrf: 403,
  refused: 403,
  not_found: 404,
  method: 405,
  conflict: 409,
  body_too_large: 413,
  content_type: 415,
  overload: 429,
  draining: 503,
  unavailable: 503,
} as const;

export type HttpErrorCode = keyof typeof HTTP_ERROR_STATUS;

export interface HttpErrorOptions {
  /** Default: 1 for 5xx and 429, else 6 (invalid input). */
  exitCode?: ExitCode;
  hint?: string;
  headers?: Record<string, string>;
  /** Extra members of the error body (e.g. `duplicate_key`, `duplicate_key_path`). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * A refused request: a stable code, the status that code has, and what to tell the client. Every
 * host throws it; each renders it in its protocol's envelope (the daemon with `errorResponse`
 * below, the decision service as `{ok:false, error}`, the MCP proxy as a JSON-RPC error).
 */
export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: HttpErrorCode,
    message: string,
    readonly options: HttpErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.status = HTTP_ERROR_STATUS[code];
  }
}

export const badRequest = (message: string, hint?: string) => new HttpError('bad_request', message, hint ? { hint } : {});

export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  exitCode: ExitCode;
}

/**
 * The daemon's answer for any thrown value: the CLI's JSON error envelope (`ok:false`, `error`,
 * `error_code`, `error_category`, `retryable`, `hint`), so clients handle daemon and CLI errors
 * alike, with the status of the HttpError's code or of the WardError's code.
 */
export function errorResponse(err: unknown): ErrorResponse {
  if (err instanceof HttpError) {
    const exitCode = err.options.exitCode ?? (err.status >= 500 || err.status === 429 ? EXIT.INTERNAL : EXIT.INVALID_INPUT);
    return {
      status: err.status,
      body: { ...err.options.details, ok: false, error: err.message, ...errorEnvelope(exitCode, err.options.hint) },
      headers: err.options.headers ?? {},
      exitCode,
    };
  }
  const failure = describeFailure(err);
  return { status: statusForWardError(err), body: failure.json, headers: retryHeaders(err), exitCode: failure.exitCode };
}

/**
 * A database that is down or saturated is a moment, not an answer: the client is told when to
 * come back (every replica recovers on its own once PostgreSQL answers again).
 */
function retryHeaders(err: unknown): Record<string, string> {
  return isWardError(err) && (err.code === ERROR_CODES.STORE_UNAVAILABLE || err.code === ERROR_CODES.STORE_BUSY || err.code === ERROR_CODES.STORAGE_FULL) ? { 'retry-after': '1' } : {};
}

function statusForWardError(err: unknown): number {
  if (!isWardError(err)) return 500;
  switch (err.code) {
    case ERROR_CODES.STORE_NOT_FOUND:
      return 404;
    case ERROR_CODES.STORE_LOCKED:
    case ERROR_CODES.STATE_LOCK:
    case ERROR_CODES.STORE_UNAVAILABLE:
    case ERROR_CODES.STORE_BUSY:
    case ERROR_CODES.STORAGE_FULL:
      return 503;
    case ERROR_CODES.IO:
    case ERROR_CODES.INTERNAL:
    case ERROR_CODES.STORE_INVALID:
      return err.exitCode === EXIT.INVALID_INPUT || err.exitCode === EXIT.VERIFY_FAILED ? 400 : 500;
    default:
      return err.exitCode === EXIT.INTERNAL ? 500 : 400;
  }
}
