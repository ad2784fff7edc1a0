import { runCli } from './program.js';
import type { CliContext } from './context.js';
import type { CommandModule } from './commands/groups.js';
import { EXIT } from '../contract/exit-codes.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
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
    exitCode: EXIT.OK,
  };

  const code = await runCli(process.argv.slice(2), ctx, commands);
  process.exitCode = code;
}
