#!/usr/bin/env node
// The floor for a stdio MCP proxy written in Node: a bare byte relay. It starts the server command
// given after its own path and pipes bytes both ways, parsing, deciding and recording nothing.
// `npm run bench -- mcp` measures it beside `ward mcp proxy` in the same run (issue 17, target 3).
//
//   node bench/relay.mjs [--sign <journal file>] -- node fixtures/mcp/tiny-server.mjs
//
// With --sign, the floor of Ward's forwarding rule (a call is forwarded only once it is decided,
// its trace signed and the trace written): every client line that is a `tools/call` is parsed, its
// bytes hashed and the hash signed with Ed25519, the signature appended to the journal file with
// one synchronous write, and only then the line is forwarded. No policy, no intent, no trace
// record: what any proxy that keeps the rule pays at the least, in Node.
import { spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { openSync, writeSync } from 'node:fs';

let argv = process.argv.slice(2);
let journal;
if (argv[0] === '--sign') {
  journal = openSync(argv[1], 'a', 0o600);
  argv = argv.slice(2);
}
const [command, ...args] = argv[0] === '--' ? argv.slice(1) : argv;
if (!command) {
  process.stderr.write('usage: relay.mjs [--sign <journal file>] [--] <command> [args...]\n');
  process.exit(2);
}
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.stdout.pipe(process.stdout);
child.stdin.on('error', () => undefined); // the server went away: its exit ends the relay
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
if (journal === undefined) process.stdin.pipe(child.stdin);
else {
  const { privateKey } = generateKeyPairSync('ed25519');
  let pending = [];
  process.stdin.on('data', (chunk) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, nl + 1));
      const line = pending.length === 1 ? pending[0] : Buffer.concat(pending);
      pending = [];
      start = nl + 1;
      if (JSON.parse(line.toString('utf8')).method === 'tools/call') {
        const signature = sign(null, createHash('sha256').update(line).digest(), privateKey);
        writeSync(journal, Buffer.concat([signature, Buffer.from('\n')]));
      }
      child.stdin.write(line);
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  });
  process.stdin.on('end', () => child.stdin.end());
}
