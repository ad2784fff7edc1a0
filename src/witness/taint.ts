import { hash, randomBytes } from 'node:crypto';
import { jsonPathChild, walkStringValues } from './walk.js';

/**
 * Witnessed provenance: which earlier tool result a `tools/call` argument carries a value from.
 *
 * `remember` extracts candidate values from a result Ward saw and keeps only fingerprints of them;
 * `match` reports the results whose values occur inside any argument string (or object key, or
 * number as JSON writes it), as a substring, or after undoing JSON string escaping (up to three
 * levels: a value the model wrapped into a JSON document it passes as a string, possibly twice),
 * percent-encoding (a value put into a URL or a form) or base64 (a token of the argument that
 * decodes to text holding the value).
 *
 * Candidates (documented in docs/witness.md):
 * - a whole result string, trimmed, of at least MIN_TEXT_CHARS characters;
 * - every line of a multi-line string, trimmed, of at least MIN_TEXT_CHARS characters (so a
 *   secret file is caught when a later argument embeds one of its lines);
 * - the value of every `NAME=value` or `name: value` line, unquoted, of at least MIN_TOKEN_CHARS
 *   characters (a `.env` file's secret, carried without its name);
 * - every token (split at whitespace, quotes and brackets) of at least MIN_TOKEN_CHARS characters
 *   that looks like a URL, an absolute path or a token (mixed character classes, many distinct
 *   characters).
 * All candidates need MIN_DISTINCT_CHARS distinct characters: `================` is not a value.
 * Shorter values are never remembered, so no short or common string is ever tainted: a match
 * means an argument contains, exactly, a ≥ 12-character value a result returned.
 *
 * Fingerprints: each value is kept as (its length, a keyed 32-bit polynomial hash of its first
 * MIN_TOKEN_CHARS characters — the anchor —, a keyed polynomial hash of the whole value, and a
 * salted sha256 of it, truncated to 72 bits). `match` rolls the anchor hash over each argument string; on an
 * anchor hit it compares the whole-value polynomial hash in O(1) from prefix hashes, and only then
 * the sha256. The values themselves are never stored, and the session key and salt make the
 * fingerprints useless outside this process.
 *
 * Memory is bounded: at most `maxValues` values per session (least recently remembered or matched
 * evicted first), at most `maxCandidatesPerResult` new values per result, values longer than
 * `maxValueChars` are only remembered by their lines and tokens.
 */
export interface TaintSource {
  traceId: string;
  toolName: string;
}

export type TaintEncoding = 'raw' | 'json_unescaped' | 'url_decoded' | 'base64_decoded';

export interface TaintHit extends TaintSource {
  /** JSON path of the argument string that carries the value (`$.body`, `$.headers.x#key`). */
  argPath: string;
  /**
   * `raw`: the value occurs as is; `json_unescaped`: after undoing JSON string escaping;
   * `url_decoded`: after percent-decoding (and `+` as space); `base64_decoded`: inside a
   * base64 or base64url token of the argument, decoded whole.
   */
  encoding: TaintEncoding;
}

export interface TaintLimits {
  maxValues: number;
  maxValueChars: number;
  maxCandidatesPerResult: number;
  /** Distinct earlier results kept per value (the most recent first). */
  maxSourcesPerValue: number;
}

export const DEFAULT_TAINT_LIMITS: TaintLimits = {
  maxValues: 10_000,
  maxValueChars: 65_536,
  maxCandidatesPerResult: 4_096,
  maxSourcesPerValue: 4,
};

export const MIN_TEXT_CHARS = 16;
export const MIN_TOKEN_CHARS = 12;
export const MIN_DISTINCT_CHARS = 5;
/** JSON escaping undone at most this many times (a value inside a JSON string inside a JSON string...). */
export const MAX_UNESCAPE_LEVELS = 3;

export interface RememberOutcome {
  /** New values fingerprinted. */
  remembered: number;
  /** Values already known (their source list was refreshed). */
  refreshed: number;
  /** Candidates dropped by `maxCandidatesPerResult` or the walk's bounds. */
  dropped: number;
}

