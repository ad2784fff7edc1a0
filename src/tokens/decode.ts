import {
  decodeInt64,
  decodeString,
  decodeStringArray,
  decodeTime,
  isJsonObject,
  plainFaultMessage,
  type FaultReporter,
  type GoTime,
  type JsonObject,
  type JsonValue,
} from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * A token or approved-script entry that cannot be used: malformed, failing normalization, expired
 * or badly signed where the caller throws rather than reports a reason code. `ERR_TOKEN_INVALID`,
 * exit 6. Gate validation turns it into the `*_token_invalid` reason code; minting commands report
 * it as a usage error.
 */
export class TokenInvalidError extends WardError {
  constructor(message: string) {
    super(ERROR_CODES.TOKEN_INVALID, message);
    this.name = 'TokenInvalidError';
  }
}

/** Typed field reads for one kind of token; a wrong type is `<what>: scope[1] must be a string`. */
export interface TokenFields {
  string(obj: JsonObject, key: string): string;
  strings(obj: JsonObject, key: string): string[];
  int(obj: JsonObject, key: string): number;
  time(obj: JsonObject, key: string): GoTime;
}

/**
 * Token fields are read by the one decoder (`canon/decode.ts`, the rules intents follow), with
 * errors worded for tokens: `approval token: max_targets must be an integer`.
 */
export function tokenFields(what: string): TokenFields {
  const report: FaultReporter = (fault) => new TokenInvalidError(`${what}: ${plainFaultMessage(fault)}`);
  return {
    string: (obj, key) => decodeString(report, obj, key, ''),
    strings: (obj, key) => decodeStringArray(report, obj, key, ''),
    int: (obj, key) => decodeInt64(report, obj, key, ''),
    time: (obj, key) => decodeTime(report, obj, key, ''),
  };
}

/** Decode a token-like artifact: it must be a JSON object, then `decode` reads its fields. */
export function decodeTokenObject<T>(value: JsonValue, what: string, fields: TokenFields, decode: (obj: JsonObject, f: TokenFields) => T): T {
  if (!isJsonObject(value)) throw new TokenInvalidError(`${what} must be a JSON object`);
  return decode(value, fields);
}
