import { EXIT, type ExitCode } from './contract/exit-codes.js';

/**
 * Stable error codes. Callers branch on `code`, never on messages; the message is for people and
 * (where the contract fixes it) byte-compatible with the reference implementation.
 */
export const ERROR_CODES = {
  JCS_INVALID_VALUE: 'ERR_JCS_INVALID_VALUE',
  JCS_TOO_DEEP: 'ERR_JCS_TOO_DEEP',
  TIME_INVALID: 'ERR_TIME_INVALID',
  INTENT_PARSE: 'ERR_INTENT_PARSE',
  INTENT_INVALID: 'ERR_INTENT_INVALID',
  POLICY_PARSE: 'ERR_POLICY_PARSE',
  POLICY_INVALID: 'ERR_POLICY_INVALID',
  POLICY_LEGACY: 'ERR_POLICY_LEGACY',
  POLICY_PROFILE: 'ERR_POLICY_PROFILE',
  ENVELOPE_INVALID: 'ERR_ENVELOPE_INVALID',
  ENVELOPE_BINDING: 'ERR_ENVELOPE_BINDING',
  KEY_INVALID: 'ERR_KEY_INVALID',
  KEY_PERMISSIONS: 'ERR_KEY_PERMISSIONS',
  KEY_MISSING: 'ERR_KEY_MISSING',
  SIGNATURE_INVALID: 'ERR_SIGNATURE_INVALID',
  STATE_LOCK: 'ERR_STATE_LOCK',
  STATE_INVALID: 'ERR_STATE_INVALID',
  USAGE: 'ERR_USAGE',
  IO: 'ERR_IO',
  FAIL_CLOSED_DEPENDENCY: 'ERR_FAIL_CLOSED_DEPENDENCY',
  INTERNAL: 'ERR_INTERNAL',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

const DEFAULT_EXIT: Partial<Record<ErrorCode, ExitCode>> = {
  ERR_STATE_LOCK: EXIT.INTERNAL,
  ERR_IO: EXIT.INTERNAL,
  ERR_INTERNAL: EXIT.INTERNAL,
  ERR_SIGNATURE_INVALID: EXIT.VERIFY_FAILED,
  ERR_FAIL_CLOSED_DEPENDENCY: EXIT.BLOCKED,
};

export interface WardErrorOptions {
  exitCode?: ExitCode;
  cause?: unknown;
  /** Structured extras surfaced in the CLI's JSON envelope (e.g. `migration`). */
  details?: Record<string, unknown>;
  /** Text shown after the error that tells a person what to do next. */
  hint?: string;
}

/** Every error Ward raises on purpose. Anything else reaching the CLI is an internal failure. */
export class WardError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCode;
  readonly details: Record<string, unknown> | undefined;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: WardErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WardError';
    this.code = code;
    this.exitCode = options.exitCode ?? DEFAULT_EXIT[code] ?? EXIT.INVALID_INPUT;
    this.details = options.details;
    this.hint = options.hint;
  }
}

export function isWardError(value: unknown): value is WardError {
  return value instanceof WardError;
}