export interface TaintStats {
  values: number;
  /** Approximate bytes the fingerprints take (see docs/witness.md for the measured figure). */
  approxBytes: number;
  evicted: number;
}

interface Entry {
  key: string;
  length: number;
  anchor: number;
  whole: number;
  sources: TaintSource[];
}

const BASE_MASK = 0xfffffffe;
const ANCHOR_FILTER_BITS = 15;
const ANCHOR_FILTER_SHIFT = 32 - ANCHOR_FILTER_BITS;

export class TaintMemory {
  private readonly limits: TaintLimits;
  private readonly salt: Buffer;
  private readonly saltText: string;
  private readonly base: number;
  /** base^MIN_TOKEN_CHARS modulo 2^32: what leaves the rolling anchor hash with a window's first character. */
  private readonly anchorPow: number;
  /** Keyed by salted digest; Map order is recency (oldest first) for LRU eviction. */
  private readonly entries = new Map<string, Entry>();
  /**
   * The oldest entry is the next of one iterator kept over `entries`: it only ever passed entries
   * since evicted, and a touched entry moves after it. (A new iterator's first entry is the same
   * one, but V8 keeps deleted slots until a rehash, and a new iterator walked over thousands of
   * them on every eviction.)
   */
  private lru: IterableIterator<Entry> | undefined;
  /** One entry, or several when values share an anchor (most anchors have one: no array). */
  private readonly anchors = new Map<number, Entry | Entry[]>();
  /**
   * How many entries have an anchor with these top ANCHOR_FILTER_BITS bits: `scan` looks a window
   * up in `anchors` only when its count is not 0. One load from a small array instead of a probe
   * of a Map of thousands of entries keyed by heap numbers (most windows are no anchor; a cold
   * Map probe costs several cache misses). 64 KiB; 32-bit counts when a session may hold more
   * values than 16 bits count.
   */
  private readonly anchorFilter: Uint16Array | Uint32Array;
  private evictedCount = 0;

  constructor(limits: Partial<TaintLimits> = {}, key: Uint8Array = randomBytes(32)) {
    this.limits = { ...DEFAULT_TAINT_LIMITS, ...limits };
    if (!(this.limits.maxValues >= 1)) throw new RangeError('maxValues must be >= 1');
    this.salt = Buffer.from(key);
    this.saltText = this.salt.toString('hex');
    // An odd base keeps the hash a bijection per position modulo 2^32.
    this.base = ((this.salt.readUInt32BE(0) & BASE_MASK) | 1) >>> 0 || 0x01000193;
    let pow = 1;
    for (let i = 0; i < MIN_TOKEN_CHARS; i++) pow = Math.imul(pow, this.base) >>> 0;
    this.anchorPow = pow;
    this.anchorFilter = this.limits.maxValues < 0xffff ? new Uint16Array(1 << ANCHOR_FILTER_BITS) : new Uint32Array(1 << ANCHOR_FILTER_BITS);
  }

  get size(): number {
    return this.entries.size;
  }

  remember(result: unknown, source: TaintSource): RememberOutcome {
    const out: RememberOutcome = { remembered: 0, refreshed: 0, dropped: 0 };
    const walked = walkStringValues(result);
    if (walked.truncated) out.dropped++;
    const seen = new Set<string>();
    let budget = this.limits.maxCandidatesPerResult;
    for (const value of walked.values) {
      // No candidate is shorter than MIN_TOKEN_CHARS, and unescaping never lengthens a text.
      if (value.length < MIN_TOKEN_CHARS) continue;
      for (const variant of unescapeVariants(normalizeNewlines(value))) {
        for (const candidate of candidates(variant, this.limits.maxValueChars)) {
          if (seen.has(candidate)) continue;
          seen.add(candidate);
          if (budget-- <= 0) {
            out.dropped++;
            continue;
          }
          if (this.add(candidate, source)) out.remembered++;
          else out.refreshed++;
        }
      }
    }
    return out;
  }

