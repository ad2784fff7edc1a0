import { hash, randomBytes } from 'node:crypto';
import { foldedSlices, foldForMatch, mayFoldToLength, reversed } from './normalize.js';
import { BLOB_KEYS, credentialSecrets } from './results.js';
import { blobText, NOT_PLAIN, plainBase64Tokens } from './decode.js';
import { unwrap, type UnwrapBudget, type UnwrapEncoding } from './unwrap.js';

export { base64Tokens, decodeBase64Utf8 } from './decode.js';
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

export type TaintEncoding = 'raw' | 'json_unescaped' | 'url_decoded' | 'joined' | UnwrapEncoding;

export interface TaintHit extends TaintSource {
  /** JSON path of the argument string that carries the value (`$.body`, `$.headers.x#key`). */
  argPath: string;
  /**
   * `raw`: the value occurs as is; `json_unescaped`: after undoing JSON string escaping;
   * `url_decoded`: after percent-decoding (and `+` as space); `base64_decoded`: inside a
   * base64 or base64url token of the argument; `hex_decoded`, `base32_decoded`, `compressed`
   * (gzip or zlib inside a decoding), `html_unescaped`: likewise (unwrap.ts); `joined`: across
   * adjacent string arguments of one object or array (a value split in two). Every form is
   * compared after normalisation (`foldForMatch`: NFKC, case, whitespace and invisible
   * characters).
   */
  encoding: TaintEncoding;
}

export interface TaintLimits {
  maxValues: number;
  maxValueChars: number;
  maxCandidatesPerResult: number;
  /** Distinct earlier results kept per value (the most recent first). */
  maxSourcesPerValue: number;
  /**
   * Values that look like credentials (the result firewall's detectors) are remembered apart, up
   * to this many, evicted only by each other: no volume of ordinary values evicts them.
   */
  maxProtectedValues: number;
  /** Protected values (each with its prefix, suffix and reversed forms) taken from one result; outside `maxCandidatesPerResult`. */
  maxProtectedPerResult: number;
}

export const DEFAULT_TAINT_LIMITS: TaintLimits = {
  maxValues: 10_000,
  maxValueChars: 65_536,
  maxCandidatesPerResult: 4_096,
  maxSourcesPerValue: 4,
  maxProtectedValues: 4_096,
  maxProtectedPerResult: 1_024,
};

/**
 * A remembered credential also counts by its first PREFIX_CHARS characters after its fixed
 * prefix (`ghp_`, `sk-ant-api03-`: up to its last `-`, `_` or `.` within the first 48
 * characters) and by its last PREFIX_CHARS characters, so a key cut short is still caught: 16
 * characters of a key's random part are at least 80 bits, which no unrelated text repeats.
 */
