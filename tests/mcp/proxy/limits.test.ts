// Availability (issue 27, finding 7): a request over --max-call-bytes / --max-call-keys is refused
// with -32064 naming the limit and never reaches the server, over stdio and --listen; a server
// answer over --max-message-bytes is dropped and its request still answered (never left waiting).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, tempDir, WARD } from '../../cli/run.js';
import { countEntries, limitExceeded } from '../../../src/mcp/proxy/limits.js';
import { oversizeId } from '../../../src/mcp/proxy/framing.js';
import { boundedEvents, boundedFetch } from '../../../src/mcp/proxy/upstream-bound.js';
import { RawProxy, startListening, stopListeners } from './helpers.js';

const HOSTILE = join(REPO, 'tests', 'mcp', 'proxy', 'hostile-server.mjs');

function setup() {
  const cwd = tempDir('ward-limits-');
  writeFileSync(join(cwd, 'policy.yaml'), 'default_verdict: allow\nrules: []\n');
  const log = join(cwd, 'server.log');
  writeFileSync(log, '');
  const received = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { cwd, log, received, ward: ['--policy', 'policy.yaml', '--state-dir', join(cwd, '.ward')] };
}

const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
const errorOf = (m: Record<string, unknown>) => m['error'] as { code: number; message: string } | undefined;