  /**
   * The arguments' strings, object keys and numbers (as JSON writes them) are visited in the order
   * and within the bounds of `walkStrings` (depth 64, 1,000,000 strings), each one's JSON path
   * built only when it carries a value (most strings are too short to, and none does).
   */
  match(args: unknown): TaintHit[] {
    if (this.entries.size === 0) return [];
    const hits = new Map<string, TaintHit>();
    let left = MATCH_MAX_STRINGS;
    // `at`: the key or index of `node` in the container whose path is `parent`; undefined at the root.
    const visit = (node: unknown, parent: string, at: string | number | undefined, depth: number): void => {
      if (left <= 0) return;
      if (typeof node === 'string') {
        left--;
        if (node.length >= MIN_TOKEN_CHARS) this.matchString(node, parent, at, false, hits);
        return;
      }
      if (typeof node === 'number') {
        if (!Number.isFinite(node)) return;
        left--;
        const text = JSON.stringify(node);
        if (text.length >= MIN_TOKEN_CHARS) this.matchString(text, parent, at, false, hits);
        return;
      }
      if (node === null || typeof node !== 'object') return;
      if (depth >= MATCH_MAX_DEPTH) return;
      const path = childPath(parent, at);
      if (Array.isArray(node)) {
        node.forEach((item: unknown, i: number) => visit(item, path, i, depth + 1));
        return;
      }
      const object = node as Record<string, unknown>;
      for (const key of Object.keys(object)) {
        if (key.length > 0) {
          if (left <= 0) return;
          left--;
          if (key.length >= MIN_TOKEN_CHARS) this.matchString(key, path, key, true, hits);
        }
        visit(object[key], path, key, depth + 1);
      }
    };
    visit(args, '$', undefined, 0);
    return [...hits.values()];
  }

  /**
   * The hits of one argument string (at least MIN_TOKEN_CHARS long: unescaping, percent- and
   * base64-decoding never lengthen a text, and `scan` finds nothing in a shorter one), at the path
   * `parent` + `at` (+ `#key` for an object key).
   */
  private matchString(value: string, parent: string, at: string | number | undefined, isKey: boolean, hits: Map<string, TaintHit>): void {
    let path: string | undefined;
    for (const { text, encoding } of argumentVariants(value)) {
      for (const entry of this.scan(text)) {
        path ??= isKey ? `${childPath(parent, at)}#key` : childPath(parent, at);
        for (const s of entry.sources) {
          const id = `${s.traceId}\u0000${s.toolName}\u0000${path}`;
          if (!hits.has(id)) hits.set(id, { ...s, argPath: path, encoding });
        }
      }
    }
  }

  stats(): TaintStats {
    let sources = 0;
    for (const e of this.entries.values()) sources += e.sources.length;
    // Per value (measured by scripts/measure-taint-memory.js: ~ 355 B with one source): the entry,
    // its key string, its slots in both maps, and each source reference (source strings are shared).
    return { values: this.entries.size, approxBytes: this.entries.size * 340 + sources * 16, evicted: this.evictedCount };
  }

  private add(value: string, source: TaintSource): boolean {
    const key = this.digest(value);
    const known = this.entries.get(key);
    if (known) {
      known.sources = [source, ...known.sources.filter((s) => s.traceId !== source.traceId || s.toolName !== source.toolName)].slice(
        0,
        this.limits.maxSourcesPerValue,
      );
      this.touch(known);
      return false;
    }
    const entry: Entry = {
      key,
      length: value.length,
      anchor: this.polyHash(value, 0, MIN_TOKEN_CHARS),
      whole: this.polyHash(value, 0, value.length),
      sources: [source],
    };
    this.entries.set(key, entry);
    (this.anchorFilter[entry.anchor >>> ANCHOR_FILTER_SHIFT] as number)++;
    const bucket = this.anchors.get(entry.anchor);
    if (bucket === undefined) this.anchors.set(entry.anchor, entry);
    else if (Array.isArray(bucket)) bucket.push(entry);
    else this.anchors.set(entry.anchor, [bucket, entry]);
    while (this.entries.size > this.limits.maxValues) this.evictOldest();
    return true;
  }

  private touch(entry: Entry): void {
    this.entries.delete(entry.key);
    this.entries.set(entry.key, entry);
  }

