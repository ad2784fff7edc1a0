import { ERROR_CODES, WardError } from '../../errors.js';

/**
 * Newline-delimited JSON framing, the MCP stdio binding: one message per line, no embedded
 * newlines. Lines are handed over as the bytes received (without the newline) so they can be
 * forwarded unchanged; chunks of a long line are kept in a list and joined once, so a 10 MB result
 * costs one copy, not one per chunk. A line longer than `maxLineBytes` is discarded (its bytes are
 * dropped as they arrive, memory stays bounded) and reported once through `onOversize`.
 */
export class LineReader {
  private parts: Buffer[] = [];
  private pending = 0;
  private skipping = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversize: (bytes: number) => void,
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
    if (this.skipping) {
      this.pending += piece.length;
      if (complete) {
        this.onOversize(this.pending);
        this.reset();
      }
      return;
    }
    if (this.pending + piece.length > this.maxLineBytes) {
      this.pending += piece.length;
      this.parts = [];
      this.skipping = true;
      if (complete) {
        this.onOversize(this.pending);
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
  }
}
