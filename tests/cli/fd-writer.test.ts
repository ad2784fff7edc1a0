import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fdWriter } from '../../src/cli/main.js';
import { tempDir } from './run.js';

// The CLI writes its output with blocking writes to fd 1 and 2 instead of creating process.stdout
// (src/cli/main.ts). A descriptor that is non-blocking and full answers EAGAIN: what was not
// written then goes through a stream, in order, and nothing is lost.
describe('fdWriter', () => {
  it('a full non-blocking pipe: the rest goes through the stream, every byte in order', async () => {
    const fifo = join(tempDir('ward-fd-'), 'out');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    let socket: Socket | undefined;
    const out = fdWriter(writer, () => (socket = new Socket({ fd: writer, readable: false, writable: true })));
    // Far more than a pipe holds (64 KiB on Linux): the first write fills it and gets EAGAIN.
    const lines = Array.from({ length: 4000 }, (_, i) => `line ${String(i).padStart(5, '0')} ${'x'.repeat(40)}\n`);
    for (const line of lines) out.write(line);
    expect(socket).toBeDefined();
    const chunks: Buffer[] = [];
    const buf = Buffer.alloc(65536);
    const until = Date.now() + 10_000;
    let total = 0;
    const expected = Buffer.byteLength(lines.join(''));
    while (total < expected && Date.now() < until) {
      let n = 0;
      try {
        n = readSync(reader, buf, 0, buf.length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      }
      if (n > 0) {
        chunks.push(Buffer.from(buf.subarray(0, n)));
        total += n;
      } else await new Promise((r) => setTimeout(r, 2));
    }
    await out.flushed();
    socket!.destroy();
    closeSync(reader);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(lines.join(''));
  });

  it('a closed reader (EPIPE) is not an error: later output is dropped', () => {
    const fifo = join(tempDir('ward-fd-'), 'out');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    closeSync(reader);
    const out = fdWriter(writer, () => {
      throw new Error('no stream for EPIPE');
    });
    expect(() => out.write('answer\n')).not.toThrow();
    expect(() => out.write('more\n')).not.toThrow();
    closeSync(writer);
  });
});
