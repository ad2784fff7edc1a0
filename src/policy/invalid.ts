import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Policy failures all exit 6 (`gate.md` §2.1, §2.5). The messages are the reference's, byte for
 * byte where the contract fixes them, so callers and golden tests can compare them directly.
 */
export function policyParseError(message: string, hint?: string): WardError {
  return new WardError(ERROR_CODES.POLICY_PARSE, `parse policy yaml: ${excerpt(message)}`, hint ? { hint } : {});
}

export function invalidPolicy(message: string, hint?: string): WardError {
  return new WardError(ERROR_CODES.POLICY_INVALID, excerpt(message), hint ? { hint } : {});
}

/**
 * Error messages quote the input (a key, a value, the YAML parser's view of a line). A wrong file
 * can make that quote megabytes long; the message keeps a short excerpt instead.
 */
export const MAX_MESSAGE_CHARS = 400;

function excerpt(message: string): string {
  if (message.length <= MAX_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_MESSAGE_CHARS)}… (${message.length - MAX_MESSAGE_CHARS} more characters)`;
}

/** A YAML source position, 1-based, columns counted in code points (as the reference's parser). */
export interface SourcePos {
  line: number;
  col: number;
}

export function formatPos(pos: SourcePos): string {
  return `[${pos.line}:${pos.col}]`;
}