describe('request limits', () => {
  afterEach(() => stopListeners());

  it('countEntries counts members and elements at any depth and stops past the bound', () => {
    expect(countEntries({ a: 1, b: [1, 2, { c: 3 }], d: { e: {} } }, 100)).toBe(8); // a b d, three elements, c, e
    expect(countEntries(keys(100_000), 10)).toBe(11);
    expect(countEntries('text', 0)).toBe(0);
    expect(limitExceeded({ arguments: keys(10) }, 100, { maxBytes: 99, maxKeys: 100 })).toContain('--max-call-bytes');
    expect(limitExceeded({ arguments: keys(10) }, 100, { maxBytes: 100, maxKeys: 10 })).toContain('--max-call-keys');
    expect(limitExceeded({ arguments: keys(9) }, 100, { maxBytes: 100, maxKeys: 10 })).toBeUndefined();
  });

  it('stdio: over --max-call-keys or --max-call-bytes is -32064 naming the flag, not forwarded; under them it is decided', async () => {
    const { cwd, log, received, ward } = setup();
    const proxy = new RawProxy([...ward, '--max-call-keys', '100', '--max-call-bytes', '65536'], [process.execPath, HOSTILE], cwd, { HOSTILE_LOG: log });
    await proxy.initialize();
    proxy.call(1, 'echo', { text: 'x', ...keys(100) }); // 101 keys in arguments, 103 in params
    proxy.call(2, 'echo', { text: 'y'.repeat(70_000) });
    proxy.send({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'file:///x', pad: keys(200) } });
    proxy.call(4, 'echo', { text: 'fits', ...keys(90) });
    const [r1, r2, r3, r4] = [await proxy.response(1), await proxy.response(2), await proxy.response(3), await proxy.response(4)];
    expect(errorOf(r1)?.code).toBe(-32064);
    expect(errorOf(r1)?.message).toContain('--max-call-keys');
    expect(errorOf(r2)?.code).toBe(-32064);
    expect(errorOf(r2)?.message).toContain('--max-call-bytes');
    expect(errorOf(r3)?.code).toBe(-32064);
    expect(JSON.stringify(r4['result'])).toContain('echo: fits');
    proxy.end();
    await proxy.exited;
    expect(received().filter((m) => m['id'] !== 0 && m['method'] !== 'notifications/initialized').map((m) => m['id'])).toEqual([4]);
  });

  it('stdio: a server answer over --max-message-bytes is dropped and its request answered with an error (id first or last)', async () => {
    const { cwd, log, ward } = setup();
    const proxy = new RawProxy([...ward, '--max-message-bytes', '100000'], [process.execPath, HOSTILE], cwd, { HOSTILE_LOG: log });
    await proxy.initialize();
    proxy.call(1, 'huge', { bytes: 300_000 });
    proxy.call(2, 'huge', { bytes: 300_000, idLast: true });
    const [r1, r2] = [await proxy.response(1), await proxy.response(2)];
    expect(errorOf(r1)?.code).toBe(-32603);
    expect(errorOf(r1)?.message).toContain('--max-message-bytes');
    expect(errorOf(r2)?.code).toBe(-32603);
    // The session goes on.
    proxy.call(3, 'echo', { text: 'after' });
    expect(JSON.stringify((await proxy.response(3))['result'])).toContain('echo: after');
    proxy.end();
    await proxy.exited;
  });

  it('--upstream-url bound: SSE events over the limit are dropped and reported with their id, whatever the chunking and line endings', async () => {
    const small = (id: number) => `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"ok":true}}`;
    const big = (id: number, eol: string) => `event: message${eol}data: {"jsonrpc":"2.0","result":{"t":"${'x'.repeat(5000)}"},"id":${id}}`;
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = [small(1), big(2, eol), small(3), `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"d":"${'y'.repeat(5000)}"}}`, small(4)].join(eol + eol) + eol + eol;
      for (const size of [1, 7, 64, 4096, text.length]) {
        const reports: [number, string | number | null, boolean][] = [];
        const bytes = Buffer.from(text);
        const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
        const out = await new Response(new Blob(chunks).stream().pipeThrough(boundedEvents(1000, [9], (b, id, response) => reports.push([b, id, response])))).text();
        const events = out.split('\n\n').filter(Boolean);
        expect(events, `${JSON.stringify(eol)} ${size}`).toEqual([small(1), small(3), small(4)]);
        expect(reports.map(([, id, response]) => [id, response])).toEqual([
          [2, true],
          [null, false],
        ]);
        expect(reports[0]![0]).toBeGreaterThan(5000);
      }
    }
  });

  it('--upstream-url bound: a JSON body over the limit is read no further, answered by the POST\'s request id; one under it is as sent', async () => {
    const reports: [number, string | number | null, boolean][] = [];
    const body = (n: number) => JSON.stringify({ jsonrpc: '2.0', result: { t: 'x'.repeat(n) }, id: 'req-7' });
    // In 4 KiB chunks, as a socket delivers it.
    const chunked = (text: string) => {
      const b = Buffer.from(text);
      return new Blob(Array.from({ length: Math.ceil(b.length / 4096) }, (_, i) => b.subarray(i * 4096, (i + 1) * 4096))).stream();
    };
    const fake = async (_input: string | URL, init?: Record<string, unknown>) =>
      new Response(chunked(String(init?.['body']).includes('"big"') ? body(200_000) : body(10)), { headers: { 'content-type': 'application/json', 'mcp-session-id': 's1' } });
    const f = boundedFetch(fake, 1000, (b, id, response) => reports.push([b, id, response]));
    const post = (name: string) => f('http://x/mcp', { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 'req-7', method: 'tools/call', params: { name } }) }) as Promise<Response>;
    const big = await post('big');
    expect(await big.json()).toEqual([]);
    expect(big.headers.get('mcp-session-id')).toBe('s1');
    expect(reports).toEqual([[expect.any(Number), 'req-7', true]]);
    expect(reports[0]![0]).toBeGreaterThan(1000);
    expect(reports[0]![0]).toBeLessThan(200_000);
    expect(await (await post('small')).text()).toBe(body(10));
    expect(reports).toHaveLength(1);
  });

  it('oversizeId finds a top-level id at either end, and tells a notification from an answer', () => {
    const edges = (head: string, tail: string) => ({ head: Buffer.from(head), tail: Buffer.from(tail) });
    expect(oversizeId(edges('{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"xx', 'xx"}]}}'))).toEqual({ id: 7, response: true });
    expect(oversizeId(edges('{"result":{"content":[{"text":"xx', 'xx"}]},"jsonrpc":"2.0","id":"a-1"}'))).toEqual({ id: 'a-1', response: true });
    expect(oversizeId(edges('{"result":{"x":"xx', 'xx","id":5}}}'))).toEqual({ id: null, response: true });
    expect(oversizeId(edges('{"method":"notifications/progress","params":{"x":"', 'x"}}'))).toEqual({ id: null, response: false });
  });

  it('--listen: a 250k-key tools/call is refused at once with -32064 and never reaches the server', async () => {
    const { cwd, log, received, ward } = setup();
    const p = startListening(cwd, [WARD, 'mcp', 'proxy', ...ward, '--listen', '127.0.0.1:0', '--', process.execPath, HOSTILE], { HOSTILE_LOG: log });
    // Bodies built before the session starts: building 250k keys under load takes long enough for
    // the server to close the idle keep-alive connection the next POST would reuse (EPIPE).
    const bigBody = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: keys(250_000) } });
    const middleBody = JSON.stringify({ method: 'tools/call', params: { name: 'echo', arguments: keys(250_000) }, id: 8, jsonrpc: '2.0' });
    const url = await p.url;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = async (msg: unknown) => {
      const res = await fetch(url, { method: 'POST', headers, body: typeof msg === 'string' ? msg : JSON.stringify(msg) });
      const sid = res.headers.get('mcp-session-id');
      if (sid) headers['mcp-session-id'] = sid;
      return { status: res.status, text: await res.text() };
    };
    await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const big = await post(bigBody);
    expect(big.status).toBe(200);
    const reply = JSON.parse(big.text) as Record<string, unknown>;
    expect(reply['id']).toBe(5);
    expect(errorOf(reply)?.code).toBe(-32064);
    expect(errorOf(reply)?.message).toContain('--max-call-bytes');
    // Neither end names the id: the POST itself is refused (413), so the client's send fails at once.
    const middle = await post(middleBody);
    expect(middle.status).toBe(413);
    expect(errorOf(JSON.parse(middle.text) as Record<string, unknown>)?.code).toBe(-32064);
    const wide = await post({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'echo', arguments: keys(5000) } });
    expect(errorOf(JSON.parse(wide.text) as Record<string, unknown>)?.message).toContain('--max-call-keys');
    const ok = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'fine' } } });
    expect(ok.text).toContain('echo: fine');
    expect(received().filter((m) => m['method'] === 'tools/call').map((m) => m['id'])).toEqual([7]);
  });
});
