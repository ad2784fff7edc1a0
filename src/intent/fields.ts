import { isJsonObject, type JsonObject, type JsonValue } from '../canon/json.js';
import { parseJsonTime, type GoTime } from '../canon/gotime.js';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Typed field access with Go `encoding/json` semantics: absent and `null` give the zero value, a
 * value of the wrong JSON type is a decode error (`parse intent json: …`, always exit 6). Unknown
 * keys are never looked at, so they are ignored as in the reference.
 */
export function parseError(message: string): WardError {
  return new WardError(ERROR_CODES.INTENT_PARSE, `parse intent json: ${message}`);
}

export function readString(obj: JsonObject, key: string, path: string): string {
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw parseError(`${path}${key} must be a string`);
  return v;
}

export function readBool(obj: JsonObject, key: string, path: string): boolean {
  const v = obj[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw parseError(`${path}${key} must be a boolean`);
  return v;
}

export function readInt(obj: JsonObject, key: string, path: string): number {
  const v = obj[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw parseError(`${path}${key} must be an integer`);
  return v;
}

export function readObject(obj: JsonObject, key: string, path: string): JsonObject | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isJsonObject(v)) throw parseError(`${path}${key} must be a JSON object`);
  return v;
}

export function readArray(obj: JsonObject, key: string, path: string): JsonValue[] {
  const v = obj[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw parseError(`${path}${key} must be an array`);
  return v;
}

export function readObjectArray(obj: JsonObject, key: string, path: string): JsonObject[] {
  const list = readArray(obj, key, path);
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (item === null) list[i] = {};
    else if (!isJsonObject(item)) throw parseError(`${path}${key}[${i}] must be a JSON object`);
  }
  return list as JsonObject[];
}

export function readStringArray(obj: JsonObject, key: string, path: string): string[] {
  const list = readArray(obj, key, path);
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (item === null) list[i] = '';
    else if (typeof item !== 'string') throw parseError(`${path}${key}[${i}] must be a string`);
  }
  return list as string[];
}

export function readTime(obj: JsonObject, key: string, path: string): GoTime {
  try {
    return parseJsonTime(obj[key], `${path}${key}`);
  } catch (err) {
    throw parseError((err as Error).message);
  }
}
