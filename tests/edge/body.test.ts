import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { mediaType, parseJsonBody, readBody, requireMediaType } from '../../src/edge/body.js';
import { HttpError } from '../../src/edge/http-error.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A server whose handler reads the body with `limit` and reports what readBody did. */
async function harness(limit: number): Promise<{ port: number; outcome: Promise<{ body?: string; code?: string; status?: number }> }> {
  let report!: (v: { body?: string; code?: string; status?: number }) => void;
  const outcome = new Promise<{ body?: string; code?: string; status?: number }>((r) => (report = r));
  const server = createServer((req, res) => {
    readBody(req, limit).then(
      (b) => {
        report({ body: b.toString('utf8') });
        res.end('ok');
      },
      (err: HttpError) => {
        report({ code: err.code, status: err.status });
        if (!res.headersSent) {
          res.writeHead(err.status, err.options.headers ?? {});
          res.end(err.message);
        }
      },
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, outcome };
}

function raw(port: number, text: string, closeAfterMs?: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(text);
      if (closeAfterMs !== undefined) setTimeout(() => s.destroy(), closeAfterMs);
    });
    let got = '';
    s.on('data', (b) => (got += b.toString()));
    s.on('close', () => resolve(got));
    s.on('error', () => undefined);
  });
}

describe('readBody', () => {
  it('reads a body within the limit', async () => {
    const h = await harness(16);
    const reply = raw(h.port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello');
    expect(await h.outcome).toEqual({ body: 'hello' });
    expect(await reply).toMatch(/^HTTP\/1\.1 200/);
  });

  it('refuses a declared Content-Length over the limit at once, with 413 and connection: close', async () => {
    const h = await harness(16);
    // Only the headers are sent: the answer must not wait for the body.
    const reply = raw(h.port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
    expect(await h.outcome).toEqual({ code: 'body_too_large', status: 413 });
    const text = await reply;
    expect(text).toMatch(/^HTTP\/1\.1 413/);
    expect(text.toLowerCase()).toContain('connection: close');
  });

  it('refuses a chunked body once it passes the limit', async () => {
    const h = await harness(1024);
    const chunk = 'x'.repeat(600);
    const reply = raw(h.port, `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${(600).toString(16)}\r\n${chunk}\r\n${(600).toString(16)}\r\n${chunk}\r\n`);
    expect(await h.outcome).toEqual({ code: 'body_too_large', status: 413 });
    expect(await reply).toMatch(/^HTTP\/1\.1 413/);
  });

  it('a client that goes away mid-body is an aborted request, not a pending promise', async () => {
    const h = await harness(1024);
    void raw(h.port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly part', 50);
    expect(await h.outcome).toEqual({ code: 'aborted', status: 400 });
  });

  it('works through node:http clients too (Content-Length from the client)', async () => {
    const h = await harness(8);
    await new Promise<void>((resolve) => {
      const r = request({ port: h.port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': 'application/json' } }, (res: IncomingMessage) => {
        expect(res.statusCode).toBe(413);
        res.resume();
        res.on('end', resolve);
      });
      r.on('error', () => resolve());
      r.end('0123456789');
    });
    expect(await h.outcome).toEqual({ code: 'body_too_large', status: 413 });
  });
});

describe('parseJsonBody', () => {
  it('parses strict JSON and refuses a repeated key with its location', () => {
    expect(parseJsonBody(Buffer.from('{"a":[1,{"b":2}]}'), 'p: ')).toEqual({ a: [1, { b: 2 }] });
    let thrown: HttpError | undefined;
    try {
      parseJsonBody('{"a":{"b":1,"b":2}}', 'p: ');
    } catch (err) {
      thrown = err as HttpError;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect(thrown!.code).toBe('duplicate_key');
    expect(thrown!.message).toMatch(/^p: /);
    expect(thrown!.options.details).toMatchObject({ duplicate_key: 'b', duplicate_key_path: expect.stringMatching(/^\$\.a/) });
    expect(() => parseJsonBody('{', 'p: ')).toThrow(HttpError);
  });
});

describe('media types', () => {
  const req = (type?: string) => ({ headers: type === undefined ? {} : { 'content-type': type } }) as unknown as IncomingMessage;
  it('reads the media type without parameters and refuses others with 415', () => {
    expect(mediaType(req('Application/JSON; charset=utf-8'))).toBe('application/json');
    expect(mediaType(req())).toBe('');
    expect(() => requireMediaType(req('application/json'), ['application/json'])).not.toThrow();
    let thrown: HttpError | undefined;
    try {
      requireMediaType(req('text/plain'), ['application/json']);
    } catch (err) {
      thrown = err as HttpError;
    }
    expect(thrown?.status).toBe(415);
    expect(thrown?.code).toBe('content_type');
  });
});

describe('a refused body closes its connection without losing the 413', () => {
  it('half-closes after the answer (FIN, not a reset) while the client is still sending', async () => {
    const { port } = await harness(1024);
    const s = connect(port, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    let text = '';
    let error: string | undefined;
    const closed = new Promise<void>((resolve) => {
      s.on('data', (d: Buffer) => (text += d.toString('latin1')));
      s.on('error', (err: NodeJS.ErrnoException) => (error = err.code));
      s.on('close', () => resolve());
    });
    s.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    // Keep sending after the limit: the server must keep discarding rather than reset the connection.
    for (let i = 0; i < 64 && !s.destroyed; i++) {
      s.write(`${chunk.length.toString(16)}\r\n`);
      s.write(chunk);
      s.write('\r\n');
    }
    await new Promise((r) => setTimeout(r, 200));
    s.end();
    await closed;
    expect(text).toMatch(/^HTTP\/1\.1 413/);
    expect(error).toBeUndefined();
  });
});
