import type { IncomingMessage, ServerResponse } from 'node:http';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { ERROR_CODES, isWardError, type ErrorCode } from '../errors.js';
import { describeFailure, errorEnvelope, goJsonLine } from '../cli/output.js';

/**
 * An error with its HTTP status. The body is the CLI's JSON error envelope (`ok:false`, `error`,
 * `error_code`, `error_category`, `retryable`, `hint`), so clients handle daemon and CLI errors alike.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly options: {
      exitCode?: ExitCode;
      hint?: string;
      code?: ErrorCode;
      headers?: Record<string, string>;
      reason?: string;
      /** Extra members of the error body (e.g. `duplicate_key`, `duplicate_key_path`). */
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, hint?: string) => new HttpError(400, message, { ...(hint ? { hint } : {}), reason: 'bad_request' });

/** What the client sees for any thrown value, and the status it is sent with. */
export function errorResponse(err: unknown): { status: number; body: Record<string, unknown>; headers: Record<string, string>; exitCode: ExitCode } {
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
  return { status: statusForWardError(err), body: failure.json, headers: {}, exitCode: failure.exitCode };
}

function statusForWardError(err: unknown): number {
  if (!isWardError(err)) return 500;
  switch (err.code) {
    case ERROR_CODES.STORE_NOT_FOUND:
      return 404;
    case ERROR_CODES.STORE_LOCKED:
    case ERROR_CODES.STATE_LOCK:
      return 503;
    case ERROR_CODES.IO:
    case ERROR_CODES.INTERNAL:
    case ERROR_CODES.STORE_INVALID:
      return err.exitCode === EXIT.INVALID_INPUT || err.exitCode === EXIT.VERIFY_FAILED ? 400 : 500;
    default:
      return err.exitCode === EXIT.INTERNAL ? 500 : 400;
  }
}

/** Send one JSON document in the CLI's `--json` form (sorted keys, Go's HTML-safe escaping). */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): number {
  return sendText(res, status, goJsonLine(value) + '\n', 'application/json', headers);
}

export function sendText(res: ServerResponse, status: number, text: string | Buffer, contentType: string, headers: Record<string, string> = {}): number {
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(body.length), 'cache-control': 'no-store', ...headers });
  res.end(body);
  return body.length;
}

/** The media type of a request, lowercased, without parameters ("" when absent). */
export function mediaType(req: IncomingMessage): string {
  const value = req.headers['content-type'] ?? '';
  return value.split(';', 1)[0]!.trim().toLowerCase();
}

export function requireMediaType(req: IncomingMessage, accepted: readonly string[]): void {
  const type = mediaType(req);
  if (!accepted.includes(type)) {
    throw new HttpError(415, `unsupported content type ${JSON.stringify(type || '(none)')}: send ${accepted.join(' or ')}`, {
      hint: `set the Content-Type header to ${accepted[0]}`,
      reason: 'content_type',
    });
  }
}

/**
 * Read the whole body, refusing more than `limit` bytes: early from Content-Length, else while
 * reading. A refused body is not drained (the connection is closed after the 413).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (!failed) {
        failed = true;
        reject(new HttpError(400, `request body: ${err.message}`, { reason: 'body_error' }));
      }
    });
    req.on('aborted', () => {
      if (!failed) {
        failed = true;
        reject(new HttpError(400, 'request aborted', { reason: 'aborted' }));
      }
    });
  });
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `request body larger than ${limit} bytes`, {
    hint: 'send a smaller body (the limit is set with ward serve --max-body-bytes)',
    headers: { connection: 'close' },
    reason: 'body_too_large',
  });
}
