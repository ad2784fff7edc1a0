import { decodeBool, decodeInt64, decodeObject, decodeObjectArray, decodeString, decodeStringArray, decodeTime, goFaultMessage, goJsonKind, isJsonObject, parseStrictJson, type FaultReporter, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';
import { WardError, type ErrorCode } from '../errors.js';

/**
 * Strict typed decoding of JSON documents into Go-like structs, shared by the context envelope,
 * Wrkr inventory, kill-switch state, runpack and pack parsers. The fields are read by the one
 * decoder (`canon/decode.ts`: `null` or an absent key leaves the zero value, a value of the wrong
 * JSON type is an error, a string field given a number never becomes "1"). Messages follow Go's wording
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
  if (!isJsonObject(value)) throw decodeError(d, `json: cannot unmarshal ${goJsonKind(value)} into Go value of type ${d.root}`);
  return value;
}

const reporters = new WeakMap<Decoder, FaultReporter>();

/** Turns a decoder fault into this document's error, in Go's wording (one reporter per document kind). */
function reporter(d: Decoder): FaultReporter {
  let report = reporters.get(d);
  if (report === undefined) {
    report = (fault) => decodeError(d, goFaultMessage(d.root, fault));
    reporters.set(d, report);
  }
  return report;
}

/** A string field: absent or null gives "". */
export function readString(d: Decoder, obj: JsonObject, key: string, path = ''): string {
  return decodeString(reporter(d), obj, key, path);
}

/** A bool field: absent or null gives false. */
export function readBool(d: Decoder, obj: JsonObject, key: string, path = ''): boolean {
  return decodeBool(reporter(d), obj, key, path);
}

/** An int64 field: absent or null gives 0 (the integer rule is in `canon/decode.ts`). */
export function readInt(d: Decoder, obj: JsonObject, key: string, path = ''): number {
  return decodeInt64(reporter(d), obj, key, path);
}

/** A time.Time field: absent or null is the zero time; otherwise a strict RFC 3339 string. */
export function readTime(d: Decoder, obj: JsonObject, key: string, path = ''): GoTime {
  return decodeTime(reporter(d), obj, key, path);
}

/** A map[string]any field: absent or null gives undefined. */
export function readObject(d: Decoder, obj: JsonObject, key: string, path = ''): JsonObject | undefined {
  return decodeObject(reporter(d), obj, key, path);
}

/** A slice-of-struct field: absent or null gives []; a null element is the zero struct `{}`. */
export function readObjectArray(d: Decoder, obj: JsonObject, key: string, goType: string, path = ''): JsonObject[] {
  return decodeObjectArray(reporter(d), obj, key, path, goType);
}

/** A []string field: absent or null gives []; a null element is "", as in Go. */
export function readStringArray(d: Decoder, obj: JsonObject, key: string, path = ''): string[] {
  return decodeStringArray(reporter(d), obj, key, path);
}

/** Go's DisallowUnknownFields: any key that is not allowed is an error (the first one found is named). */
export function rejectUnknownFields(d: Decoder, obj: JsonObject, allowed: ReadonlySet<string>): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) throw decodeError(d, `json: unknown field ${JSON.stringify(key)}`);
  }
}
