import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { BearerAuth, isLoopbackHost, LoopbackGuard } from '../../src/edge/guard.js';
import { HttpError } from '../../src/edge/http-error.js';
import { isWardError } from '../../src/errors.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('isLoopbackHost', () => {
  it('127.0.0.0/8, ::1 in any spelling, IPv4-mapped loopback and localhost are loopback', () => {
    for (const h of ['127.0.0.1', '127.255.3.4', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '[::ffff:127.0.0.1]', '::ffff:7f00:1', '::FFFF:127.1.2.3']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
  });

  it('everything else is not: all interfaces, other addresses, short forms, zone ids, look-alike names', () => {
    for (const h of ['', '0.0.0.0', '::', '[::]', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', '::127.0.0.1', '127.1', '127.0.0.1.nip.io', 'localhost.', 'localhost.example', 'fe80::1%lo', '::1%lo', '127.999.0.1', 'evil']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});

describe('BearerAuth', () => {
  const token = 'a-very-secret-token-0123456789';
  const auth = new BearerAuth(token);

  it('accepts Bearer <token> with the scheme in any case and one or more spaces', () => {
    for (const h of [`Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`]) expect(auth.refusal(h), h).toBeUndefined();
  });

  it('tells an absent header, a malformed one and a wrong token apart', () => {
    expect(auth.refusal(undefined)).toBe('absent');
    expect(auth.refusal('')).toBe('absent');
    for (const h of ['Basic abc', 'Bearer', 'Bearer ', `Bearer\t${token}`, `Bearer ${token} extra`, `Bearer ${token}\u00e9`, `Token ${token}`]) {
      expect(auth.refusal(h), h).toBe('malformed');
    }
    expect(auth.refusal(`Bearer ${token}x`)).toBe('mismatch');
    expect(auth.refusal(`Bearer ${token.slice(0, -1)}`)).toBe('mismatch');
    expect(auth.refusal(`Bearer ${token.toUpperCase()}`)).toBe('mismatch');
  });

  it('the daemon check throws a 401 HttpError with WWW-Authenticate', () => {
    expect(() => auth.check(req({ authorization: `Bearer ${token}` }))).not.toThrow();
    for (const [header, message] of [
      [undefined, 'authorization required: send Authorization: Bearer <token>'],
      ['Basic abc', 'invalid bearer token'],
      [`Bearer ${token}x`, 'invalid bearer token'],
    ] as const) {
      let thrown: unknown;
      try {
        auth.check(req(header === undefined ? {} : { authorization: header }));
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(HttpError);
      expect((thrown as HttpError).status).toBe(401);
      expect((thrown as HttpError).code).toBe('auth');
      expect((thrown as HttpError).message).toBe(message);
      expect((thrown as HttpError).options.headers).toEqual({ 'www-authenticate': 'Bearer realm="ward"' });
    }
  });

  it('a token that could never be sent (spaces, control or non-ASCII characters) is refused up front', () => {
    for (const t of ['', 'has space', 'tab\tin', 'caf\u00e9']) {
      let thrown: unknown;
      try {
        new BearerAuth(t);
      } catch (err) {
        thrown = err;
      }
      expect(isWardError(thrown), JSON.stringify(t)).toBe(true);
    }
  });
});

describe('LoopbackGuard', () => {
  const guard = new LoopbackGuard(['ward.internal']);

  it('accepts the loopback names and the extra ones, any port, no Origin or a loopback Origin', () => {
    for (const host of ['localhost', 'localhost:7433', '127.0.0.1:1', '[::1]:8080', '[::1]', 'LocalHost', 'ward.internal:7433']) {
      expect(guard.refusal(req({ host })), host).toBeUndefined();
    }
    for (const origin of ['http://localhost:3000', 'https://127.0.0.1', 'http://[::1]:9', 'http://ward.internal']) {
      expect(guard.refusal(req({ host: 'localhost', origin })), origin).toBeUndefined();
    }
  });

  it('refuses a missing Host, a foreign or malformed Host, and a foreign, opaque or malformed Origin', () => {
    expect(guard.refusal(req({}))).toEqual({ code: 'host_missing' });
    expect(guard.refusal(req({ host: 'evil.example:7433' }))).toEqual({ code: 'host', header: 'evil.example:7433', name: 'evil.example' });
    for (const host of ['localhost.', '127.1', '127.0.0.1:abc', 'user@localhost', '[::1', '0x7f.0.0.1', '127.0.0.2']) {
      expect(guard.refusal(req({ host }))?.code, host).toBe('host');
    }
    expect(guard.refusal(req({ host: 'localhost', origin: 'https://evil.example' }))).toEqual({ code: 'origin', header: 'https://evil.example', name: 'evil.example' });
    for (const origin of ['null', 'file://', 'chrome-extension://abc', 'http://localhost/path', 'garbage']) {
      expect(guard.refusal(req({ host: 'localhost', origin }))?.code, origin).toBe('origin');
    }
  });

  it('the daemon check throws 400 for a missing Host and 403 for a refused Host or Origin', () => {
    const codeOf = (headers: Record<string, string>) => {
      try {
        guard.check(req(headers));
        return undefined;
      } catch (err) {
        return [(err as HttpError).code, (err as HttpError).status, (err as HttpError).message];
      }
    };
    expect(codeOf({})).toEqual(['host_missing', 400, 'missing Host header']);
    expect(codeOf({ host: 'evil.example' })).toEqual(['host', 403, 'Host "evil.example" is not allowed on this loopback listener']);
    expect(codeOf({ host: 'localhost', origin: 'http://evil.example' })).toEqual(['origin', 403, 'Origin "http://evil.example" is not allowed on this loopback listener']);
    expect(codeOf({ host: 'localhost' })).toBeUndefined();
  });
});