  /** The least recently remembered or matched entry (the memory is not empty). */
  private oldest(): Entry {
    let next = (this.lru ??= this.entries.values()).next();
    if (next.done === true) {
      // Not reached while entries remain (each is after the iterator); a fresh one is the same answer.
      this.lru = this.entries.values();
      next = this.lru.next();
    }
    return next.value as Entry;
  }

  private evictOldest(): void {
    const oldest = this.oldest();
    this.entries.delete(oldest.key);
    (this.anchorFilter[oldest.anchor >>> ANCHOR_FILTER_SHIFT] as number)--;
    const bucket = this.anchors.get(oldest.anchor);
    const rest = Array.isArray(bucket) ? bucket.filter((e) => e !== oldest) : [];
    if (rest.length > 1) this.anchors.set(oldest.anchor, rest);
    else if (rest.length === 1) this.anchors.set(oldest.anchor, rest[0] as Entry);
    else this.anchors.delete(oldest.anchor);
    this.evictedCount++;
  }

  /**
   * Entries whose value occurs in `text`. The anchor hash of each window is rolled along the text;
   * only on an anchor hit are the prefix hashes built, which give any window's whole-value hash in
   * O(1) (the common text has no hit and allocates nothing).
   */
  private scan(text: string): Entry[] {
    const n = text.length;
    if (n < MIN_TOKEN_CHARS) return [];
    const base = this.base;
    const anchorPow = this.anchorPow;
    const anchors = this.anchors;
    const filter = this.anchorFilter;
    let anchor = 0;
    for (let i = 0; i < MIN_TOKEN_CHARS; i++) anchor = (Math.imul(anchor, base) + text.charCodeAt(i)) >>> 0;
    // prefix[i] = hash of text[0..i); pow[i] = base^i, both modulo 2^32 (built at the first anchor hit).
    let prefix: Uint32Array | undefined;
    let pow: Uint32Array | undefined;
    let found: Set<Entry> | undefined;
    for (let start = 0; ; start++) {
      const bucket = filter[anchor >>> ANCHOR_FILTER_SHIFT] === 0 ? undefined : anchors.get(anchor);
      if (bucket !== undefined) {
        if (prefix === undefined || pow === undefined) {
          prefix = new Uint32Array(n + 1);
          pow = new Uint32Array(n + 1);
          pow[0] = 1;
          for (let i = 0; i < n; i++) {
            prefix[i + 1] = (Math.imul(prefix[i] as number, base) + text.charCodeAt(i)) >>> 0;
            pow[i + 1] = Math.imul(pow[i] as number, base) >>> 0;
          }
        }
        for (const entry of Array.isArray(bucket) ? bucket : [bucket]) {
          const end = start + entry.length;
          if (found?.has(entry) || end > n) continue;
          if (((prefix[end] as number) - Math.imul(prefix[start] as number, pow[entry.length] as number)) >>> 0 !== entry.whole) continue;
          if (this.digest(text.slice(start, end)) !== entry.key) continue;
          (found ??= new Set()).add(entry);
        }
      }
      const next = start + MIN_TOKEN_CHARS;
      if (next >= n) break;
      // Roll the window one character on: drop text[start] (times base^MIN_TOKEN_CHARS), add text[next].
      anchor = (Math.imul(anchor, base) - Math.imul(text.charCodeAt(start), anchorPow) + text.charCodeAt(next)) >>> 0;
    }
    if (found === undefined) return [];
    for (const entry of found) this.touch(entry);
    return [...found];
  }

  private polyHash(text: string, start: number, len: number): number {
    let h = 0;
    for (let i = start; i < start + len; i++) h = (Math.imul(h, this.base) + text.charCodeAt(i)) >>> 0;
    return h;
  }

  /**
   * The first 72 bits of sha256(salt ‖ value), as 12 base64 characters: with the keyed 32-bit
   * polynomial hash checked first, a false match needs both to collide. (Under 13 characters V8
   * copies a slice instead of keeping the whole digest string alive behind it.)
   */
  private digest(value: string): string {
    return hash('sha256', this.saltText + value, 'base64').slice(0, 12);
  }
}

