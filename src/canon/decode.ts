import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { parseRFC3339, ZERO_TIME, type GoTime } from './gotime.js';

/*
 * The one typed-field decoder: reading a field of parsed JSON the way Go's `encoding/json` fills
 * a typed struct field, since Ward's answers are compared field by field with the reference's.
 * Intents (`intent/fields.ts`), approval and delegation tokens and approved-script entries
 * (`tokens/decode.ts`), context envelopes and Ward's other strict documents (`context/fields.ts`)
 * and MCP tool-call payloads (`FieldReader`, `agent-hooks/tool-call.ts`) all read through it; they
 * differ only in how an error is worded and coded (the `FaultReporter` each one passes).
 *
 * The rule:
 *
 * - An absent key or `null` is the zero value: `""`, `false`, `0`, no object, `[]`, the zero time.
 *   (Go leaves a field untouched for `null`, and every field starts at its zero value.)
 * - A value of another JSON type is an error; nothing is converted (`1` never becomes `"1"`).
 * - Integers (Go `int`/`int64`): a JSON number that is integral and inside int64, that is
 *   -2^63 ≤ n ≤ 2^63; `-0` reads as 0. Values beyond 2^53 are accepted as the reference accepts
 *   them; JS holds them as the nearest double, which is also what the reference's digests see (JCS
 *   re-reads every number as a float64). Two limits of working on parsed values, where Go reads
 *   the number's text: `300.0` and `3e2` arrive as 300 and are accepted (Go refuses the
 *   spelling), and the few texts just above 9223372036854775807 round to 2^63 and are accepted.
 * - Inside a `[]string`, a `null` element is `""`; inside an array of objects, a `null` element is
 *   an empty object. Any other element of the wrong type is an error naming its index.
 * - Times: a strict RFC 3339 string (`canon/gotime.ts`); any other JSON type is an error.
 *
 * The input is never modified: arrays are returned as new arrays, and objects are the input's own
 * (callers only read them).
 */

/** What a field must hold. Array faults name the whole field; element faults set `index`. */
export type FieldType = 'string' | 'bool' | 'int64' | 'object' | 'string-array' | 'object-array' | 'time';

export interface FieldFault {
  /** The type the field needs; for an element (`index` set), the element's type (`string` or `object`). */
  readonly want: FieldType;
  readonly key: string;
  /** The caller's prefix for `key`, exactly as the caller passed it. */
  readonly path: string;
  /** The element at fault, when one element of the array at `key` is wrong. */
  readonly index: number | undefined;
  /** The offending value (the element's, for an element fault). */
  readonly value: JsonValue;
  /** For `time`: the value is a string, but not RFC 3339. */
  readonly badTime: boolean;
  /** The caller's name for the element type of an object array (Go wording: `[]ReferenceRecord`). */
  readonly elementName: string | undefined;
}

/** Turns a fault into the error the caller's documents use (code and wording); the decoder throws it. */
export type FaultReporter = (fault: FieldFault) => Error;

function fault(
  report: FaultReporter,
  want: FieldType,
  key: string,
  path: string,
  value: JsonValue,
  extra: { index?: number; badTime?: boolean; elementName?: string | undefined } = {},
): Error {
  return report({
    want,
    key,
    path,
    index: extra.index,
    value,
    badTime: extra.badTime ?? false,
    elementName: extra.elementName,
  });
}

export function decodeString(report: FaultReporter, obj: JsonObject, key: string, path: string): string {
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw fault(report, 'string', key, path, v);
  return v;
}

export function decodeBool(report: FaultReporter, obj: JsonObject, key: string, path: string): boolean {
  const v = obj[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw fault(report, 'bool', key, path, v);
  return v;
}

/** 2^63, the double every int64 above 2^63 − 512 rounds to (so the int64 maximum itself is accepted). */
const INT64_LIMIT = 9223372036854775808;

export function decodeInt64(report: FaultReporter, obj: JsonObject, key: string, path: string): number {
  const v = obj[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v > INT64_LIMIT || v < -INT64_LIMIT) throw fault(report, 'int64', key, path, v);
  return v === 0 ? 0 : v;
}

/** A `map[string]any` (or struct pointer) field: undefined when absent or null. */
export function decodeObject(report: FaultReporter, obj: JsonObject, key: string, path: string): JsonObject | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isJsonObject(v)) throw fault(report, 'object', key, path, v);
  return v;
}

