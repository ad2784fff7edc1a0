import type { IncomingMessage } from 'node:http';
import { duplicateKeyDetails, isJsonDuplicateKeyError, parseJsonText, type JsonValue } from '../canon/index.js';
import { HttpError } from './http-error.js';

/**
 * Read a whole request body, refusing more than `limit` bytes: at once when Content-Length says
 * so (nothing is read), else as soon as the running total passes it. A refused body is drained and
 * discarded, not buffered, and the 413 carries `connection: close`, so the client can read the
 * answer and the connection ends after it. A client that goes away mid-body (`aborted`, or the
 * request closing before its end) and a stream error are 400s; none of them leaves the promise
 * pending.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    refuseRest(req);
    return Promise.reject(bodyTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: HttpError) => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      reject(err);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        fail(bodyTooLarge(limit));
        refuseRest(req);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('aborted', () => fail(aborted()));
    req.on('close', () => {
      if (!req.complete) fail(aborted());
    });
    req.on('error', (err) => fail((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? aborted() : new HttpError('body_error', `request body: ${err.message}`, { cause: err })));
  });
}

/** How long a connection whose body was refused stays half-closed, discarding what still arrives. */
const LINGER_MS = 2000;

/**
 * Discard the rest of a refused body, and close its connection without losing the answer. Node
 * destroys the socket as soon as the 413 is written (`connection: close`); a kernel that still
 * holds unread request bytes then sends a reset, which can discard the 413 before the client has
 * read it (a client still sending a large body sees an empty reply). So the socket half-closes
 * instead — the answer, then FIN — keeps discarding, and is destroyed when the client closes or
 * after LINGER_MS (a lingering close).
 */
function refuseRest(req: IncomingMessage): void {
  req.resume();
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
  };
}

/** The 413 of a body over `limit` bytes (the daemon's words; other hosts word it in their protocol). */
export function bodyTooLarge(limit: number): HttpError {
  return new HttpError('body_too_large', `request body larger than ${limit} bytes`, {
    hint: 'send a smaller body (the limit is set with ward serve --max-body-bytes)',
    headers: { connection: 'close' },
  });
}

function aborted(): HttpError {
  return new HttpError('aborted', 'request aborted');
}

/**
 * Strict JSON (`canon/json.ts`): a key repeated in one object at any depth is refused, never
 * resolved to its last value, so Ward cannot decide on a body other than the one a proxy or a log
 * in front of it read. The error names the key and where (`duplicate_key`, `duplicate_key_path`);
 * the parser's own error is its `cause`.
 */
export function parseJsonBody(bytes: Buffer | string, prefix: string): JsonValue {
  try {
    return parseJsonText(typeof bytes === 'string' ? bytes : bytes.toString('utf8'));
  } catch (err) {
    throw jsonBodyError(err, prefix);
  }
}

/** The 400 for JSON text that does not parse, with the duplicate's location when that is why. */
export function jsonBodyError(err: unknown, prefix: string): HttpError {
  if (isJsonDuplicateKeyError(err)) {
    return new HttpError('duplicate_key', `${prefix}${err.message}`, {
      hint: `a key may appear only once in each JSON object: remove the repeated ${JSON.stringify(err.key)}`,
      details: duplicateKeyDetails(err),
      cause: err,
    });
  }
  return new HttpError('bad_request', `${prefix}${(err as Error).message}`, { cause: err });
}

/** The media type of a request, lowercased, without parameters ("" when absent). */
export function mediaType(req: IncomingMessage): string {
  const value = req.headers['content-type'] ?? '';
  return value.split(';', 1)[0]!.trim().toLowerCase();
}

/** 415 unless the request's media type is one of `accepted`. */
export function requireMediaType(req: IncomingMessage, accepted: readonly string[]): void {
  const type = mediaType(req);
  if (!accepted.includes(type)) {
    throw new HttpError('content_type', `unsupported content type ${JSON.stringify(type || '(none)')}: send ${accepted.join(' or ')}`, {
      hint: `set the Content-Type header to ${accepted[0]}`,
    });
  }
}
