import { parseDocument } from 'yaml';
import { isJsonObject, parseStrictJson, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Regress config: real YAML 1.2 (core schema; JSON is YAML too), one document, duplicate keys
 * refused, aliases bounded. Errors are usage errors (exit 6) naming the file.
 */
export function parseYamlObject(text: string, what: string): JsonObject {
  const doc = parseDocument(text, { schema: 'core', version: '1.2', uniqueKeys: true, prettyErrors: false, strict: true });
  const first = doc.errors[0];
  if (first) throw usage(`parse ${what}: ${first.message.split('\n')[0]}`, what);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw usage(`parse ${what}: ${(err as Error).message}`, what);
  }
  if (!isJsonObject(value)) throw usage(`parse ${what}: expected a mapping at the top level`, what);
  return value as JsonObject;
}

/** fixture.json and capture receipts: JSON with duplicate keys refused. */
export function parseJsonObject(text: string, what: string): JsonObject {
  let value: JsonValue;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    throw usage(`parse ${what}: ${(err as Error).message}`, what);
  }
  if (!isJsonObject(value)) throw usage(`parse ${what}: expected a JSON object`, what);
  return value;
}

/** Keys of `obj` outside `known` are an error: a typo must not silently disable a check. */
export function rejectUnknownKeys(obj: JsonObject, known: readonly string[], what: string): void {
  const unknown = Object.keys(obj).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw usage(`${what}: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: ${known.join(', ')})`, what);
}

export function optionalString(obj: JsonObject, key: string, what: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw usage(`${what}: ${key} must be a string`, what);
  return v;
}

export function optionalStringArray(obj: JsonObject, key: string, what: string): string[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw usage(`${what}: ${key} must be a list of strings`, what);
  return v as string[];
}

export function optionalBoolean(obj: JsonObject, key: string, what: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw usage(`${what}: ${key} must be true or false`, what);
  return v;
}

export function optionalInteger(obj: JsonObject, key: string, what: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw usage(`${what}: ${key} must be an integer`, what);
  return v;
}

export function usage(message: string, what?: string): WardError {
  return new WardError(ERROR_CODES.USAGE, message, what ? { hint: `fix ${what} (see docs/regress.md)` } : {});
}