export const PREFIX_CHARS = 16;

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
  /** In the protected budget (a credential-shaped value or one of its forms). */
  guarded: boolean;
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
  /** The protected values (credentials), in recency order like `entries`, evicted only by each other. */
  private readonly guarded = new Map<string, Entry>();
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
    this.anchorFilter = this.limits.maxValues + this.limits.maxProtectedValues < 0xffff ? new Uint16Array(1 << ANCHOR_FILTER_BITS) : new Uint32Array(1 << ANCHOR_FILTER_BITS);
  }

  get size(): number {
    return this.entries.size + this.guarded.size;
  }

  remember(result: unknown, source: TaintSource): RememberOutcome {
    const out: RememberOutcome = { remembered: 0, refreshed: 0, dropped: 0 };
    const walked = walkStringValues(result, undefined, true);
    if (walked.truncated) out.dropped++;
    // A blob (`resource.blob`, `image.data`) is remembered by what it says too: the model may be
    // given it decoded. Credentials from any blob; other values only from one that is text.
    const values = [...walked.values];
    const keys = [...walked.keys];
    const texts = [...walked.values];
    walked.values.forEach((value, i) => {
      if (value.length < MIN_TOKEN_CHARS || !BLOB_KEYS.has(walked.keys[i] ?? '')) return;
      const blob = blobText(value, MAX_BLOB_TEXT_BYTES);
      if (blob === undefined) return;
      if (blob.truncated) out.dropped++;
      values.push(blob.text);
      keys.push('');
      if (blob.utf8) texts.push(blob.text);
    });
    const seen = new Set<string>();
    const count = (added: boolean) => (added ? out.remembered++ : out.refreshed++);
    // Credentials first, into the protected budget and outside the per-result cap: a result full
    // of other values cannot push its key out.
    let guardedBudget = this.limits.maxProtectedPerResult;
    values.forEach((value, i) => {
      if (!mayFoldToLength(value, MIN_TOKEN_CHARS)) return;
      for (const secret of credentialSecrets(value, keys[i] ?? '')) {
        for (const form of protectedForms(secret)) {
          if (seen.has(form)) continue;
          seen.add(form);
          if (guardedBudget-- <= 0) out.dropped++;
          else count(this.add(form, source, true));
        }
      }
    });
    let budget = this.limits.maxCandidatesPerResult;
    for (const value of texts) {
      // No candidate is shorter than MIN_TOKEN_CHARS, and unescaping never lengthens a text.
      if (!mayFoldToLength(value, MIN_TOKEN_CHARS)) continue;
      for (const variant of unescapeVariants(normalizeNewlines(value))) {
        const ranges = candidateRanges(variant, this.limits.maxValueChars);
        if (ranges.length === 0) continue;
        const folded = foldedSlices(variant);
        for (let k = 0; k < ranges.length; k += 2) {
          const candidate = folded(ranges[k] as number, ranges[k + 1] as number);
          if (candidate.length < MIN_TOKEN_CHARS || seen.has(candidate) || !informative(candidate)) continue;
          seen.add(candidate);
          if (budget-- <= 0) {
            out.dropped++;
            continue;
          }
          count(this.add(candidate, source, false));
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
    if (this.size === 0) return [];
    const hits = new Map<string, TaintHit>();
    const budget: UnwrapBudget = { chars: MATCH_MAX_DECODED_CHARS };
    let left = MATCH_MAX_STRINGS;
    // `at`: the key or index of `node` in the container whose path is `parent`; undefined at the root.
    const visit = (node: unknown, parent: string, at: string | number | undefined, depth: number): void => {
      if (left <= 0) return;
      if (typeof node === 'string') {
        left--;
        if (mayFoldToLength(node, MIN_TOKEN_CHARS)) this.matchString(node, parent, at, false, hits, budget);
        return;
      }
      if (typeof node === 'number') {
        if (!Number.isFinite(node)) return;
        left--;
        const text = JSON.stringify(node);
        if (text.length >= MIN_TOKEN_CHARS) this.matchString(text, parent, at, false, hits, budget);
        return;
      }
      if (node === null || typeof node !== 'object') return;
      if (depth >= MATCH_MAX_DEPTH) return;
      const path = childPath(parent, at);
      if (Array.isArray(node)) {
        node.forEach((item: unknown, i: number) => visit(item, path, i, depth + 1));
        this.matchJoined(node, undefined, path, hits);
        return;
      }
      const object = node as Record<string, unknown>;
      const keys = Object.keys(object);
      for (const key of keys) {
        if (key.length > 0) {
          if (left <= 0) return;
          left--;
          if (mayFoldToLength(key, MIN_TOKEN_CHARS)) this.matchString(key, path, key, true, hits, budget);
        }
        visit(object[key], path, key, depth + 1);
      }
      this.matchJoined(object, keys, path, hits);
    };
    visit(args, '$', undefined, 0);
    return [...hits.values()];
  }

  /**
   * The hits of one argument string (at least MIN_TOKEN_CHARS long: unescaping, percent- and
   * base64-decoding never lengthen a text, and `scan` finds nothing in a shorter one), at the path
   * `parent` + `at` (+ `#key` for an object key).
   */
  private matchString(value: string, parent: string, at: string | number | undefined, isKey: boolean, hits: Map<string, TaintHit>, budget: UnwrapBudget): void {
    let path: string | undefined;
    for (const { text, encoding } of argumentVariants(value, budget)) {
      for (const entry of this.scan(foldForMatch(text))) {
        path ??= isKey ? `${childPath(parent, at)}#key` : childPath(parent, at);
        for (const s of entry.sources) {
          const id = `${s.traceId}\u0000${s.toolName}\u0000${path}`;
          if (!hits.has(id)) hits.set(id, { ...s, argPath: path, encoding });
        }
      }
    }
  }

  /**
   * The string members of one object (or items of one array), adjacent in order, joined and
   * normalized: a value split over two arguments is found, and named at each argument that holds
   * part of it (`encoding: joined`). Hits inside one member were found there already.
   */
  private matchJoined(node: readonly unknown[] | Record<string, unknown>, keys: readonly string[] | undefined, path: string, hits: Map<string, TaintHit>): void {
    const n = keys === undefined ? (node as readonly unknown[]).length : keys.length;
    const member = (i: number): [string | number, unknown] => (keys === undefined ? [i, (node as readonly unknown[])[i]] : [keys[i] as string, (node as Record<string, unknown>)[keys[i] as string]]);
    let strings = 0;
    for (let i = 0; i < n && strings < 2; i++) if (typeof member(i)[1] === 'string') strings++;
    if (strings < 2) return;
    const parts: { at: string | number; start: number; end: number }[] = [];
    let joined = '';
    for (let i = 0; i < n; i++) {
      const [at, v] = member(i);
      if (typeof v !== 'string') continue;
      // Only what lies near a boundary can span it: long members are kept by their ends.
      const folded = foldForMatch(v.length > 2 * JOIN_WINDOW_CHARS ? `${v.slice(0, JOIN_WINDOW_CHARS)}${v.slice(-JOIN_WINDOW_CHARS)}` : v);
      if (joined.length + folded.length > MATCH_MAX_JOINED_CHARS) break;
      parts.push({ at, start: joined.length, end: joined.length + folded.length });
      joined += folded;
    }
    if (joined.length < MIN_TOKEN_CHARS) return;
    for (const { entry, start } of this.scanAt(joined)) {
      const end = start + entry.length;
      const spanned = parts.filter((p) => p.start < end && p.end > start);
      if (spanned.length < 2) continue;
      for (const p of spanned) {
        const argPath = childPath(path, p.at);
        for (const s of entry.sources) {
          const id = `${s.traceId}\u0000${s.toolName}\u0000${argPath}`;
          if (!hits.has(id)) hits.set(id, { ...s, argPath, encoding: 'joined' });
        }
      }
    }
  }

  stats(): TaintStats {
    let sources = 0;
    for (const e of this.entries.values()) sources += e.sources.length;
    for (const e of this.guarded.values()) sources += e.sources.length;
    // Per value (measured by scripts/measure-taint-memory.js: ~ 355 B with one source): the entry,
    // its key string, its slots in both maps, and each source reference (source strings are shared).
    return { values: this.size, approxBytes: this.size * 340 + sources * 16, evicted: this.evictedCount };
  }

  private add(value: string, source: TaintSource, guarded: boolean): boolean {
    const key = this.digest(value);
    const known = this.entries.get(key) ?? this.guarded.get(key);
    if (known) {
      // The source first, once (in place: a refresh is the common case of a repeated result).
      const list = known.sources;
      const i = list.findIndex((s) => s.traceId === source.traceId && s.toolName === source.toolName);
      if (i !== 0) {
        if (i > 0) list.splice(i, 1);
        list.unshift(source);
        if (list.length > this.limits.maxSourcesPerValue) list.length = this.limits.maxSourcesPerValue;
      }
      if (guarded && !known.guarded) {
        // An ordinary value seen again as a credential moves into the protected budget.
        this.entries.delete(key);
        known.guarded = true;
        this.guarded.set(key, known);
        while (this.guarded.size > this.limits.maxProtectedValues) this.evictGuarded();
      }
      this.touch(known);
      return false;
    }
    const entry: Entry = {
      key,
      length: value.length,
      anchor: this.polyHash(value, 0, MIN_TOKEN_CHARS),
      whole: this.polyHash(value, 0, value.length),
      sources: [source],
      guarded,
    };
    (guarded ? this.guarded : this.entries).set(key, entry);
    (this.anchorFilter[entry.anchor >>> ANCHOR_FILTER_SHIFT] as number)++;
    const bucket = this.anchors.get(entry.anchor);
    if (bucket === undefined) this.anchors.set(entry.anchor, entry);
    else if (Array.isArray(bucket)) bucket.push(entry);
    else this.anchors.set(entry.anchor, [bucket, entry]);
    while (this.entries.size > this.limits.maxValues) this.evictOldest();
    while (this.guarded.size > this.limits.maxProtectedValues) this.evictGuarded();
    return true;
  }

  private touch(entry: Entry): void {
    const map = entry.guarded ? this.guarded : this.entries;
    map.delete(entry.key);
    map.set(entry.key, entry);
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
    this.unindex(oldest);
  }

  /** The least recently remembered or matched protected value (few, so a fresh iterator is cheap). */
  private evictGuarded(): void {
    const oldest = this.guarded.values().next().value as Entry;
    this.guarded.delete(oldest.key);
    this.unindex(oldest);
  }

  private unindex(entry: Entry): void {
    (this.anchorFilter[entry.anchor >>> ANCHOR_FILTER_SHIFT] as number)--;
    const bucket = this.anchors.get(entry.anchor);
    const rest = Array.isArray(bucket) ? bucket.filter((e) => e !== entry) : [];
    if (rest.length > 1) this.anchors.set(entry.anchor, rest);
    else if (rest.length === 1) this.anchors.set(entry.anchor, rest[0] as Entry);
    else this.anchors.delete(entry.anchor);
    this.evictedCount++;
  }

  /**
   * Entries whose value occurs in `text`. The anchor hash of each window is rolled along the text;
   * only on an anchor hit are the prefix hashes built, which give any window's whole-value hash in
   * O(1) (the common text has no hit and allocates nothing).
   */
  private scan(text: string, positions?: { entry: Entry; start: number }[]): Entry[] {
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
          if ((positions === undefined && found?.has(entry)) || end > n) continue;
          if (((prefix[end] as number) - Math.imul(prefix[start] as number, pow[entry.length] as number)) >>> 0 !== entry.whole) continue;
          if (this.digest(text.slice(start, end)) !== entry.key) continue;
          (found ??= new Set()).add(entry);
          positions?.push({ entry, start });
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

  /** Every occurrence of a remembered value in `text`, with where it starts. */
  private scanAt(text: string): { entry: Entry; start: number }[] {
    const positions: { entry: Entry; start: number }[] = [];
    this.scan(text, positions);
    return positions;
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

/** Bytes of one result blob decoded for remembering (a longer blob is remembered by its first part: `dropped`). */
const MAX_BLOB_TEXT_BYTES = 1 << 20;

/** The bounds of `match`'s walk (those `walkStrings` had for it). */
const MATCH_MAX_DEPTH = 64;
const MATCH_MAX_STRINGS = 1_000_000;
/** Characters of decoded text (hex, base32, misaligned or nested base64, decompressed, HTML) one `match` looks at. */
const MATCH_MAX_DECODED_CHARS = 4 << 20;
/**
 * A member longer than twice this is joined by its first and last JOIN_WINDOW_CHARS characters:
 * a split value longer than that on either side of a boundary is out of reach (docs/witness.md).
 */
const JOIN_WINDOW_CHARS = 256;
/** Characters of one container's joined string members. */
const MATCH_MAX_JOINED_CHARS = 1 << 20;

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
function argumentVariants(value: string, budget: UnwrapBudget): { text: string; encoding: TaintEncoding }[] {
  // The common argument: no carriage return, nothing to unescape or percent-decode, so the text
  // itself and its base64 tokens (one pass over the text finds both).
  const plain = plainBase64Tokens(value);
  if (plain !== NOT_PLAIN) {
    const raw = value;
    const variants: { text: string; encoding: TaintEncoding }[] = [{ text: raw, encoding: 'raw' }];
    const tokens = plain;
    // Every re-encoding: base64 (any alignment), hex, base32, wrapped, nested, compressed, HTML.
    for (const u of unwrap(raw, budget, tokens ?? null)) variants.push({ text: normalizeNewlines(u.text), encoding: u.encoding });
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
  for (const text of [...out.keys()]) for (const u of unwrap(text, budget)) add(u.text, u.encoding);
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

/** Percent-escapes decoded as UTF-8 wherever they form runs; a malformed `%` is left as it is. */
function percentDecode(text: string): string {
  return text.replace(PERCENT_RUN, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

/** A token: a run of characters between whitespace, quotes, brackets, commas, semicolons and bars. */
const TOKEN = /[^\s"'`<>()[\]{},;|]+/g;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
const ABS_PATH = /^(?:~?\/|[A-Za-z]:[\\/])[^\s]*[\\/][^\s]*$/;
const TRAILING_PUNCTUATION = /[.,:;!?]+$/;
const NON_ASCII = /[^\x00-\x7f]/;
/**
 * `NAME=value`, `export NAME="value"`, `name: value` (.env files, shell profiles, YAML and
 * properties files): the value alone is what an exfiltrating call carries, without its name.
 */
const ASSIGNMENT = /^(?:export\s+)?[A-Za-z_][\w.-]*\s*[=:]\s*(\S.*)$/d;
const QUOTED = /^(["'])(.*)\1$/;

/** The candidate values of one result string (see the module comment). */
export function candidates(text: string, maxValueChars: number = DEFAULT_TAINT_LIMITS.maxValueChars): string[] {
  const ranges = candidateRanges(text, maxValueChars);
  const out: string[] = [];
  for (let k = 0; k < ranges.length; k += 2) out.push(text.slice(ranges[k], ranges[k + 1]));
  return out;
}

/**
 * Where the candidates of one result string are in it, as [start, end) pairs, flat: `remember`
 * folds the whole text once and takes each candidate's folded form as a slice of that, instead of
 * folding every candidate (lines and tokens overlap the whole text: that folded it three times).
 * A whole string of 12 to 15 characters that is token-like counts as a token (a short secret
 * alone in a result, or padded with whitespace, is remembered like the same secret in a sentence).
 */
export function candidateRanges(text: string, maxValueChars: number = DEFAULT_TAINT_LIMITS.maxValueChars): number[] {
  const out: number[] = [];
  const [ws, we] = trimRange(text, 0, text.length);
  // Lengths count as written or folded, whichever is longer: folding lengthens some non-ASCII text (`⑩` is `10`).
  const len = NON_ASCII.test(text) ? (a: number, b: number) => Math.max(b - a, foldForMatch(text.slice(a, b)).length) : (a: number, b: number) => b - a;
  if (len(ws, we) < MIN_TOKEN_CHARS) return out;
  const whole = ws === 0 && we === text.length ? text : text.slice(ws, we);
  const wholeLen = len(ws, we);
  const wholeTaken = wholeLen >= MIN_TEXT_CHARS && whole.length <= maxValueChars && informative(whole);
  if (wholeTaken) out.push(ws, we);
  let lineStart = ws;
  const multiLine = whole.includes('\n');
  while (lineStart <= we) {
    let lineEnd = multiLine ? text.indexOf('\n', lineStart) : -1;
    if (lineEnd < 0 || lineEnd > we) lineEnd = we;
    const [ts, te] = trimRange(text, lineStart, lineEnd);
    if (len(ts, te) >= MIN_TOKEN_CHARS) {
      const isWhole = ts === ws && te === we;
      const t = isWhole ? whole : text.slice(ts, te);
      if (!isWhole && len(ts, te) >= MIN_TEXT_CHARS && t.length <= maxValueChars && informative(t)) out.push(ts, te);
      const m = ASSIGNMENT.exec(t);
      const at = m?.indices?.[1];
      if (m && at) {
        let [as, ae] = at;
        const q = QUOTED.exec(m[1] as string);
        if (q) {
          as++;
          ae--;
        }
        if (ae - as !== t.length && len(ts + as, ts + ae) >= MIN_TOKEN_CHARS && ae - as <= maxValueChars && informative(t.slice(as, ae))) out.push(ts + as, ts + ae);
      }
    }
    lineStart = lineEnd + 1;
  }
  TOKEN.lastIndex = ws;
  for (let m = TOKEN.exec(text); m !== null && m.index < we; m = TOKEN.exec(text)) {
    const raw = m[0];
    const rs = m.index;
    let re = Math.min(rs + raw.length, we);
    if (len(rs, re) < MIN_TOKEN_CHARS) continue;
    let token = re - rs === raw.length ? raw : raw.slice(0, re - rs);
    const url = URL_LIKE.test(token);
    if (url) {
      const cut = TRAILING_PUNCTUATION.exec(token);
      if (cut) {
        re -= cut[0].length;
        token = token.slice(0, token.length - cut[0].length);
      }
    }
    if (len(rs, re) < MIN_TOKEN_CHARS || token.length > maxValueChars || (wholeTaken && rs === ws && re === we)) continue;
    if ((url && URL_LIKE.test(token)) || ABS_PATH.test(token) || tokenLike(token)) out.push(rs, re);
  }
  return out;
}

/** `text.slice(start, end).trim()` as a range of `text`. */
function trimRange(text: string, start: number, end: number): [number, number] {
  while (start < end && trimmed(text.charCodeAt(start))) start++;
  while (end > start && trimmed(text.charCodeAt(end - 1))) end--;
  return [start, end];
}

/** Is this UTF-16 unit one `String.prototype.trim` removes (JavaScript's `\s`: white space and line terminators)? */
function trimmed(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
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

/**
 * The forms a credential is remembered by (see PREFIX_CHARS): itself, reversed, and its prefix and
 * suffix when it is longer than they are, all normalized. A PEM block is remembered whole and by
 * its lines (as any text), not by prefix: every PEM block starts alike.
 */
export function protectedForms(secret: string): string[] {
  const value = foldForMatch(secret);
  if (value.length < MIN_TOKEN_CHARS || !informative(value)) return [];
  const forms = [value, reversed(value)];
  if (value.includes('-----')) return forms;
  const fixed = FIXED_PREFIX.exec(value.slice(0, 48))?.[0].length ?? 0;
  if (value.length > fixed + PREFIX_CHARS) forms.push(value.slice(0, fixed + PREFIX_CHARS), value.slice(-PREFIX_CHARS));
  return forms;
}
/** A key's fixed prefix: everything up to its last `-`, `_` or `.` (`sk-ant-api03-`, `ghp_`, a JWT's header). */
const FIXED_PREFIX = /^.*[-_.]/;
