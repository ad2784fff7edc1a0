// Strict JSON parsing (issue 13 §4): every JSON input (intents, envelopes, daemon bodies, signed
// artifacts) goes through parseJsonText, which refuses duplicate member names. Baseline: bare
// JSON.parse. "before" rows are the two parsers it replaced, copied here so they run in the same
// process: the lenient parseJsonText (JSON.parse + the lone-surrogate walk, which the daemon used
// for request bodies) and parseStrictJson's old duplicate scan (a set of names per object).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJsonText } from '../dist/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function wellFormedBefore(value) {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormedBefore(value[i]);
    return value;
  }
  if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) value[key] = wellFormedBefore(value[key]);
  return value;
}
const lenientBefore = (text) => wellFormedBefore(JSON.parse(text));

function keySetScanBefore(text) {
  const stack = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const top = stack[stack.length - 1];
    if (ch === '{' || ch === '[') stack.push({ object: ch === '{', keys: new Set(), expectKey: ch === '{' });
    else if (ch === '}' || ch === ']') stack.pop();
    else if (ch === ',' && top?.object) top.expectKey = true;
    else if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.object && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1));
        if (top.keys.has(key)) throw new SyntaxError(`duplicate key ${JSON.stringify(key)}`);
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end;
    }
  }
}
const strictBefore = (text) => {
  const value = lenientBefore(text);
  keySetScanBefore(text);
  return value;
};

export default async function jsonBench(h) {
  const intent = JSON.parse(readFileSync(path.join(repo, 'examples/quickstart/read-report.json'), 'utf8'));
  const body = JSON.stringify({ intent, simulate: false });
  const envelope = readFileSync(path.join(repo, 'fixtures/envelopes/v7-envelope.json'), 'utf8');
  const large = JSON.stringify({
    context_set_id: 'bench',
    records: Array.from({ length: 400 }, (_, i) => ({
      ref_id: `r${i}`,
      source_type: 'doc',
      source_locator: `docs://x/${i}`,
      query_digest: 'a'.repeat(64),
      content_digest: 'b'.repeat(64),
      retrieved_at: '2026-03-12T11:59:55Z',
      redaction_mode: 'hashes',
      immutability: 'immutable',
      retrieval_params: { q: 'x:y "quoted"', top_k: i },
    })),
  });
  // What `ward mcp proxy` parses strictly for every client message (peer.ts decodeLine): a
  // tools/call line, without and with colons inside its strings (a URL argument, a progress token).
  const toolCall = JSON.stringify({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'x-12-0.25976348323940024' } }, jsonrpc: '2.0', id: 12 });
  const toolCallUrl = JSON.stringify({
    method: 'tools/call',
    params: { name: 'fetch', arguments: { url: 'https://example.com/docs/page?q=a:b' }, _meta: { progressToken: 'tok:12' } },
    jsonrpc: '2.0',
    id: 13,
  });
  for (const text of [body, envelope, large, toolCall, toolCallUrl]) {
    if (JSON.stringify(parseJsonText(text)) !== JSON.stringify(strictBefore(text))) throw new Error('parsers disagree');
  }
  let refused = false;
  try {
    parseJsonText('{"simulate":false,"simulate":true}');
  } catch {
    refused = true;
  }
  if (!refused) throw new Error('parseJsonText must refuse duplicate keys');

  for (const [title, text] of [
    [`daemon /v1/gate/eval body (${body.length} bytes)`, body],
    [`V7 context envelope (${envelope.length} bytes)`, envelope],
    [`400-record envelope (${large.length} bytes)`, large],
    [`MCP tools/call line (${toolCall.length} bytes)`, toolCall],
    [`MCP tools/call line, colons in strings (${toolCallUrl.length} bytes)`, toolCallUrl],
  ]) {
    await h.suite(
      `JSON input · ${title}`,
      [
        ['JSON.parse', () => JSON.parse(text)],
        ['before: lenient parseJsonText (no duplicate check)', () => lenientBefore(text)],
        ['before: parse + per-object key-set scan', () => strictBefore(text)],
        ['ward parseJsonText (strict)', () => parseJsonText(text)],
      ],
      { baseline: 'JSON.parse' },
    );
  }
}
