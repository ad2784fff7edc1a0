import { isJsonObject, type JsonObject, type JsonValue } from '../canon/index.js';
import { isWardError } from '../errors.js';

/**
 * Decode a token-like artifact with the intent decoder's Go `encoding/json` field semantics
 * (`src/intent/fields.ts`), reporting problems as token errors rather than intent errors.
 */
export class TokenInvalidError extends Error {}

export function decodeTokenObject<T>(value: JsonValue, what: string, decode: (obj: JsonObject) => T): T {
  if (!isJsonObject(value)) throw new TokenInvalidError(`${what} must be a JSON object`);
  try {
    return decode(value);
  } catch (err) {
    if (isWardError(err)) throw new TokenInvalidError(`${what}: ${err.message.replace(/^parse intent json: /, '')}`);
    throw err;
  }
}
