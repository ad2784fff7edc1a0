import {
  decodeBool,
  decodeInt64,
  decodeObject,
  decodeObjectArray,
  decodeString,
  decodeStringArray,
  decodeTime,
  plainFaultMessage,
  type FaultReporter,
  type GoTime,
  type JsonObject,
} from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Intent fields, read by the one decoder (`canon/decode.ts`, Go `encoding/json` rules: absent and
 * `null` give the zero value, a value of the wrong JSON type is an error). A decode error is
 * `parse intent json: …` (`ERR_INTENT_PARSE`, always exit 6). Unknown keys are never looked at,
 * so they are ignored as in the reference. `path` ends with its separator (`context.`).
 */
export function parseError(message: string): WardError {
  return new WardError(ERROR_CODES.INTENT_PARSE, `parse intent json: ${message}`);
}

const report: FaultReporter = (fault) => parseError(plainFaultMessage(fault));

export function readString(obj: JsonObject, key: string, path: string): string {
  return decodeString(report, obj, key, path);
}

export function readBool(obj: JsonObject, key: string, path: string): boolean {
  return decodeBool(report, obj, key, path);
}

export function readInt(obj: JsonObject, key: string, path: string): number {
  return decodeInt64(report, obj, key, path);
}

export function readObject(obj: JsonObject, key: string, path: string): JsonObject | undefined {
  return decodeObject(report, obj, key, path);
}

export function readObjectArray(obj: JsonObject, key: string, path: string): JsonObject[] {
  return decodeObjectArray(report, obj, key, path);
}

export function readStringArray(obj: JsonObject, key: string, path: string): string[] {
  return decodeStringArray(report, obj, key, path);
}

export function readTime(obj: JsonObject, key: string, path: string): GoTime {
  return decodeTime(report, obj, key, path);
}
