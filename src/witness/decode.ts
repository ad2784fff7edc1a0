import { constants, gunzipSync, inflateSync } from 'node:zlib';

/**
 * Decodings the witness and the result firewall undo before they look (docs/witness.md): base64
 * blobs, hex and base32 text, gzip and zlib streams. Every decoding is bounded: a hostile result
 * or argument cannot make Ward allocate more than the caller's byte budget (a zip bomb inflates
 * to at most `maxBytes`, then stops).
 */

/** Bytes read as text: UTF-8 when they are valid UTF-8, otherwise Latin-1 (every byte one character, ASCII kept). */
export function bytesAsText(bytes: Uint8Array): { text: string; utf8: boolean } {
  try {
    return { text: UTF8.decode(bytes), utf8: true };
  } catch {
    return { text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'), utf8: false };
  }
}

/**
 * What a base64 blob (`image.data`, `resource.blob`) says, whatever its MIME type claims: decoded,
 * inflated when gzip or zlib, read as UTF-8 or else Latin-1; at most `maxBytes` of it (`truncated`
 * when there was more). Undefined when the string is not base64.
 */
export function blobText(value: string, maxBytes: number): { text: string; utf8: boolean; truncated: boolean } | undefined {
  let bytes: Buffer | undefined = decodeBase64Blob(value, maxBytes + 1);
  if (bytes === undefined || bytes.length === 0) return undefined;
  let truncated = false;
  if (bytes.length > maxBytes) {
    truncated = true;
    bytes = bytes.subarray(0, maxBytes);
  }
  const compressed = compressedKind(bytes);
  if (compressed) {
    const inflated = inflateBounded(bytes, compressed, maxBytes);
    if (inflated?.truncated) truncated = true;
    if (inflated) bytes = inflated.bytes;
  }
  return { ...bytesAsText(bytes), truncated };
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

/** Tokens up to this long are decoded without a Buffer (36 bytes). */
const MAX_SHORT_BASE64_CHARS = 48;

/** Each character's 6-bit value in the base64 and base64url alphabets (both: `+` and `-` are 62, `/` and `_` 63); -1 outside. */
export const BASE64_VALUE = (() => {
  const table = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  table[0x2d] = 62; // -
  table[0x5f] = 63; // _
  return table;
})();

/**
 * A base64 token decoded, its bytes read as UTF-8: `Buffer.from(token, 'base64').toString('utf8')`
 * (4 characters give 3 bytes, a last 2 or 3 give 1 or 2, a last single one nothing; every
 * ill-formed UTF-8 sequence becomes one U+FFFD per maximal subpart, as the Encoding Standard's
 * decoder does). A token is decoded for nearly every argument (paths, ids and numbers are
 * tokens); a short one is decoded here, without a Buffer, whose round trip cost more than the
 * decoding (measured: about 3 µs of a call's ~20 µs in the proxy, cold); a longer one by Buffer,
 * faster per byte. `token` holds only alphabet characters and trailing `=`.
 */
export function decodeBase64Utf8(token: string): string {
  if (token.length > MAX_SHORT_BASE64_CHARS) return Buffer.from(token, 'base64').toString('utf8');
  let end = token.length;
  while (end > 0 && token.charCodeAt(end - 1) === 0x3d) end--;
  // UTF-16 code units, made a string once at the end (not a string grown a character at a time).
  const out: number[] = [];
  let bits = 0;
  let acc = 0;
  // UTF-8 decoder state (the Encoding Standard's): bytes still needed, seen, the code point so far, and the bounds of the next byte.
  let needed = 0;
  let seen = 0;
  let cp = 0;
  let lower = 0x80;
  let upper = 0xbf;
  for (let i = 0; i < end; i++) {
    acc = ((acc << 6) | (BASE64_VALUE[token.charCodeAt(i)] as number)) & 0xffff;
    bits += 6;
    if (bits < 8) continue;
    bits -= 8;
    const byte = (acc >> bits) & 0xff;
    for (;;) {
      if (needed === 0) {
        if (byte < 0x80) out.push(byte);
        else if (byte >= 0xc2 && byte <= 0xdf) {
          needed = 1;
          cp = byte & 0x1f;
        } else if (byte >= 0xe0 && byte <= 0xef) {
          if (byte === 0xe0) lower = 0xa0;
          else if (byte === 0xed) upper = 0x9f;
          needed = 2;
          cp = byte & 0x0f;
        } else if (byte >= 0xf0 && byte <= 0xf4) {
          if (byte === 0xf0) lower = 0x90;
          else if (byte === 0xf4) upper = 0x8f;
          needed = 3;
          cp = byte & 0x07;
        } else out.push(0xfffd);
        break;
      }
      if (byte < lower || byte > upper) {
        // The sequence so far is one U+FFFD; this byte starts over.
        needed = 0;
        seen = 0;
        cp = 0;
        lower = 0x80;
        upper = 0xbf;
        out.push(0xfffd);
        continue;
      }
      lower = 0x80;
      upper = 0xbf;
      cp = (cp << 6) | (byte & 0x3f);
      if (++seen === needed) {
        if (cp < 0x10000) out.push(cp);
        else out.push(0xd800 | ((cp - 0x10000) >> 10), 0xdc00 | ((cp - 0x10000) & 0x3ff));
        needed = 0;
        seen = 0;
        cp = 0;
      }
      break;
    }
  }
  if (needed !== 0) out.push(0xfffd);
  return String.fromCharCode(...out);
}


/** A base64 token has at least this many characters of the alphabet: 12+ bytes once decoded, the shortest value. */
export const MIN_BASE64_CHARS = 16;
/** Base64 tokens decoded per argument string: bounds the work a hostile argument can cause. */
export const MAX_BASE64_TOKENS = 256;
/**
 * The first MAX_BASE64_TOKENS base64 tokens of a text: each run of 16 or more characters of the
 * base64 or base64url alphabet, with up to two `=` after it (what `/[A-Za-z0-9+/_-]{16,}={0,2}/g`
 * matches); undefined when there is none.
 */
export function base64Tokens(text: string): string[] | undefined {
  return findBase64Tokens(text, false) as string[] | undefined;
}

/** What `plainBase64Tokens` returns for a text with a carriage return, a backslash or a `%`. */
export const NOT_PLAIN = 0;

/** `base64Tokens(text)`, or NOT_PLAIN as soon as the text has a `\r`, `\` or `%` (one pass for both questions). */
export function plainBase64Tokens(text: string): string[] | undefined | typeof NOT_PLAIN {
  return findBase64Tokens(text, true);
}

function findBase64Tokens(text: string, plainOnly: boolean): string[] | undefined | typeof NOT_PLAIN {
  let tokens: string[] | undefined;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c >= 128 || BASE64_VALUE[c] === -1) {
      // `\r`, `%`, `\`: none is in the alphabet or `=`, so each is seen here.
      if (plainOnly && (c === 0x0d || c === 0x25 || c === 0x5c)) return NOT_PLAIN;
      i++;
      continue;
    }
    const start = i;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d >= 128 || BASE64_VALUE[d] === -1) break;
      i++;
    }
    if (i - start < MIN_BASE64_CHARS) continue;
    if (i < n && text.charCodeAt(i) === 0x3d) i += i + 1 < n && text.charCodeAt(i + 1) === 0x3d ? 2 : 1;
    if (tokens !== undefined && tokens.length === MAX_BASE64_TOKENS) {
      // Past the tokens kept: only whether the text is plain is still a question.
      if (!plainOnly) break;
      continue;
    }
    (tokens ??= []).push(text.slice(start, i));
  }
  return tokens;
}

