import { isJsonDuplicateKeyError, parseJsonText, type JsonValue } from './json.js';
import { ERROR_CODES, WardError, type ErrorCode } from '../errors.js';

export { JsonDuplicateKeyError, isJsonDuplicateKeyError, parseJsonText } from './json.js';

export interface StrictJsonOptions {
  /** Prepended to the message, e.g. `parse intent json: `. */
  prefix?: string;
  /** Message prefix for a syntax error (default `invalid JSON: `), after `prefix`. */
  syntaxPrefix?: string;
  hint?: string;
}

/**
 * Parse JSON text into a value or a `WardError` with `code`. `parseJsonText` is the one parser (it
 * refuses duplicate member names at any depth); this only maps its errors. A duplicate carries
 * `details` (`duplicate_key`, `duplicate_key_path`), which the CLI's JSON error output and the
 * daemon's error body include.
 *
 * The default code, SIGNATURE_INVALID, is that of signed artifacts (traces, tokens, packs,
 * captures): a record could otherwise show a reader one value while a verifier hashed another.
 */
export function parseStrictJson(text: string, code: ErrorCode = ERROR_CODES.SIGNATURE_INVALID, options: StrictJsonOptions = {}): JsonValue {
  try {
    return parseJsonText(text);
  } catch (err) {
    throw strictJsonError(err, code, options);
  }
}

/** The WardError for an error thrown by `parseJsonText` (anything else is returned as it is). */
export function strictJsonError(err: unknown, code: ErrorCode, options: StrictJsonOptions = {}): WardError {
  const prefix = options.prefix ?? '';
  const hint = options.hint === undefined ? {} : { hint: options.hint };
  if (isJsonDuplicateKeyError(err)) {
    return new WardError(code, `${prefix}${err.message}`, {
      cause: err,
      details: duplicateKeyDetails(err),
      hint: `a key may appear only once in each JSON object: remove the repeated ${JSON.stringify(err.key)}`,
    });
  }
  return new WardError(code, `${prefix}${options.syntaxPrefix ?? 'invalid JSON: '}${(err as Error).message}`, { cause: err, ...hint });
}

/** Machine-readable location of a duplicate: the key and the JSONPath of the repeated member. */
export function duplicateKeyDetails(err: { key: string; memberPath: string }): Record<string, unknown> {
  return { duplicate_key: err.key, duplicate_key_path: err.memberPath };
}
