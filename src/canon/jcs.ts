import canonicalize from 'canonicalize';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Nesting deeper than this is refused before canonicalization: canonicalize@4 recurses and throws
 * RangeError near ~1.8k nested arrays, and no Ward artifact legitimately nests this deep.
 */
export const MAX_JCS_DEPTH = 128;

/**
 * RFC 8785 canonical JSON. Only plain JSON data is accepted (what `JSON.parse` can produce);
 * anything else (functions, undefined, bigint, non-finite numbers, class instances, lone
 * surrogates, excessive nesting) is refused so that a digest can never silently cover a value
 * other than the one that was evaluated.
 */
export function jcs(value: unknown): string {
  assertJsonData(value, 0, '$');
  let out: string | undefined;
  try {
    out = canonicalize(value);
  } catch (err) {
    throw new WardError(ERROR_CODES.JCS_INVALID_VALUE, `canonicalize: ${(err as Error).message}`, { cause: err });
  }
  if (typeof out !== 'string') throw new WardError(ERROR_CODES.JCS_INVALID_VALUE, 'canonicalize: value is not JSON');
  return out;
}

function assertJsonData(value: unknown, depth: number, path: string): void {
  if (depth > MAX_JCS_DEPTH) {
    throw new WardError(ERROR_CODES.JCS_TOO_DEEP, `canonicalize: nesting deeper than ${MAX_JCS_DEPTH} at ${path}`);
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw invalid(path, 'non-finite number');
      return;
    case 'object':
      if (value === null) return;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw invalid(`${path}[${i}]`, 'sparse array');
          assertJsonData(value[i], depth + 1, `${path}[${i}]`);
        }
        return;
      }
      {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) throw invalid(path, 'not a plain object');
        for (const key of Object.keys(value)) {
          assertJsonData((value as Record<string, unknown>)[key], depth + 1, `${path}.${key}`);
        }
      }
      return;
    default:
      throw invalid(path, typeof value);
  }
}

function invalid(path: string, what: string): WardError {
  return new WardError(ERROR_CODES.JCS_INVALID_VALUE, `canonicalize: ${what} is not JSON at ${path}`);
}