/** The bounds of `match`'s walk (those `walkStrings` had for it). */
const MATCH_MAX_DEPTH = 64;
const MATCH_MAX_STRINGS = 1_000_000;

/** The JSON path of the member or item `at` of the container at `parent` (`parent` itself at the root). */
function childPath(parent: string, at: string | number | undefined): string {
  if (at === undefined) return parent;
  return typeof at === 'number' ? `${parent}[${at}]` : jsonPathChild(parent, at);
}

function normalizeNewlines(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** JSON string escapes undone wherever they occur (the text need not be valid JSON). */
export function unescapeJsonText(text: string): string {
  return text.replace(JSON_ESCAPE, (_m, hex: string | undefined, simple: string | undefined) =>
    hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : (SIMPLE_ESCAPES[simple as string] as string),
  );
}

/** The text and each distinct further unescaping of it, level 0 first. */
function unescapeVariants(text: string): string[] {
  const out = [text];
  let current = text;
  for (let level = 0; level < MAX_UNESCAPE_LEVELS && current.includes('\\'); level++) {
    const next = normalizeNewlines(unescapeJsonText(current));
    if (next === current) break;
    out.push(next);
    current = next;
  }
  return out;
}

/**
 * The texts an argument string is scanned as: itself, its JSON unescapings, and for each of those
 * its percent-decoding (a value put into a URL) and the decoding of each base64 token in it (a
 * value the model encoded before sending). Decodings are scanned, never remembered.
 */
function argumentVariants(value: string): { text: string; encoding: TaintEncoding }[] {
  // The common argument: no carriage return, nothing to unescape or percent-decode, so the text
  // itself and its base64 tokens (one pass over the text finds both).
  const plain = plainBase64Tokens(value);
  if (plain !== NOT_PLAIN) {
    const raw = value;
    const variants: { text: string; encoding: TaintEncoding }[] = [{ text: raw, encoding: 'raw' }];
    const tokens = plain;
    if (tokens === undefined) return variants;
    const seen = tokens.length > 1 ? new Set([raw]) : undefined;
    for (const token of tokens) {
      const decoded = normalizeNewlines(decodeBase64Utf8(token));
      if (decoded.length < MIN_TOKEN_CHARS || (seen === undefined ? decoded === raw : seen.has(decoded))) continue;
      seen?.add(decoded);
      variants.push({ text: decoded, encoding: 'base64_decoded' });
    }
    return variants;
  }
  const raw = normalizeNewlines(value);
  const out = new Map<string, TaintEncoding>();
  const add = (text: string, encoding: TaintEncoding) => {
    if (!out.has(text)) out.set(text, encoding);
  };
  // JSON inside a URL and a URL inside JSON: each unescaping level is also percent-decoded, and
  // each percent-decoding is also unescaped.
  unescapeVariants(raw).forEach((text, level) => {
    add(text, level === 0 ? 'raw' : 'json_unescaped');
    for (const decoded of percentDecodings(text)) add(decoded, 'url_decoded');
  });
  for (const decoded of percentDecodings(raw)) for (const text of unescapeVariants(decoded)) add(text, 'url_decoded');
  for (const text of [...out.keys()]) {
    const tokens = base64Tokens(text);
    if (tokens === undefined) continue;
    for (const token of tokens) {
      const decoded = normalizeNewlines(decodeBase64Utf8(token));
      if (decoded.length >= MIN_TOKEN_CHARS) add(decoded, 'base64_decoded');
    }
  }
  return [...out].map(([text, encoding]) => ({ text, encoding }));
}

function percentDecodings(text: string): string[] {
  if (!PERCENT.test(text)) return [];
  const out = [percentDecode(text)];
  if (text.includes('+')) out.push(percentDecode(text.replace(/\+/g, ' ')));
  return out;
}

const PERCENT = /%[0-9A-Fa-f]{2}/;
const PERCENT_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
/** Base64 tokens decoded per argument string: bounds the work a hostile argument can cause. */
const MAX_BASE64_TOKENS = 256;
/** A base64 token has at least this many characters of the alphabet: 12+ bytes once decoded, the shortest value. */
const MIN_BASE64_CHARS = 16;

/** Tokens up to this long are decoded without a Buffer (36 bytes). */
const MAX_SHORT_BASE64_CHARS = 48;

/** Each character's 6-bit value in the base64 and base64url alphabets (both: `+` and `-` are 62, `/` and `_` 63); -1 outside. */
const BASE64_VALUE = (() => {
  const table = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  table[0x2d] = 62; // -
  table[0x5f] = 63; // _
  return table;
})();

/**
 * The first MAX_BASE64_TOKENS base64 tokens of a text: each run of 16 or more characters of the
 * base64 or base64url alphabet, with up to two `=` after it (what `/[A-Za-z0-9+/_-]{16,}={0,2}/g`
 * matches); undefined when there is none.
 */
export function base64Tokens(text: string): string[] | undefined {
  return findBase64Tokens(text, false) as string[] | undefined;
}

/** What `plainBase64Tokens` returns for a text with a carriage return, a backslash or a `%`. */
const NOT_PLAIN = 0;

/** `base64Tokens(text)`, or NOT_PLAIN as soon as the text has a `\r`, `\` or `%` (one pass for both questions). */
function plainBase64Tokens(text: string): string[] | undefined | typeof NOT_PLAIN {
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

/** Percent-escapes decoded as UTF-8 wherever they form runs; a malformed `%` is left as it is. */
function percentDecode(text: string): string {
  return text.replace(PERCENT_RUN, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

const TOKEN_SPLIT = /[\s"'`<>()[\]{},;|]+/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
const ABS_PATH = /^(?:~?\/|[A-Za-z]:[\\/])[^\s]*[\\/][^\s]*$/;
const TRAILING_PUNCTUATION = /[.,:;!?]+$/;
/**
 * `NAME=value`, `export NAME="value"`, `name: value` (.env files, shell profiles, YAML and
 * properties files): the value alone is what an exfiltrating call carries, without its name.
 */
const ASSIGNMENT = /^(?:export\s+)?[A-Za-z_][\w.-]*\s*[=:]\s*(\S.*)$/;
const QUOTED = /^(["'])(.*)\1$/;

/** The candidate values of one result string (see the module comment). */
export function candidates(text: string, maxValueChars: number = DEFAULT_TAINT_LIMITS.maxValueChars): string[] {
  const out: string[] = [];
  const whole = text.trim();
  if (whole.length >= MIN_TEXT_CHARS && whole.length <= maxValueChars && informative(whole)) out.push(whole);
  for (const line of whole.includes('\n') ? whole.split('\n') : [whole]) {
    const t = line.trim();
    if (t !== whole && t.length >= MIN_TEXT_CHARS && t.length <= maxValueChars && informative(t)) out.push(t);
    const assigned = ASSIGNMENT.exec(t)?.[1]?.replace(QUOTED, '$2');
    if (assigned && assigned !== t && assigned.length >= MIN_TOKEN_CHARS && assigned.length <= maxValueChars && informative(assigned)) out.push(assigned);
  }
  for (const raw of whole.split(TOKEN_SPLIT)) {
    const token = URL_LIKE.test(raw) ? raw.replace(TRAILING_PUNCTUATION, '') : raw;
    if (token.length < MIN_TOKEN_CHARS || token.length > maxValueChars || token === whole) continue;
    if (URL_LIKE.test(token) || ABS_PATH.test(token) || tokenLike(token)) out.push(token);
  }
  return out;
}

function informative(value: string): boolean {
  return hasDistinct(value, MIN_DISTINCT_CHARS);
}

/** At least `n` distinct UTF-16 units; stops as soon as it has seen them (values can be long). */
function hasDistinct(value: string, n: number): boolean {
  const seen: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!seen.includes(c)) {
      seen.push(c);
      if (seen.length >= n) return true;
    }
  }
  return false;
}

/** Two or more character classes and at least 8 distinct characters: ids, keys, hashes, not words. */
function tokenLike(token: string): boolean {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other >= 2 && hasDistinct(token, 8);
}
