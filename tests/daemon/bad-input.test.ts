import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSegment, encodeRecord } from '../../src/daemon/journal.js';
import { call, evalBody, startDaemon, workdir, type DaemonChild } from './helpers.js';

let d: DaemonChild;
let port: number;

beforeAll(async () => {
  const w = workdir();
  d = await startDaemon(['--policy', w.policy, '--headers-timeout-ms', '1000', '--request-timeout-ms', '3000'], { cwd: w.dir });
  port = Number(new URL(d.url).port);
}, 20_000);

afterAll(async () => {
  expect(await d.stop()).toBe(0);
});

function socket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

/** Everything the server sends until it closes the connection (or `ms` passes). */
function readAll(s: Socket, ms = 5000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve({ text, closed: false }), ms);
    s.on('data', (b: Buffer) => (text += b.toString()));
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    s.on('error', () => undefined);
  });
}

/** A well-behaved client deciding in a loop while `during` runs; returns its statuses. */
async function meanwhile(during: () => Promise<void>): Promise<number[]> {
  let done = false;
  const statuses: number[] = [];
  const loop = (async () => {
    while (!done) statuses.push((await call(d.url, '/v1/gate/eval', { body: evalBody('read-report') })).status);
  })();
  await during();
  done = true;
  await loop;
  return statuses;
}

describe('bad input is refused while other clients keep getting answers', () => {
  it('slowloris: headers sent too slowly are cut off after the headers timeout', async () => {
    const statuses = await meanwhile(async () => {
      const s = await socket();
      const result = readAll(s, 6000);
      s.write('POST /v1/gate/eval HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const drip = setInterval(() => s.writable && s.write('X-Slow: 1\r\n'), 300);
      const { text, closed } = await result;
      clearInterval(drip);
      expect(closed).toBe(true);
      expect(text).toMatch(/^HTTP\/1\.1 408/);
    });
    expect(statuses.length).toBeGreaterThan(5);
    expect(statuses.every((s) => s === 200)).toBe(true);
  }, 20_000);

  it('oversized bodies: 413 from Content-Length at once, and from a chunked body while reading', async () => {
    const statuses = await meanwhile(async () => {
      const declared = await call(d.url, '/v1/gate/eval', { raw: Buffer.alloc(2 * 1024 * 1024, 0x20), headers: { 'content-type': 'application/json' } });
      expect(declared.status).toBe(413);
      expect(declared.json.error).toContain('larger than 1048576 bytes');
      const s = await socket();
      const result = readAll(s);
      s.write('POST /v1/gate/eval HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      for (let i = 0; i < 20 && s.writable; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`);
      const { text } = await result;
      expect(text).toMatch(/^HTTP\/1\.1 413/);
    });
    expect(statuses.every((s) => s === 200)).toBe(true);
  }, 20_000);

  it('invalid JSON, wrong content type, unknown fields, path traversal and malformed requests', async () => {
    const statuses = await meanwhile(async () => {
      expect((await call(d.url, '/v1/gate/eval', { raw: '{"intent": {', headers: { 'content-type': 'application/json' } })).status).toBe(400);
      expect((await call(d.url, '/v1/gate/eval', { raw: '', headers: { 'content-type': 'application/json' } })).status).toBe(400);
      expect((await call(d.url, '/v1/gate/eval', { raw: '[]', headers: { 'content-type': 'application/json' } })).status).toBe(400);
      expect((await call(d.url, '/v1/gate/eval', { raw: JSON.stringify(evalBody('read-report')), headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
      expect((await call(d.url, '/v1/gate/eval', { raw: JSON.stringify(evalBody('read-report')) })).status).toBe(415);
      expect((await call(d.url, '/v1/trace/verify', { body: { trace: {}, extra: true } })).status).toBe(400);
      expect((await call(d.url, '/v1/packs/diff', { body: { left: 'a', right: 'b', force: true } })).status).toBe(400);
      for (const path of ['/v1/traces/..%2f..%2f..%2fetc%2fpasswd', '/v1/packs/..%5c..%5cwindows', '/v1/packs/%2e%2e%2f%2e%2e/download', '/v1/traces/ab%00cd']) {
        const r = await call(d.url, path);
        expect([400, 404]).toContain(r.status);
        expect(r.text).not.toContain('root:');
      }
      // A raw request line with dot segments (no client-side normalization).
      const s = await socket();
      const result = readAll(s, 2000);
      s.write('GET /v1/packs/../../../../etc/passwd/download HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      const { text } = await result;
      expect(text).toMatch(/^HTTP\/1\.1 400/);
      expect(text).not.toContain('root:');
      const bad = await socket();
      const badResult = readAll(bad, 2000);
      bad.write('THIS IS NOT HTTP\r\n\r\n');
      expect((await badResult).text).toMatch(/^HTTP\/1\.1 400/);
    });
    expect(statuses.every((s) => s === 200)).toBe(true);
    const m = await call(d.url, '/metrics');
    expect(m.text).toMatch(/ward_http_rejected_total\{reason="timeout"\} [1-9]/);
    expect(m.text).toMatch(/ward_http_rejected_total\{reason="body_too_large"\} [1-9]/);
    expect(m.text).toMatch(/ward_http_rejected_total\{reason="content_type"\} [1-9]/);
  }, 20_000);
});

describe('journal framing', () => {
  it('keeps intact records, stops at a torn tail, and treats preallocated zeros as the end', () => {
    const a = encodeRecord({ kind: 'trace', bytes: Buffer.from('{"a":1}') });
    const b = encodeRecord({ kind: 'capture', bytes: Buffer.from('{"b":2}') });
    expect(decodeSegment(Buffer.concat([a, b, Buffer.alloc(64)]))).toEqual({ records: [{ kind: 'trace', bytes: Buffer.from('{"a":1}') }, { kind: 'capture', bytes: Buffer.from('{"b":2}') }], torn: false });
    const torn = decodeSegment(Buffer.concat([a, b.subarray(0, b.length - 2)]));
    expect(torn.records).toHaveLength(1);
    expect(torn.torn).toBe(true);
    const flipped = Buffer.concat([a, b]);
    flipped[flipped.length - 1] ^= 1;
    expect(decodeSegment(flipped)).toMatchObject({ torn: true });
    expect(decodeSegment(flipped).records).toHaveLength(1);
  });
});
