import { createWriteStream, type WriteStream } from 'node:fs';
import type { Writable } from 'node:stream';

/**
 * Decision-log lines appended to a file (or stdout) without ever waiting for the disk: a line is
 * queued on the stream, and when more than `maxBytes` are already waiting it is dropped and
 * counted instead — a slow disk or a stuck pipe never holds a decision (the signed trace, not this
 * log, is the evidence).
 */
export class DecisionLog {
  private dropped = 0;
  private failed: Error | undefined;

  private constructor(
    private readonly out: Writable,
    private readonly ownsStream: boolean,
    private readonly maxBytes: number,
  ) {
    out.on('error', (err: Error) => {
      this.failed ??= err;
    });
  }

  static open(target: string, maxBytes: number): DecisionLog {
    if (target === '-') return new DecisionLog(process.stdout, false, maxBytes);
    const stream: WriteStream = createWriteStream(target, { flags: 'a', mode: 0o600 });
    return new DecisionLog(stream, true, maxBytes);
  }

  write(line: string): void {
    if (this.failed || this.out.writableLength > this.maxBytes) {
      this.dropped++;
      return;
    }
    this.out.write(line + '\n');
  }

  /** Lines not written: queue over its bound, or the file failed. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** The file ends; stdout stays open, once what was written to it has been handed on. */
  close(): Promise<void> {
    if (!this.ownsStream) return new Promise((resolve) => this.out.write('', () => resolve()));
    return new Promise((resolve) => this.out.end(resolve));
  }
}
