import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Nesting deeper than this is refused before canonicalization: no Ward artifact legitimately
 * nests this deep, and a recursive serializer must not be driven into a stack overflow.
 * The depth counts containers (arrays and objects): 128 nested containers are accepted whatever
 * they hold, a 129th container is refused. Scalars add no depth.
 */
export const MAX_JCS_DEPTH = 128;

/**
 * RFC 8785 canonical JSON. Only plain JSON data is accepted (what `JSON.parse` can produce);
 * anything else (functions, undefined, bigint, non-finite numbers, class instances, lone
 * surrogates, excessive nesting) is refused so that a digest can never silently cover a value
 * other than the one that was evaluated.
 *
 * One pass that checks and serializes, instead of a checking pass followed by canonicalize@4:
 * JCS runs two to three times per decision (intent digest, trace signature), and the library's
 * per-character surrogate scan in JavaScript, per-node Set bookkeeping and second traversal made
 * it a third of the cost of signing a trace (`npm run bench -- canon`). The output is the same:
 * keys sorted by UTF-16 code units (the default sort), strings and numbers as ECMAScript
 * `JSON.stringify` writes them (RFC 8785 §3.2.2); the library stays the oracle in tests/canon.
 *
 * Accepted values take a fast pass with no path bookkeeping (`canonical`); a value it refuses is
 * run through the checked pass (`serialize`), which says what and where. Both give the same text
 * (tests/canon/jcs-fast.property.test.ts).
 */
export function jcs(value: unknown): string {
  try {
    return canonical(value, 0);
  } catch {
    // Refused (or anything unexpected): the checked pass says why, with the path, or — should the
    // fast pass ever refuse a value the checked pass accepts — serializes it.
    return serialize(value, 0, []);
  }
}

/** The checked pass alone (what `jcs` falls back to); exported so tests can hold the fast pass to it. */
export function jcsChecked(value: unknown): string {
  return serialize(value, 0, []);
}

/** Code units JSON.stringify escapes or JCS refuses (any surrogate; `isWellFormed` then decides). */
const SPECIAL = /[\u0000-\u001f"\\\ud800-\udfff]/;

/**
 * The fast pass, the same output as `serialize` (RFC 8785) without its bookkeeping; it throws on
 * anything `serialize` refuses, and `jcs` then runs `serialize` for the error. Two savings, ~2× on
 * a trace record (`npm run bench -- canon`): a string with nothing to escape (almost all of them:
 * keys, digests, names) is quoted as is instead of going through JSON.stringify, and the few keys
 * of an object are insertion-sorted instead of calling Array.prototype.sort. `<` on strings
 * compares UTF-16 code units, as the default sort does.
 */
function canonical(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw REFUSED;
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (depth >= MAX_JCS_DEPTH) throw REFUSED;
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw REFUSED;
          if (i > 0) out += ',';
          out += canonical(value[i], depth + 1);
        }
        return out + ']';
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw REFUSED;
      const keys = sortedKeys(value);
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        if (i > 0) out += ',';
        out += keyText(key) + canonical((value as Record<string, unknown>)[key], depth + 1);
      }
      return out + '}';
    }
    default:
      throw REFUSED;
  }
}

const REFUSED = new Error('jcs: refused by the fast pass');

function quote(s: string): string {
  if (!SPECIAL.test(s)) return '"' + s + '"';
  if (!s.isWellFormed()) throw REFUSED;
  return JSON.stringify(s);
}

/**
 * Quoted keys with their colon, as written. Member names repeat across every record Ward
 * canonicalizes (traces, intents, tokens), so the first few hundred short ones are kept: a Map hit
 * costs less than the escape scan and concatenation (~25% of a trace record's serialization). Only
 * keys that quote cleanly are kept; the map stops growing when full.
 */
const keyTexts = new Map<string, string>();
const KEY_TEXTS_MAX = 512;

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = quote(key) + ':';
    if (key.length <= 64 && keyTexts.size < KEY_TEXTS_MAX) keyTexts.set(key, text);
  }
  return text;
}

/** Own enumerable keys in UTF-16 code-unit order; insertion sort for the usual handful. */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length > 32) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * `depth` is the number of containers enclosing `value`. `trail` holds the keys/indices leading to
 * `value`; the printable path is only built when an error is thrown (keeps the hot path free of
 * string concatenation).
 */
function serialize(value: unknown, depth: number, trail: (string | number)[]): string {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw invalid(trail, 'string with a lone surrogate');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw invalid(trail, 'non-finite number');
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (depth >= MAX_JCS_DEPTH) {
        throw new WardError(ERROR_CODES.JCS_TOO_DEEP, `canonicalize: nesting deeper than ${MAX_JCS_DEPTH} at ${pathOf(trail)}`);
      }
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          trail.push(i);
          if (!(i in value)) throw invalid(trail, 'sparse array');
          if (i > 0) out += ',';
          out += serialize(value[i], depth + 1, trail);
          trail.pop();
        }
        return out + ']';
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw invalid(trail, 'not a plain object');
      const keys = Object.keys(value).sort();
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        trail.push(key);
        if (!key.isWellFormed()) throw invalid(trail, 'key with a lone surrogate');
        if (i > 0) out += ',';
        out += JSON.stringify(key) + ':' + serialize((value as Record<string, unknown>)[key], depth + 1, trail);
        trail.pop();
      }
      return out + '}';
    }
    default:
      throw invalid(trail, typeof value);
  }
}

function pathOf(trail: readonly (string | number)[]): string {
  let path = '$';
  for (const step of trail) path += typeof step === 'number' ? `[${step}]` : `.${step}`;
  return path;
}

function invalid(trail: readonly (string | number)[], what: string): WardError {
  return new WardError(ERROR_CODES.JCS_INVALID_VALUE, `canonicalize: ${what} is not JSON at ${pathOf(trail)}`);
}
