import { constants, gunzipSync, inflateSync } from 'node:zlib';

/**
 * Decodings the witness and the result firewall undo before they look (docs/witness.md): base64
 * blobs, hex and base32 text, gzip and zlib streams. Every decoding is bounded: a hostile result
 * or argument cannot make Ward allocate more than the caller's byte budget (a zip bomb inflates
 * to at most `maxBytes`, then stops).
 */

/** Bytes read as text: UTF-8 when they are valid UTF-8, otherwise Latin-1 (every byte one character, ASCII kept). */
export function bytesAsText(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  }
}
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** gzip (1f 8b) or zlib (78 01/5e/9c/da) magic at the start of the bytes. */
export function compressedKind(bytes: Uint8Array): 'gzip' | 'zlib' | undefined {
  if (bytes.length < 3) return undefined;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes[0] === 0x78 && (bytes[1] === 0x01 || bytes[1] === 0x5e || bytes[1] === 0x9c || bytes[1] === 0xda)) return 'zlib';
  return undefined;
}

/**
 * The decompressed bytes, at most `maxBytes` of them; undefined when the stream is not valid.
 * Past the bound (a zip bomb), only a prefix of the compressed input is inflated, short enough
 * that it cannot exceed the bound (deflate expands at most about 1,032 times), so what the
 * stream starts with is still looked at and `truncated` says the rest was not.
 */
export function inflateBounded(bytes: Uint8Array, kind: 'gzip' | 'zlib', maxBytes: number): { bytes: Buffer; truncated: boolean } | undefined {
  const options = { maxOutputLength: Math.max(1, maxBytes), finishFlush: constants.Z_SYNC_FLUSH };
  const inflate = (input: Uint8Array) => (kind === 'gzip' ? gunzipSync(input, options) : inflateSync(input, options));
  try {
    return { bytes: inflate(bytes), truncated: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE') return undefined;
  }
  try {
    return { bytes: inflate(bytes.subarray(0, Math.max(16, Math.floor(maxBytes / MAX_DEFLATE_RATIO)))), truncated: true };
  } catch {
    return undefined;
  }
}
const MAX_DEFLATE_RATIO = 1_100;

const BASE64_BODY = /^[A-Za-z0-9+/_\-\s]+={0,2}\s*$/;

/** A base64 (or base64url) blob, whitespace allowed (line-wrapped); undefined when it is not one. */
export function decodeBase64Blob(text: string, maxBytes: number): Buffer | undefined {
  if (text.length < 4 || !BASE64_BODY.test(text)) return undefined;
  const chars = Math.min(text.length, Math.ceil((maxBytes * 4) / 3) + 4);
  return Buffer.from(chars === text.length ? text : text.slice(0, chars), 'base64');
}

const HEX_VALUE = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < 10; i++) t[48 + i] = i;
  for (let i = 0; i < 6; i++) {
    t[65 + i] = 10 + i;
    t[97 + i] = 10 + i;
  }
  return t;
})();

/** Hex digits (pairs; an odd last digit is ignored) as bytes. `text` holds only hex digits. */
export function decodeHex(text: string): Buffer {
  const out = Buffer.allocUnsafe(text.length >> 1);
  for (let i = 0; i + 1 < text.length; i += 2) out[i >> 1] = ((HEX_VALUE[text.charCodeAt(i)] as number) << 4) | (HEX_VALUE[text.charCodeAt(i + 1)] as number);
  return out;
}

const BASE32_VALUE = (() => {
  const t = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  for (let i = 0; i < 32; i++) {
    t[alphabet.charCodeAt(i)] = i;
    t[alphabet.toLowerCase().charCodeAt(i)] = i;
  }
  return t;
})();

/** RFC 4648 base32 (either case, padding ignored) as bytes. `text` holds only alphabet characters. */
export function decodeBase32(text: string): Buffer {
  const out = Buffer.allocUnsafe(Math.floor((text.length * 5) / 8));
  let bits = 0;
  let acc = 0;
  let j = 0;
  for (let i = 0; i < text.length; i++) {
    acc = ((acc << 5) | (BASE32_VALUE[text.charCodeAt(i)] as number)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 0xff;
    }
  }
  return out.subarray(0, j);
}

export function isHexChar(c: number): boolean {
  return c < 128 && HEX_VALUE[c] !== -1;
}

export function isBase32Char(c: number): boolean {
  return c < 128 && BASE32_VALUE[c] !== -1;
}
