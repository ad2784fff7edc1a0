#!/usr/bin/env node
// A minimal MCP server over stdio with one tool, `fetch_url {url}`, that really fetches the URL
// (the effect a block must prevent) and returns the body. No SDK, newline-delimited JSON-RPC.
import { serveLines } from '../../support/serve-lines.mjs';

const reply = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const tools = [{ name: 'fetch_url', description: 'Fetch a URL.', inputSchema: { type: 'object', properties: { url: { type: 'string' } } } }];

async function handle(line) {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (!msg || typeof msg.method !== 'string' || !('id' in msg)) return;
  if (msg.method === 'initialize') {
    return reply({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fetch', version: '1.0.0' } } });
  }
  if (msg.method === 'tools/list') return reply({ jsonrpc: '2.0', id: msg.id, result: { tools } });
  if (msg.method === 'tools/call' && msg.params?.name === 'fetch_url') {
    try {
      const text = await (await fetch(String(msg.params.arguments?.url))).text();
      return reply({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }] } });
    } catch (err) {
      return reply({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: String(err) }], isError: true } });
    }
  }
  reply({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'method not found' } });
}

serveLines((line) => void handle(line));
