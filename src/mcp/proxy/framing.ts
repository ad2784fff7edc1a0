import { ERROR_CODES, WardError } from '../../errors.js';

/** Bytes kept from each end of a discarded line: enough to find a top-level id written first or last. */
const EDGE_BYTES = 512;

/**
 * Newline-delimited JSON framing, the MCP stdio binding: one message per line, no embedded
 * newlines. Lines are handed over as the bytes received (without the newline) so they can be
 * forwarded unchanged; chunks of a long line are kept in a list and joined once, so a 10 MB result
 * costs one copy, not one per chunk. A line longer than `maxLineBytes` is discarded (its bytes are
 * dropped as they arrive, memory stays bounded) and reported once through `onOversize`, with its
 * first and last bytes, so the request it answers can still be told (`oversizeId`).
 */
export class LineReader {
  private parts: Buffer[] = [];
  private pending = 0;
  private skipping = false;
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversize: (bytes: number, edges: { head: Buffer; tail: Buffer }) => void,
  ) {
    if (!(maxLineBytes > 0)) throw new WardError(ERROR_CODES.USAGE, 'max message size must be positive');
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      this.take(chunk.subarray(start, nl), true);
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start), false);
  }

  /** Bytes of an unfinished line at end of stream. */
  get buffered(): number {
    return this.pending;
  }

  private take(piece: Buffer, complete: boolean): void {
    if (!this.skipping && this.pending + piece.length > this.maxLineBytes) {
      const first = Buffer.concat([...this.parts, piece.subarray(0, EDGE_BYTES)]);
      this.head = Buffer.from(first.subarray(0, EDGE_BYTES));
      this.parts = [];
      this.skipping = true;
    }
    if (this.skipping) {
      this.pending += piece.length;
      this.tail = Buffer.from(piece.length >= EDGE_BYTES ? piece.subarray(piece.length - EDGE_BYTES) : Buffer.concat([this.tail, piece]).subarray(-EDGE_BYTES));
      if (complete) {
        this.onOversize(this.pending, { head: this.head, tail: this.tail });
        this.reset();
      }
      return;
    }
    if (!complete) {
      // The chunk's buffer may be reused by the stream only if we copy; Node hands out fresh
      // buffers per 'data' event, so keeping a view is safe.
      this.parts.push(piece);
      this.pending += piece.length;
      return;
    }
    let line: Buffer;
    if (this.parts.length === 0) line = piece;
    else {
      this.parts.push(piece);
      line = Buffer.concat(this.parts, this.pending + piece.length);
    }
    this.reset();
    // Tolerate CRLF and blank keep-alive lines.
    let end = line.length;
    if (end > 0 && line[end - 1] === 13) end--;
    if (end === 0) return;
    this.onLine(end === line.length ? line : line.subarray(0, end));
  }

  private reset(): void {
    this.parts = [];
    this.pending = 0;
    this.skipping = false;
    this.head = this.tail = Buffer.alloc(0);
  }
}

const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"jsonrpc":"2.0","id":…` or `{"id":…` at the very start of a message. */
const HEAD_ID = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + ID_VALUE);
/** `…"id":7}` closing the message (the TS SDKs write the id last). */
const TAIL_ID = new RegExp(String.raw`"id"\s*:\s*` + ID_VALUE + String.raw`\s*\}\s*$`);
/** A notification or request: its `"method"` comes before any `"result"`/`"error"` in the first bytes. */
const HEAD_METHOD = /^\s*\{[^]*?"(method|result|error)"\s*:/;

/**
 * What a discarded line was: the id it carried at its top level, when its first or last bytes show
 * one, and whether it looked like a response at all (a message whose first member named is
 * `method` is a request or notification, whose answer Ward does not owe).
 */
export function oversizeId(edges: { head: Buffer; tail: Buffer }): { id: string | number | null; response: boolean } {
  const head = edges.head.toString('utf8');
  const m = HEAD_ID.exec(head) ?? TAIL_ID.exec(edges.tail.toString('utf8'));
  let id: string | number | null = null;
  if (m) {
    try {
      const v = JSON.parse(m[1]!) as unknown;
      if (typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v))) id = v;
    } catch {
      id = null;
    }
  }
  return { id, response: HEAD_METHOD.exec(head)?.[1] !== 'method' };
}
