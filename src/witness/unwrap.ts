import { BASE64_VALUE, base64Tokens, compressedKind, decodeBase32, decodeBase64Utf8, decodeHex, inflateBounded, isHexChar } from './decode.js';
import { screenForm } from './normalize.js';

/**
 * The re-encodings of an argument string the witness undoes before it looks for remembered
 * values (docs/witness.md "Matching"), beyond JSON escaping, percent-encoding and whole-token
 * base64 (taint.ts): HTML entities; hex, base32 and base64 at any of the four alignments (a
 * value's encoding glued to other base64 text); the same in the text with its whitespace and
 * invisible characters removed (line-wrapped base64, spaced hex); gzip and zlib streams inside
 * those; and what those decodings hold, decoded again (nested), up to MAX_DEPTH levels. Only
 * decodings where at most one character in ten is ill-formed or a control character are kept (the
 * decoding of an ordinary id is random bytes, about half ill-formed). Bounded: at most MAX_RUNS runs per text and `budget.chars` characters of
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
const NON_ASCII = /[^\x00-\x7f]/;
/** A line break (and the blanks around it) between two characters of the base64 alphabet. */
const WRAP_JOIN = /([A-Za-z0-9+/=_-])[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9+/_-])/g;
/** Separators between hex pairs (`41 4b:49`). */
const HEX_JOIN = /(?<=(?:^|[\s:])(?:[0-9a-fA-F]{2})+)[ \t\r\n:]+(?=[0-9a-fA-F]{2}(?:[\s:]|$))/g;
const COMPRESSED_BASE64 = /^(?:H4sI|e[JNAF])/;
/**
 * A long run is first sampled: 48 characters from its middle (at its alignment) decoded; random
 * bytes (a binary upload, a hash) fail the readable test there and the run is not decoded whole.
 */
const SAMPLE_ABOVE = 256;
const SAMPLE_CHARS = 48;
const sampleAt = (token: string) => Math.floor(token.length / 8) * 4;

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
    // Joined again when something looks wrapped or spaced: lines of 12+ alphabet characters
    // continued on the next (wrapped base64), hex pairs apart (`41 4b 49`), anything not ASCII
    // (NFKC and invisible characters removed: full-width or zero-width inside an encoding).
    const isWrapped = wrapped(t);
    const isSpaced = spacedHex(t);
    if (isWrapped || isSpaced || NON_ASCII.test(t)) {
      let compact = screenForm(t);
      if (isWrapped) compact = compact.replace(WRAP_JOIN, '$1');
      if (isSpaced) compact = compact.replace(HEX_JOIN, '');
      if (compact !== t) tokens(compact, depth);
    }
  };
  const tokens = (t: string, depth: number, known?: readonly string[] | null) => {
    let runs = 0;
    for (const run of (known === undefined ? base64Tokens(t) : known) ?? []) {
      if (++runs > MAX_RUNS || budget.chars <= 0) return;
      // Hex and base32 inside the run (other alphabet characters may be glued to either end).
      if (run.length >= MIN_RUN.base32) {
        const { hex, base32 } = subRuns(run);
        for (const h of hex) for (let a = 0; a < 2; a++) decoded(decodeHex(h.slice(a)), 'hex_decoded', depth);
        for (const b of base32) decoded(decodeBase32(b), 'base32_decoded', depth);
      }
      // Every alignment: the value's encoding may start 1 to 3 characters into the run.
      for (let a = 0; a < 4 && run.length - a >= MIN_RUN.base64; a++) {
        const token = a === 0 ? run : run.slice(a);
        // A compressed stream's base64 starts `H4sI` (gzip) or `eJ`, `eN`, `eA`, `eF` (zlib): only
        // those need the bytes; any other token is decoded straight to text.
        if (COMPRESSED_BASE64.test(token)) decoded(Buffer.from(token, 'base64'), 'base64_decoded', depth);
        else if (token.length > SAMPLE_ABOVE && !readable(decodeBase64Utf8(token.slice(sampleAt(token), sampleAt(token) + SAMPLE_CHARS)))) continue;
        else {
          const text = decodeBase64Utf8(token);
          if (readable(text)) keep(text, 'base64_decoded', depth);
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
 * The bytes as UTF-8 text (ill-formed sequences as U+FFFD), when at most 6 characters plus one in
 * ten are U+FFFD or a control character: a decoding that starts with the garbage of a few glued
 * characters keeps the value after it, and the decoding of an ordinary id (random bytes, about
 * half of them ill-formed) is dropped.
 */
function utf8(bytes: Uint8Array): string | undefined {
  const text = UTF8.decode(bytes);
  return readable(text) ? text : undefined;
}

function readable(text: string): boolean {
  let bad = 0;
  // A few glued characters (up to 3 garbage bytes at each end) plus one in ten.
  const allowed = 6 + text.length / 10;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0xfffd || c < 0x09 || (c >= 0x0e && c < 0x20) || (c >= 0x7f && c < 0xa0)) {
      if (++bad > allowed) return false;
    }
  }
  return text.length >= 12;
}

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

/** Per ASCII character: 1 hex digit, 2 upper-case base32, 4 lower-case base32. */
const CLASS = (() => {
  const t = new Uint8Array(128);
  for (const c of '0123456789abcdefABCDEF') t[c.charCodeAt(0)]! |= 1;
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567') t[c.charCodeAt(0)]! |= 2;
  for (const c of 'abcdefghijklmnopqrstuvwxyz234567') t[c.charCodeAt(0)]! |= 4;
  return t;
})();

/**
 * The hex runs (24+ characters) and base32 runs (20+, one case) inside a run of the base64
 * alphabet, in one pass (a `[0-9a-f]{24,}` regex backtracks at every position).
 */
function subRuns(text: string): { hex: string[]; base32: string[] } {
  const hex: string[] = [];
  const base32: string[] = [];
  const start = [-1, -1, -1];
  const bits = [1, 2, 4];
  const min = [MIN_RUN.hex, MIN_RUN.base32, MIN_RUN.base32];
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    const cls = c < 128 ? (CLASS[c] as number) : 0;
    for (let k = 0; k < 3; k++) {
      if (cls & (bits[k] as number)) {
        if ((start[k] as number) < 0) start[k] = i;
      } else if ((start[k] as number) >= 0) {
        if (i - (start[k] as number) >= (min[k] as number)) (k === 0 ? hex : base32).push(text.slice(start[k], i));
        start[k] = -1;
      }
    }
  }
  return { hex, base32 };
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
