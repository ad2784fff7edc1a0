import {
  EPOCH_1980,
  formatRFC3339Nano,
  isJsonObject,
  isZeroTime,
  parseJsonTime,
  toUTC,
  type JsonObject,
  type JsonValue,
} from '../canon/index.js';
import { ERROR_CODES, WardError, type ErrorCode } from '../errors.js';

/**
 * Lenient field readers with Go `encoding/json` semantics: a missing or null field is the zero
 * value, unknown fields are ignored, a field of the wrong JSON type is an error.
 */
export class FieldReader {
  constructor(
    private readonly code: ErrorCode,
    private readonly where: string,
  ) {}

  object(value: JsonValue | undefined, what = this.where): JsonObject {
    if (!isJsonObject(value)) throw this.fail(`${what}: expected a JSON object`);
    return value;
  }

  string(obj: JsonObject, key: string): string {
    const value = obj[key];
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') throw this.fail(`${this.where}.${key}: expected a string`);
    return value;
  }

  int(obj: JsonObject, key: string): number {
    const value = obj[key];
    if (value === undefined || value === null) return 0;
    if (typeof value !== 'number' || !Number.isInteger(value)) throw this.fail(`${this.where}.${key}: expected an integer`);
    return value;
  }

  optionalObject(obj: JsonObject, key: string): JsonObject | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (!isJsonObject(value)) throw this.fail(`${this.where}.${key}: expected a JSON object`);
    return value;
  }

  array(obj: JsonObject, key: string): JsonValue[] | null {
    const value = obj[key];
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value)) throw this.fail(`${this.where}.${key}: expected an array`);
    return value;
  }

  /** A time field re-rendered in Go's RFC3339Nano form (zone kept); absent is the zero time. */
  time(obj: JsonObject, key: string): string {
    const value = obj[key];
    if (typeof value === 'string') {
      const known = TIME_CACHE.get(value);
      if (known !== undefined) return known;
    }
    let text: string;
    try {
      text = formatRFC3339Nano(parseJsonTime(value, `${this.where}.${key}`));
    } catch (err) {
      throw this.fail((err as Error).message);
    }
    if (typeof value === 'string') {
      if (TIME_CACHE.size >= TIME_CACHE_LIMIT) TIME_CACHE.clear();
      TIME_CACHE.set(value, text);
    }
    return text;
  }

  at(where: string): FieldReader {
    return new FieldReader(this.code, where);
  }

  fail(message: string): WardError {
    return new WardError(this.code, message);
  }
}

/** Records of one run mostly repeat a few timestamps; re-rendering each costs more than a lookup. */
const TIME_CACHE = new Map<string, string>();
const TIME_CACHE_LIMIT = 4096;

export const ZERO_TIME_TEXT = '0001-01-01T00:00:00Z';
export const EPOCH_1980_TEXT = formatRFC3339Nano(EPOCH_1980);

/** A stored time in UTC; the zero time becomes 1980-01-01 (the reference's `normalizeTime`). */
export function utcOr1980(text: string): string {
  const t = parseJsonTime(text, 'time');
  return isZeroTime(t) ? EPOCH_1980_TEXT : formatRFC3339Nano(toUTC(t));
}

export function runpackReader(where: string): FieldReader {
  return new FieldReader(ERROR_CODES.RUNPACK_INVALID, where);
}
