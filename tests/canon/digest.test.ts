import { describe, expect, it } from 'vitest';
import { digestJcs, isSha256Hex, jcs, parseJsonText, sha256Bytes, sha256Hex, shortId } from '../../src/canon/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';

describe('sha256 helpers', () => {
  it('hash UTF-8 text and raw bytes to lowercase hex / 32 bytes', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(sha256Hex('abc'));
    expect(sha256Hex('\u00e9')).toBe(sha256Hex(Buffer.from([0xc3, 0xa9])));
    const bytes = sha256Bytes('abc');
    expect(bytes).toHaveLength(32);
    expect(bytes.toString('hex')).toBe(sha256Hex('abc'));
  });

  it('digestJcs is the unprefixed hex sha256 of the JCS text', () => {
    const value = { b: 1, a: [true, null, 'x'] };
    expect(digestJcs(value)).toBe(sha256Hex(jcs(value)));
    expect(digestJcs(value)).not.toMatch(/^sha256:/);
  });

  it('digestJcs refuses what jcs refuses', () => {
    for (const bad of [{ a: undefined }, '\ud800', NaN, [() => 1]]) {
      expect(() => digestJcs(bad)).toThrow(expect.objectContaining({ code: ERROR_CODES.JCS_INVALID_VALUE }));
      expect(() => digestJcs(bad)).toThrow(WardError);
    }
  });

  it('shortId is the first 12 bytes (24 hex chars) of sha256 (spec V7 trace_id / event_id)', () => {
    expect(
      shortId(
        'a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666:5a851409b8a555437e75559fdae924b969b53b3e9d5dce1806ac4e005ebd8d2b:block',
      ),
    ).toBe('98c069640be42974e73b8b6b');
    expect(shortId('98c069640be42974e73b8b6b:2026-11-21T21:11:28.455778037Z')).toBe('5db2362d8eb9b75a9265737a');
  });

  it('isSha256Hex accepts exactly 64 lowercase hex characters', () => {
    expect(isSha256Hex('a'.repeat(64))).toBe(true);
    expect(isSha256Hex(sha256Hex('x'))).toBe(true);
    expect(isSha256Hex('A'.repeat(64))).toBe(false);
    expect(isSha256Hex('a'.repeat(63))).toBe(false);
    expect(isSha256Hex('a'.repeat(65))).toBe(false);
    expect(isSha256Hex(`sha256:${'a'.repeat(64)}`)).toBe(false);
    expect(isSha256Hex(`${'a'.repeat(64)}\n`)).toBe(false);
    expect(isSha256Hex('g'.repeat(64))).toBe(false);
  });
});

describe('parseJsonText (Go encoding/json view of strings)', () => {
  it('replaces lone surrogates with U+FFFD in values and keys, as Go does', () => {
    expect(parseJsonText('"a\\ud800b"')).toBe('a\ufffdb');
    expect(parseJsonText('["\\udfff", {"k": "\\ud83d"}]')).toEqual(['\ufffd', { k: '\ufffd' }]);
    expect(parseJsonText('{"\\ud800": 1, "ok": "\\ud83d\\ude02"}')).toEqual({ '\ufffd': 1, ok: '\u{1f602}' });
  });

  it('keeps well-formed input as JSON.parse returns it', () => {
    const text = '{"z":1,"a":[1.5,"\\u00e9",null,true],"n":{"m":{}}}';
    expect(parseJsonText(text)).toEqual(JSON.parse(text));
    expect(jcs(parseJsonText(text))).toBe('{"a":[1.5,"\u00e9",null,true],"n":{"m":{}},"z":1}');
  });

  it('keeps a "__proto__" key an own property when an object has to be rebuilt', () => {
    const parsed = parseJsonText('{"__proto__": {"x": 1}, "\\ud800": 2}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__', '\ufffd']);
    expect(jcs(parsed)).toBe('{"__proto__":{"x":1},"\ufffd":2}');
  });

  it('throws SyntaxError on invalid JSON', () => {
    expect(() => parseJsonText('{')).toThrow(SyntaxError);
    expect(() => parseJsonText('')).toThrow(SyntaxError);
  });
});
