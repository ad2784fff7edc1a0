import { readSync, writeSync } from 'node:fs';
import { abandonedHostLookups } from '../decision/pending-lookups.js';
import { runCli } from './program.js';
import type { CliContext } from './context.js';
import type { CommandModule } from './commands/groups.js';
import { EXIT } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { MAX_INPUT_BYTES } from './input.js';

/**
 * All of standard input, up to MAX_INPUT_BYTES: more is an error as soon as it arrives, so a
 * runaway writer (a hook host piping a huge event) costs neither the memory nor the wait. Read
 * with blocking reads first: creating `process.stdin` (a socket or stream over the pipe) costs a
 * few milliseconds, which every hook call would pay. If stdin is non-blocking (EAGAIN, as when
 * inherited from a process that made it so), what was read is kept and the rest is read as a stream.
 */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  const keep = (chunk: Buffer) => {
    total += chunk.length;
    if (total > MAX_INPUT_BYTES) throw new WardError(ERROR_CODES.USAGE, `standard input is over the ${MAX_INPUT_BYTES / 1048576} MiB input limit`);
    chunks.push(chunk);
  };
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buffer, 0, buffer.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EOF') break;
      if (code !== 'EAGAIN') throw err;
      for await (const chunk of process.stdin) keep(chunk as Buffer);
      break;
    }
    if (n === 0) break;
    keep(Buffer.from(buffer.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Run the CLI as this process: arguments from `process.argv`, output to stdout and stderr, and the
 * exit code in `process.exitCode`. bin/ward.js calls it (through a fast bundle for `gate`, `hook`
 * and `--version`, see scripts/build-cli.js); `commands` as in `runCli`.
 */
export async function main(commands?: readonly CommandModule[]): Promise<void> {
  const stdout = fdWriter(1, () => process.stdout);
  const stderr = fdWriter(2, () => process.stderr);
  const ctx: CliContext = {
    argv: process.argv.slice(1),
    cwd: process.cwd(),
    env: process.env,
    stdout: stdout.write,
    stderr: stderr.write,
    readStdin,
    // Read only by the commands that ask: process.stdout loads tty and net.
    get isTTY() {
      return Boolean(process.stdout.isTTY);
    },
    get stderrIsTTY() {
      return Boolean(process.stderr.isTTY);
    },
    exitCode: EXIT.OK,
  };

  const code = await runCli(process.argv.slice(2), ctx, commands);
  process.exitCode = code;
  // The decision is made and written; a host-name lookup it gave up on would hold the process
  // until the system resolver times out. Exit once the output is flushed instead.
  if (abandonedHostLookups() > 0) {
    await Promise.all([stdout.flushed(), stderr.flushed()]);
    process.exit(code);
  }
}

/**
 * Output to file descriptor 1 or 2 with blocking writes, as process.stdout and process.stderr do
 * for files, pipes and terminals on POSIX, without creating them: for a pipe that is a socket
 * (tty, net, stream machinery), which every hook call and `gate eval` would pay (~2 ms). If the
 * descriptor is non-blocking (EAGAIN, as when inherited from a process that made it so), the rest
 * of the output goes through the stream, in order. A reader that stops early (`ward --help | head`)
 * closes the pipe; that is not an error of ours: the decision and its trace are already done by
 * the time output is written.
 */
export function fdWriter(fd: number, stream: () => NodeJS.WritableStream): { write: (text: string) => void; flushed: () => Promise<void> } {
  let fallback: NodeJS.WritableStream | undefined;
  let closed = false;
  const write = (text: string) => {
    if (closed || text === '') return;
    if (fallback) {
      fallback.write(text);
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // EBADF: no descriptor at all, where process.stdout would have been a black hole.
      if (code === 'EPIPE' || code === 'EBADF') {
        closed = true;
        return;
      }
      if (code !== 'EAGAIN') throw err;
      fallback = stream();
      fallback.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EPIPE') throw e;
      });
      fallback.write(bytes.subarray(offset));
    }
  };
  const flushed = () => new Promise<void>((resolve) => (fallback ? fallback.write('', () => resolve()) : resolve()));
  return { write, flushed };
}