/** A slice-of-struct field; a null element is the zero struct (a new empty object). */
export function decodeObjectArray(report: FaultReporter, obj: JsonObject, key: string, path: string, elementName?: string): JsonObject[] {
  const v = obj[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw fault(report, 'object-array', key, path, v, { elementName });
  const out: JsonObject[] = new Array<JsonObject>(v.length);
  for (let i = 0; i < v.length; i++) {
    const item = v[i] as JsonValue;
    if (item === null) out[i] = {};
    else if (isJsonObject(item)) out[i] = item;
    else throw fault(report, 'object', key, path, item, { index: i, elementName });
  }
  return out;
}

/** A `[]string` field; a null element is "". */
export function decodeStringArray(report: FaultReporter, obj: JsonObject, key: string, path: string): string[] {
  const v = obj[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw fault(report, 'string-array', key, path, v);
  const out: string[] = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const item = v[i] as JsonValue;
    if (item === null) out[i] = '';
    else if (typeof item === 'string') out[i] = item;
    else throw fault(report, 'string', key, path, item, { index: i });
  }
  return out;
}

/** A `time.Time` field: the zero time when absent or null, else a strict RFC 3339 string. */
export function decodeTime(report: FaultReporter, obj: JsonObject, key: string, path: string): GoTime {
  const v = obj[key];
  if (v === undefined || v === null) return ZERO_TIME;
  if (typeof v !== 'string') throw fault(report, 'time', key, path, v);
  try {
    return parseRFC3339(v);
  } catch {
    throw fault(report, 'time', key, path, v, { badTime: true });
  }
}

// --- wordings --------------------------------------------------------------------------------------

const PLAIN_NOUN: Record<FieldType, string> = {
  string: 'a string',
  bool: 'a boolean',
  int64: 'an integer',
  object: 'a JSON object',
  'string-array': 'an array',
  'object-array': 'an array',
  time: 'an RFC 3339 string',
};

/**
 * Ward's own wording, used for intents, tokens and tool-call payloads: `context.sandbox.timeout_seconds
 * must be an integer`, `scope[2] must be a string`, `created_at: time must be an RFC 3339 string`,
 * `created_at: parsing time "x" as RFC 3339 failed` (`path` ends with its own separator).
 */
export function plainFaultMessage(f: FieldFault): string {
  const field = `${f.path}${f.key}`;
  if (f.want === 'time') {
    return f.badTime ? `${field}: parsing time ${JSON.stringify(f.value)} as RFC 3339 failed` : `${field}: time must be an RFC 3339 string`;
  }
  return `${f.index === undefined ? field : `${field}[${f.index}]`} must be ${PLAIN_NOUN[f.want]}`;
}

/**
 * Go's `UnmarshalTypeError` wording, used for strict documents (context envelopes, Wrkr
 * inventories, kill-switch state, runpacks, packs): `json: cannot unmarshal number into Go struct
 * field Envelope.records.ref_id of type string`. `root` is the Go struct name; `path` is joined to
 * `key` with `.` (Go names the field, not the element index).
 */
export function goFaultMessage(root: string, f: FieldFault): string {
  const field = f.path === '' ? f.key : `${f.path}.${f.key}`;
  if (f.want === 'time') {
    return f.badTime ? `${field}: parsing time ${JSON.stringify(f.value)} as RFC 3339 failed` : `${field}: Time.UnmarshalJSON: input is not a JSON string`;
  }
  const goType = goTypeName(f);
  const kind = goType === 'int64' && typeof f.value === 'number' ? `number ${f.value}` : goJsonKind(f.value);
  return `json: cannot unmarshal ${kind} into Go struct field ${root}.${field} of type ${goType}`;
}

function goTypeName(f: FieldFault): string {
  switch (f.want) {
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'int64':
      return 'int64';
    case 'object':
      return f.index === undefined ? 'map[string]interface {}' : (f.elementName ?? 'map[string]interface {}');
    case 'string-array':
      return '[]string';
    case 'object-array':
      return `[]${f.elementName ?? 'map[string]interface {}'}`;
    case 'time':
      return 'time.Time';
  }
}

/** Go's name for the JSON kind of a value, as it appears in `UnmarshalTypeError`. */
export function goJsonKind(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}
