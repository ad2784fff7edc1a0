import { oversizeId } from './framing.js';
import type { TransportFetch } from './sdk-peer.js';

/**
 * `--max-message-bytes` toward an `--upstream-url` server (docs/mcp-proxy.md "Limits"): the same
 * bound a stdio server's lines have. The SDK transport reads a response body whole (JSON) or event
 * by event (SSE) before Ward sees a message, so the bound sits in its `fetch`: a JSON body or an SSE
 * event over the limit is discarded as it streams (never held: at most the limit plus one chunk is
 * buffered), and reported with the id it answered, so the session answers that request with an
 * error instead of leaving it waiting (`--call-timeout 0`).
 */
export type OversizeReport = (bytes: number, id: string | number | null, response: boolean) => void;

/** What a response over the limit is known to answer: the id its edges show, else the POST's one request. */
function answeredId(edges: { head: Buffer; tail: Buffer }, posted: (string | number)[]): { id: string | number | null; response: boolean } {
  const seen = oversizeId(edges);
  if (seen.id === null && seen.response && posted.length === 1) return { id: posted[0]!, response: true };
  return seen;
}

/** The ids of the requests a POST body carries (one message or a batch). */
function postedIds(body: unknown): (string | number)[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((m) => {
      if (typeof m !== 'object' || m === null || typeof (m as Record<string, unknown>)['method'] !== 'string') return [];
      const id = (m as Record<string, unknown>)['id'];
      return typeof id === 'string' || typeof id === 'number' ? [id] : [];
    });
  } catch {
    return [];
  }
}

const EDGE = 512;

export function boundedFetch<F extends TransportFetch>(fetchImpl: F, maxBytes: number, report: OversizeReport): F {
  return (async (input: string | URL, init?: Parameters<TransportFetch>[1]) => {
    const res = (await fetchImpl(input, init)) as Response;
    if (!res.body) return res;
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const posted = init?.['method'] === 'POST' ? postedIds(init['body']) : [];
    if (type === 'text/event-stream') {
      return new Response(res.body.pipeThrough(boundedEvents(maxBytes, posted, report)), { status: res.status, statusText: res.statusText, headers: res.headers });
    }
    if (type !== 'application/json') return res;
    const bounded = await readBounded(res.body, maxBytes);
    if (bounded.body !== undefined) return new Response(bounded.body, { status: res.status, statusText: res.statusText, headers: res.headers });
    const { id, response } = answeredId({ head: bounded.head, tail: Buffer.alloc(0) }, posted);
    report(bounded.bytes, id, response);
    // An empty batch: the transport delivers no message, and the session answers the request.
    return new Response('[]', { status: res.status, statusText: res.statusText, headers: res.headers });
  }) as F;
}

/** The body when it fits in `max` bytes; else its first bytes and how many were read when reading stopped. */
async function readBounded(body: ReadableStream<Uint8Array>, max: number): Promise<{ body?: Buffer; head: Buffer; bytes: number }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > max) {
      chunks.push(Buffer.from(value));
      await reader.cancel().catch(() => undefined);
      return { head: Buffer.concat(chunks).subarray(0, EDGE), bytes };
    }
    chunks.push(Buffer.from(value));
  }
  return { body: Buffer.concat(chunks), head: Buffer.alloc(0), bytes };
}

/** The JSON text of an event's `data:` lines (the SDK's servers write one). */
function eventData(event: string): string {
  return event
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
    .join('\n');
}

/**
 * SSE events passed through as they come, except one over `max` bytes: its text is dropped as it
 * streams (its first and last bytes kept to tell its id), and it is reported at its end. Line
 * endings are written as `\n` (SSE reads `\r\n`, `\r` and `\n` alike).
 */
export function boundedEvents(max: number, posted: (string | number)[], report: OversizeReport): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let event = '';
  let eventBytes = 0;
  let dropping = false;
  let head = '';
  let tail = '';
  /** The last character taken was `\n` (a blank line may end in the next chunk). */
  let prevNl = false;
  /** A `\r` at a chunk's end: it may be the first half of `\r\n`. */
  let heldCr = false;
  const append = (part: string) => {
    eventBytes += Buffer.byteLength(part);
    if (dropping) {
      tail = (tail + part).slice(-EDGE);
      return;
    }
    event += part;
    if (eventBytes > max) {
      dropping = true;
      head = event.slice(0, EDGE);
      tail = event.slice(-EDGE);
      event = '';
    }
  };
  const endEvent = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (dropping) {
      const { id, response } = answeredId({ head: Buffer.from(eventData(head)), tail: Buffer.from(tail.trimEnd()) }, posted);
      report(eventBytes, id, response);
    } else {
      const text = event.replace(/\n+$/, '');
      if (text !== '') controller.enqueue(encoder.encode(`${text}\n\n`));
    }
    event = '';
    eventBytes = 0;
    dropping = false;
    head = '';
    tail = '';
  };
  const take = (text: string, controller: TransformStreamDefaultController<Uint8Array>) => {
    let from = 0;
    let search = 0;
    for (;;) {
      const nl = text.indexOf('\n', search);
      if (nl < 0) break;
      search = nl + 1;
      if (!(nl === 0 ? prevNl : text.charCodeAt(nl - 1) === 10)) continue;
      append(text.slice(from, nl));
      endEvent(controller);
      from = nl + 1;
    }
    append(text.slice(from));
    if (text.length > 0) prevNl = text.charCodeAt(text.length - 1) === 10;
  };
  const lines = (text: string) => text.replace(/\r\n?/g, '\n');
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      let text = (heldCr ? '\r' : '') + decoder.decode(chunk, { stream: true });
      heldCr = text.endsWith('\r');
      if (heldCr) text = text.slice(0, -1);
      take(lines(text), controller);
    },
    flush(controller) {
      take(lines(decoder.decode() + (heldCr ? '\n' : '')), controller);
      // The stream ended inside an event: an oversize one is still reported (its request must be answered).
      if (dropping) endEvent(controller);
      else if (event !== '') controller.enqueue(encoder.encode(event));
    },
  });
}
