import { ERROR_CODES, WardError } from '../errors.js';

/**
 * A normalization failure: the intent is "not evaluable" (`gate.md` §1.7). Messages are the
 * reference's, byte for byte; the CLI prefixes them with `normalize intent: `.
 */
export function invalidIntent(message: string, hint?: string): WardError {
  return new WardError(ERROR_CODES.INTENT_INVALID, message, hint ? { hint } : {});
}
