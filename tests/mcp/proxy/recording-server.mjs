#!/usr/bin/env node
// A minimal MCP server over stdio that records every line it receives, byte for byte, to the file
// named by $RECORDING_SERVER_LOG (one line per received message, appended and flushed before the
// reply). It has no SDK on purpose: the SDK would reject or reshape odd input (notifications with a
// tool-call method, misspelled methods, 1e400) before a test could see that it arrived.
//
// It answers initialize, tools/list (tools `write_file` {path, content} and `echo` {text}) and any
// request for `write_file` / `echo` whatever the method's spelling (`echo` with `delay_ms` answers
// that much later, its answer's time in the result's `_meta.answered_at_ms`); `write_file` really writes the
// file (the side effect a refusal must prevent), resolved against the server's cwd.
import { appendFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { serveLines } from '../../support/serve-lines.mjs';

const log = process.env.RECORDING_SERVER_LOG;
if (!log) {
  process.stderr.write('RECORDING_SERVER_LOG is not set\n');
  process.exit(2);
}

const reply = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const tools = [
  { name: 'write_file', description: 'Write a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: {} } } },
  { name: 'echo', description: 'Echo.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
];

function handle(line) {
  appendFileSync(log, line + '\n');
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg) || typeof msg.method !== 'string') return;
  const hasId = Object.prototype.hasOwnProperty.call(msg, 'id');
  if (msg.method === 'initialize' && hasId) {
    return reply({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'recording', version: '1.0.0' } } });
  }
  if (msg.method === 'tools/list' && hasId) return reply({ jsonrpc: '2.0', id: msg.id, result: { tools } });
  const name = msg.params?.name;
  const args = msg.params?.arguments ?? {};
  if (name === 'write_file' && typeof args.path === 'string') {
    try {
      writeFileSync(resolve(args.path), typeof args.content === 'string' ? args.content : JSON.stringify(args.content) ?? '');
    } catch (err) {
      if (hasId) reply({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: String(err) }], isError: true } });
      return;
    }
    if (hasId) reply({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `wrote ${args.path}` }] } });
    return;
  }
  if (name === 'echo') {
    if (!hasId) return;
    const result = { content: [{ type: 'text', text: `echo: ${String(args.text)}` }] };
    // `delay_ms`: answer that much later, saying when (epoch ms) in the result's _meta.
    if (typeof args.delay_ms !== 'number') return reply({ jsonrpc: '2.0', id: msg.id, result });
    setTimeout(() => reply({ jsonrpc: '2.0', id: msg.id, result: { ...result, _meta: { answered_at_ms: performance.timeOrigin + performance.now() } } }), args.delay_ms);
    return;
  }
  if (hasId) reply({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
}

serveLines(handle);
