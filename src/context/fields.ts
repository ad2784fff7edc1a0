import { parseRFC3339, ZERO_TIME, type GoTime } from '../canon/gotime.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../canon/json.js';
import { parseStrictJson } from '../canon/strict-json.js';
import { WardError, type ErrorCode } from '../errors.js';

/**
 * Strict typed decoding of JSON documents into Go-like structs, shared by the context envelope,
 * Wrkr inventory and kill-switch state parsers. It reproduces what Go's encoding/json does for a
 * struct: `null` or an absent key leaves the zero value, while a value of the wrong JSON type is an
 * error (a string field given a number never becomes "1"). Messages follow Go's wording
 * (`json: cannot unmarshal number into Go struct field Envelope.records.ref_id of type string`)
 * behind a per-document prefix; they are diagnostics, not contract strings.
 */
export interface Decoder {
  /** Prepended to every message, e.g. `parse context envelope: `. */
  readonly prefix: string;
  /** The Go struct name used in type errors, e.g. `Envelope`. */
  readonly root: string;
  readonly code: ErrorCode;
}

export function decodeError(d: Decoder, message: string): WardError {
  return new WardError(d.code, d.prefix + message);
}

/**
 * JSON text to a value; syntax errors carry the decoder prefix. A key repeated in one object is
 * refused at any depth (`parse context envelope: duplicate key "records" at $`): Go's decoder keeps
 * the last one, which would let an appended member override what a reader saw first.
 */
export function decodeJsonText(d: Decoder, text: string): JsonValue {
  return parseStrictJson(text, d.code, { prefix: d.prefix, syntaxPrefix: '' });
}

/** The top-level value must be an object (Go: `cannot unmarshal array into Go value of type X`). */
export function expectRootObject(d: Decoder, value: JsonValue): JsonObject {
  if (!isJsonObject(value)) throw decodeError(d, `json: cannot unmarshal ${jsonKind(value)} into Go value of type ${d.root}`);
  return value;
}

/** Go's name for the JSON kind of a value, as it appears in UnmarshalTypeError. */
function jsonKind(value: JsonValue): string {
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

function typeError(d: Decoder, value: JsonValue, path: string, goType: string): WardError {
  const kind = goType === 'int64' && typeof value === 'number' ? `number ${value}` : jsonKind(value);
  return decodeError(d, `json: cannot unmarshal ${kind} into Go struct field ${d.root}.${path} of type ${goType}`);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** A string field: absent or null gives "". */
export function readString(d: Decoder, obj: JsonObject, key: string, path = ''): string {
  const value = obj[key];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw typeError(d, value, join(path, key), 'string');
  return value;
}

/** A bool field: absent or null gives false. */
export function readBool(d: Decoder, obj: JsonObject, key: string, path = ''): boolean {
  const value = obj[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw typeError(d, value, join(path, key), 'bool');
  return value;
}

// 2^63: the first float64 outside int64. (The literal 9223372036854775807 also parses to 2^63 in
// JS; that single ambiguous value is accepted.)
const INT64_LIMIT = 9223372036854775808;

/**
 * An int64 field: absent or null gives 0. The JSON number must be integral and inside int64. JSON
 * text such as `300.0` or `3e2` reaches us as the number 300 and is accepted (Go would refuse the
 * spelling); the value, which is all that is digested, is the same.
 */
export function readInt(d: Decoder, obj: JsonObject, key: string, path = ''): number {
  const value = obj[key];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value > INT64_LIMIT || value < -INT64_LIMIT) {
    throw typeError(d, value, join(path, key), 'int64');
  }
  return value;
}

/** A time.Time field: absent or null is the zero time; otherwise a strict RFC 3339 string. */
export function readTime(d: Decoder, obj: JsonObject, key: string, path = ''): GoTime {
  const value = obj[key];
  if (value === undefined || value === null) return ZERO_TIME;
  const field = join(path, key);
  if (typeof value !== 'string') throw decodeError(d, `${field}: Time.UnmarshalJSON: input is not a JSON string`);
  try {
    return parseRFC3339(value);
  } catch {
    throw decodeError(d, `${field}: parsing time ${JSON.stringify(value)} as RFC 3339 failed`);
  }
}

/** A map[string]any field: absent or null gives undefined. */
export function readObject(d: Decoder, obj: JsonObject, key: string, path = ''): JsonObject | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw typeError(d, value, join(path, key), 'map[string]interface {}');
  return value;
}

/**
 * A slice-of-struct field: absent or null gives []. A null element decodes to the zero struct
 * (an empty object), as in Go; any other non-object element is a type error.
 */
export function readObjectArray(d: Decoder, obj: JsonObject, key: string, goType: string, path = ''): JsonObject[] {
  const value = obj[key];
  if (value === undefined || value === null) return [];
  const field = join(path, key);
  if (!Array.isArray(value)) throw typeError(d, value, field, `[]${goType}`);
  return value.map((item) => {
    if (item === null) return {};
    if (!isJsonObject(item)) throw typeError(d, item, field, goType);
    return item;
  });
}

/** A []string field: absent or null gives []; every element must be a string. */
export function readStringArray(d: Decoder, obj: JsonObject, key: string, path = ''): string[] {
  const value = obj[key];
  if (value === undefined || value === null) return [];
  const field = join(path, key);
  if (!Array.isArray(value)) throw typeError(d, value, field, '[]string');
  return value.map((item) => {
    if (typeof item !== 'string') throw typeError(d, item, field, 'string');
    return item;
  });
}

/** Go's DisallowUnknownFields: any key that is not allowed is an error (the first one found is named). */
export function rejectUnknownFields(d: Decoder, obj: JsonObject, allowed: ReadonlySet<string>): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) throw decodeError(d, `json: unknown field ${JSON.stringify(key)}`);
  }
}
