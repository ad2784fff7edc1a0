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
 */
export function jcs(value: unknown): string {
  return serialize(value, 0, []);
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
