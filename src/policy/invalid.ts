import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Policy failures all exit 6 (`gate.md` §2.1, §2.5). The messages are the reference's, byte for
 * byte where the contract fixes them, so callers and golden tests can compare them directly.
 */
export function policyParseError(message: string, hint?: string): WardError {
  return new WardError(ERROR_CODES.POLICY_PARSE, `parse policy yaml: ${message}`, hint ? { hint } : {});
}

export function invalidPolicy(message: string, hint?: string): WardError {
  return new WardError(ERROR_CODES.POLICY_INVALID, message, hint ? { hint } : {});
}

/** A YAML source position, 1-based, columns counted in code points (as the reference's parser). */
export interface SourcePos {
  line: number;
  col: number;
}

export function formatPos(pos: SourcePos): string {
  return `[${pos.line}:${pos.col}]`;
}
