import { readSync } from 'node:fs';
import { abandonedHostLookups } from '../decision/pending-lookups.js';
import { runCli } from './program.js';
import type { CliContext } from './context.js';
import type { CommandModule } from './commands/groups.js';
import { EXIT } from '../contract/exit-codes.js';

/**
 * All of standard input. Read with blocking reads first: creating `process.stdin` (a socket or
 * stream over the pipe) costs a few milliseconds, which every hook call would pay. If stdin is
 * non-blocking (EAGAIN, as when inherited from a process that made it so), what was read is kept
 * and the rest is read as a stream.
 */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buffer, 0, buffer.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EOF') break;
      if (code !== 'EAGAIN') throw err;
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      break;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Run the CLI as this process: arguments from `process.argv`, output to stdout and stderr, and the
 * exit code in `process.exitCode`. bin/ward.js calls it (through a fast bundle for `gate`, `hook`
 * and `--version`, see scripts/build-cli.js); `commands` as in `runCli`.
 */
export async function main(commands?: readonly CommandModule[]): Promise<void> {
  // A reader that stops early (`ward --help | head`) closes the pipe; that is not an error of ours.
  // The decision and its trace are already done by the time output is written.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }

  const ctx: CliContext = {
    argv: process.argv.slice(1),
    cwd: process.cwd(),
    env: process.env,
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    readStdin,
    isTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    exitCode: EXIT.OK,
  };

  const code = await runCli(process.argv.slice(2), ctx, commands);
  process.exitCode = code;
  // The decision is made and written; a host-name lookup it gave up on would hold the process
  // until the system resolver times out. Exit once the output is flushed instead.
  if (abandonedHostLookups() > 0) {
    await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => s.write('', () => resolve()))));
    process.exit(code);
  }
}
