import { BASE64_VALUE, base64Tokens, compressedKind, decodeBase32, decodeBase64Utf8, decodeHex, inflateBounded, isHexChar } from './decode.js';
import { screenForm } from './normalize.js';

/**
 * The re-encodings of an argument string the witness undoes before it looks for remembered
 * values (docs/witness.md "Matching"), beyond JSON escaping, percent-encoding and whole-token
 * base64 (taint.ts): HTML entities; hex, base32 and base64 at any of the four alignments (a
 * value's encoding glued to other base64 text); the same in the text with its whitespace and
 * invisible characters removed (line-wrapped base64, spaced hex); gzip and zlib streams inside
 * those; and what those decodings hold, decoded again (nested), up to MAX_DEPTH levels. Only
 * decodings with a run of 12 readable characters are kept (the decoding of an ordinary id is
 * random bytes, which nearly never have one). Bounded: at most MAX_RUNS runs per text and `budget.chars` characters of
 * decoded text per call, decompression to at most MAX_INFLATED_BYTES.
 */
export type UnwrapEncoding = 'html_unescaped' | 'hex_decoded' | 'base32_decoded' | 'base64_decoded' | 'compressed';

export interface Unwrapped {
  text: string;
  encoding: UnwrapEncoding;
}

/** What one `match` call may decode in total (characters), shared over its argument strings. */
export interface UnwrapBudget {
  chars: number;
}

export const MAX_DEPTH = 3;
const MAX_RUNS = 64;
const MAX_INFLATED_BYTES = 1 << 20;
/** A run of this many alphabet characters decodes to at least 12 bytes (the shortest remembered value) in each encoding. */
const MIN_RUN = { base64: 16, hex: 24, base32: 20 };

const UTF8 = new TextDecoder('utf-8');
const HTML_ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]{2,8}));/g;
const NAMED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', sol: '/', colon: ':', equals: '=', plus: '+', percnt: '%', num: '#', lowbar: '_', hyphen: '-', period: '.' };
const HEX_RUN = /[0-9a-fA-F]{24,}/g;
const BASE32_RUN = /[A-Z2-7]{20,}|[a-z2-7]{20,}/g;
const NON_ASCII = /[^\x00-\x7f]/;
const COMPRESSED_BASE64 = /^(?:H4sI|e[JNAF])/;

/** `tokensOfText`: `base64Tokens(text)` when the caller has it already (one pass fewer). */
export function unwrap(text: string, budget: UnwrapBudget, tokensOfText?: readonly string[] | null): Unwrapped[] {
  const out: Unwrapped[] = [];
  const seen = new Set<string>([text]);
  const keep = (t: string, encoding: UnwrapEncoding, depth: number) => {
    if (t.length < 12 || seen.has(t) || budget.chars <= 0) return;
    seen.add(t);
    budget.chars -= t.length;
    out.push({ text: t, encoding });
    if (depth < MAX_DEPTH) layer(t, depth + 1);
  };
  const layer = (t: string, depth: number, known?: readonly string[] | null) => {
    if (t.includes('&')) {
      const html = htmlUnescape(t);
      if (html !== t) keep(html, 'html_unescaped', depth);
    }
    tokens(t, depth, known);
    // Without whitespace and invisible characters, when something looks wrapped or spaced: a
    // line of 12+ alphabet characters continued on the next, hex bytes apart, or anything not
    // ASCII (full-width or invisible characters inside an encoding).
    if (wrapped(t) || NON_ASCII.test(t) || spacedHex(t)) {
      const compact = screenForm(t).replace(/\s+/g, '');
      if (compact !== t) tokens(compact, depth);
    }
  };
  const tokens = (t: string, depth: number, known?: readonly string[] | null) => {
    let runs = 0;
    for (const run of (known === undefined ? base64Tokens(t) : known) ?? []) {
      if (++runs > MAX_RUNS || budget.chars <= 0) return;
      // Hex and base32 inside the run (other alphabet characters may be glued to either end).
      if (run.length >= MIN_RUN.hex) {
        for (const h of run.matchAll(HEX_RUN)) for (let a = 0; a < 2; a++) decoded(decodeHex(h[0].slice(a)), 'hex_decoded', depth);
      }
      if (run.length >= MIN_RUN.base32) for (const b of run.matchAll(BASE32_RUN)) decoded(decodeBase32(b[0]), 'base32_decoded', depth);
      // Every alignment: the value's encoding may start 1 to 3 characters into the run.
      for (let a = 0; a < 4 && run.length - a >= MIN_RUN.base64; a++) {
        const token = a === 0 ? run : run.slice(a);
        // A compressed stream's base64 starts `H4sI` (gzip) or `eJ`, `eN`, `eA`, `eF` (zlib): only
        // those need the bytes; any other token is decoded straight to text.
        if (COMPRESSED_BASE64.test(token)) decoded(Buffer.from(token, 'base64'), 'base64_decoded', depth);
        else {
          const text = decodeBase64Utf8(token);
          if (READABLE_RUN.test(text)) keep(text, 'base64_decoded', depth);
        }
      }
    }
  };
  const decoded = (bytes: Buffer, encoding: UnwrapEncoding, depth: number) => {
    const kind = compressedKind(bytes);
    if (kind !== undefined) {
      const inflated = inflateBounded(bytes, kind, Math.min(MAX_INFLATED_BYTES, Math.max(0, budget.chars)));
      const t = inflated && utf8(inflated.bytes);
      if (t !== undefined) keep(t, 'compressed', depth);
      return;
    }
    const t = utf8(bytes);
    if (t !== undefined) keep(t, encoding, depth);
  };
  layer(text, 1, tokensOfText);
  return out;
}

