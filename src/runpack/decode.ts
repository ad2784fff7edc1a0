import { EPOCH_1980, formatRFC3339Nano, isZeroTime, parseJsonTime, toUTC, type JsonObject } from '../canon/index.js';
import { readTime, type Decoder } from '../context/index.js';
import { ERROR_CODES } from '../errors.js';

/**
 * Runpack records decode like Go structs (`context/fields.ts`): missing or null fields are zero
 * values, unknown fields are ignored, wrong JSON types are errors. A damaged runpack is a
 * verification failure; a bad `run_record.json` is a usage error.
 */
export const RUNPACK_DECODER: Decoder = { prefix: 'parse runpack: ', root: 'Runpack', code: ERROR_CODES.RUNPACK_INVALID };
export const RUN_RECORD_DECODER: Decoder = { prefix: 'parse run record: ', root: 'RunRecordInput', code: ERROR_CODES.RUN_RECORD_INVALID };

/** Records of one run mostly repeat a few timestamps; re-rendering each costs more than a lookup. */
const TIME_CACHE = new Map<string, string>();
const TIME_CACHE_LIMIT = 4096;

/** A time field re-rendered in Go's RFC3339Nano form (zone kept); absent or null is the zero time. */
export function readTimeText(d: Decoder, obj: JsonObject, key: string, path = ''): string {
  const value = obj[key];
  if (typeof value === 'string') {
    const known = TIME_CACHE.get(value);
    if (known !== undefined) return known;
  }
  const text = formatRFC3339Nano(readTime(d, obj, key, path));
  if (typeof value === 'string') {
    if (TIME_CACHE.size >= TIME_CACHE_LIMIT) TIME_CACHE.clear();
    TIME_CACHE.set(value, text);
  }
  return text;
}

export const ZERO_TIME_TEXT = '0001-01-01T00:00:00Z';
export const EPOCH_1980_TEXT = formatRFC3339Nano(EPOCH_1980);

/** A stored time in UTC; the zero time becomes 1980-01-01 (the reference's `normalizeTime`). */
export function utcOr1980(text: string): string {
  const t = parseJsonTime(text, 'time');
  return isZeroTime(t) ? EPOCH_1980_TEXT : formatRFC3339Nano(toUTC(t));
}
