import canonicalize from 'canonicalize';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Nesting deeper than this is refused before canonicalization: canonicalize@4 recurses and throws
 * RangeError near ~1.8k nested arrays, and no Ward artifact legitimately nests this deep.
 * The depth counts containers (arrays and objects): 128 nested containers are accepted whatever
 * they hold, a 129th container is refused. Scalars add no depth.
 */
export const MAX_JCS_DEPTH = 128;

/**
 * RFC 8785 canonical JSON. Only plain JSON data is accepted (what `JSON.parse` can produce);
 * anything else (functions, undefined, bigint, non-finite numbers, class instances, lone
 * surrogates, excessive nesting) is refused so that a digest can never silently cover a value
 * other than the one that was evaluated.
 */
export function jcs(value: unknown): string {
  const trail: (string | number)[] = [];
  assertJsonData(value, 0, trail);
  let out: string | undefined;
  try {
    out = canonicalize(value);
  } catch (err) {
    throw new WardError(ERROR_CODES.JCS_INVALID_VALUE, `canonicalize: ${(err as Error).message}`, { cause: err });
  }
  if (typeof out !== 'string') throw new WardError(ERROR_CODES.JCS_INVALID_VALUE, 'canonicalize: value is not JSON');
  return out;
}

/**
 * `depth` is the number of containers enclosing `value`. `trail` holds the keys/indices leading to
 * `value`; the printable path is only built when an error is thrown (keeps the hot path free of
 * string concatenation).
 */
function assertJsonData(value: unknown, depth: number, trail: (string | number)[]): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw invalid(trail, 'non-finite number');
      return;
    case 'object': {
      if (value === null) return;
      if (depth >= MAX_JCS_DEPTH) {
        throw new WardError(
          ERROR_CODES.JCS_TOO_DEEP,
          `canonicalize: nesting deeper than ${MAX_JCS_DEPTH} at ${pathOf(trail)}`,
        );
      }
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          trail.push(i);
          if (!(i in value)) throw invalid(trail, 'sparse array');
          assertJsonData(value[i], depth + 1, trail);
          trail.pop();
        }
        return;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw invalid(trail, 'not a plain object');
      for (const key of Object.keys(value)) {
        trail.push(key);
        assertJsonData((value as Record<string, unknown>)[key], depth + 1, trail);
        trail.pop();
      }
      return;
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
