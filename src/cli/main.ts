import { runCli } from './program.js';
import type { CliContext } from './context.js';
import { EXIT } from '../contract/exit-codes.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
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

const code = await runCli(process.argv.slice(2), ctx);
process.exitCode = code;
