#!/usr/bin/env node
// The floor for a stdio MCP proxy written in Node: a bare byte relay. It starts the server command
// given after its own path and pipes bytes both ways, parsing, deciding and recording nothing.
// `npm run bench -- mcp` measures it beside `ward mcp proxy` in the same run (issue 17, target 3).
//
//   node bench/relay.mjs -- node fixtures/mcp/tiny-server.mjs
import { spawn } from 'node:child_process';

const argv = process.argv.slice(2);
const [command, ...args] = argv[0] === '--' ? argv.slice(1) : argv;
if (!command) {
  process.stderr.write('usage: relay.mjs [--] <command> [args...]\n');
  process.exit(2);
}
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on('error', () => undefined); // the server went away: its exit ends the relay
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