/**
 * The bytes as UTF-8 text (ill-formed sequences as U+FFFD), when they hold a run of at least 12
 * readable characters: a decoding that starts with the garbage of a few glued characters keeps
 * the value after it, and the decoding of an ordinary id (random bytes) is dropped.
 */
function utf8(bytes: Uint8Array): string | undefined {
  const text = UTF8.decode(bytes);
  return READABLE_RUN.test(text) ? text : undefined;
}
const READABLE_RUN = /[^\u0000-\u0008\u000e-\u001f\u007f-\u009f\ufffd]{12}/;

/** A line ending in 12 or more characters of the base64 alphabet (or `=`) continued by 4 on the next (a wrapped encoding). */
function wrapped(text: string): boolean {
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', nl + 1)) {
    let before = nl - 1;
    if (before >= 0 && text.charCodeAt(before) === 0x0d) before--;
    let k = 0;
    while (k < 12 && before - k >= 0 && alphabetOrPad(text.charCodeAt(before - k))) k++;
    if (k < 12) continue;
    let after = 0;
    while (after < 4 && nl + 1 + after < text.length && alphabetOrPad(text.charCodeAt(nl + 1 + after))) after++;
    if (after === 4) return true;
  }
  return false;
}

/** Six hex byte pairs in a row, each followed by a space, tab, newline or colon (`41 4b 49 …`, `41:4b:…`). */
function spacedHex(text: string): boolean {
  let pairs = 0;
  for (let i = 0; i + 2 < text.length; ) {
    if (isHexChar(text.charCodeAt(i)) && isHexChar(text.charCodeAt(i + 1)) && separator(text.charCodeAt(i + 2))) {
      if (++pairs === 6) return true;
      i += 3;
      while (i < text.length && separator(text.charCodeAt(i))) i++;
    } else {
      pairs = 0;
      i++;
    }
  }
  return false;
}

function separator(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x3a;
}

function alphabetOrPad(c: number): boolean {
  return c === 0x3d || (c < 128 && BASE64_VALUE[c] !== -1);
}

/** Numeric character references and the common named ones decoded (`&#65;`, `&#x41;`, `&amp;`). */
export function htmlUnescape(text: string): string {
  return text.replace(HTML_ENTITY, (m, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED[name.toLowerCase()] ?? m;
    const cp = dec !== undefined ? Number(dec) : parseInt(hex as string, 16);
    return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : m;
  });
}
