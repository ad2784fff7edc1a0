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
  // Archives, runpacks, packs and the pack store (issue 4).
  ZIP_INVALID: 'ERR_ZIP_INVALID',
  ZIP_DUPLICATE_ENTRY: 'ERR_ZIP_DUPLICATE_ENTRY',
  ZIP_UNSAFE_PATH: 'ERR_ZIP_UNSAFE_PATH',
  ZIP_ENTRY_TOO_LARGE: 'ERR_ZIP_ENTRY_TOO_LARGE',
  ZIP_BOMB: 'ERR_ZIP_BOMB',
  ZIP_CHECKSUM: 'ERR_ZIP_CHECKSUM',
  RUNPACK_INVALID: 'ERR_RUNPACK_INVALID',
  RUN_RECORD_INVALID: 'ERR_RUN_RECORD_INVALID',
  PACK_INVALID: 'ERR_PACK_INVALID',
  PACK_VERIFY_FAILED: 'ERR_PACK_VERIFY_FAILED',
  STORE_LOCKED: 'ERR_STORE_LOCKED',
  STORE_INVALID: 'ERR_STORE_INVALID',
  STORE_NOT_FOUND: 'ERR_STORE_NOT_FOUND',
  // A PostgreSQL store that cannot be reached (down, refused, timed out) or has no free connection.
  STORE_UNAVAILABLE: 'ERR_STORE_UNAVAILABLE',
  STORE_BUSY: 'ERR_STORE_BUSY',
  // The disk under the journal, store or trace files is full, over quota or failing (ENOSPC,
  // EDQUOT, EIO): a state the host recovers from by itself once writes succeed (issue 29).
  STORAGE_FULL: 'ERR_STORAGE_FULL',
  // `ward policy publish`: no ward serve replica activated the publication within the wait.
  POLICY_NOT_ACCEPTED: 'ERR_POLICY_NOT_ACCEPTED',
  // Gate inputs beside the intent and policy (issue: context envelopes, Wrkr, kill switch).
  WRKR_INVENTORY_INVALID: 'ERR_WRKR_INVENTORY_INVALID',
  KILL_SWITCH_INVALID: 'ERR_KILL_SWITCH_INVALID',
  CAPTURE_INVALID: 'ERR_CAPTURE_INVALID',
  // An approval or delegation token, or an approved-script entry or registry, that cannot be used
  // (malformed, not normalizable, expired or badly signed where no reason code reports it).
  TOKEN_INVALID: 'ERR_TOKEN_INVALID',
  // An MCP trust snapshot that cannot be read (the trust decision reports it as status invalid).
  MCP_TRUST_SNAPSHOT_INVALID: 'ERR_MCP_TRUST_SNAPSHOT_INVALID',
  // The SDK's guardTool refused to run a tool (verdict block, require_approval or dry_run).
  TOOL_BLOCKED: 'ERR_TOOL_BLOCKED',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

const DEFAULT_EXIT: Partial<Record<ErrorCode, ExitCode>> = {
  ERR_STATE_LOCK: EXIT.INTERNAL,
  ERR_IO: EXIT.INTERNAL,
  ERR_INTERNAL: EXIT.INTERNAL,
  ERR_SIGNATURE_INVALID: EXIT.VERIFY_FAILED,
  ERR_FAIL_CLOSED_DEPENDENCY: EXIT.BLOCKED,
  ERR_TOOL_BLOCKED: EXIT.BLOCKED,
  // A damaged or tampered archive is what verification exists to catch, so it is a verification
  // failure (exit 2), not a usage error.
  ERR_ZIP_INVALID: EXIT.VERIFY_FAILED,
  ERR_ZIP_DUPLICATE_ENTRY: EXIT.VERIFY_FAILED,
  ERR_ZIP_UNSAFE_PATH: EXIT.VERIFY_FAILED,
  ERR_ZIP_ENTRY_TOO_LARGE: EXIT.VERIFY_FAILED,
  ERR_ZIP_BOMB: EXIT.VERIFY_FAILED,
  ERR_ZIP_CHECKSUM: EXIT.VERIFY_FAILED,
  ERR_RUNPACK_INVALID: EXIT.VERIFY_FAILED,
  ERR_PACK_VERIFY_FAILED: EXIT.VERIFY_FAILED,
  ERR_STORE_LOCKED: EXIT.INTERNAL,
  ERR_STORE_INVALID: EXIT.INTERNAL,
  ERR_STORE_UNAVAILABLE: EXIT.INTERNAL,
  ERR_STORE_BUSY: EXIT.INTERNAL,
  ERR_STORAGE_FULL: EXIT.INTERNAL,
  ERR_POLICY_NOT_ACCEPTED: EXIT.INTERNAL,
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

/** An error as it crosses to or from a worker thread (structured clone keeps no class). */
export interface SerializedError {
  message: string;
  code?: ErrorCode;
  exitCode?: ExitCode;
  hint?: string;
}

export function serializeError(err: unknown): SerializedError {
  if (isWardError(err)) return { message: err.message, code: err.code, exitCode: err.exitCode, ...(err.hint ? { hint: err.hint } : {}) };
  return { message: err instanceof Error ? err.message : String(err) };
}

/** The error `serializeError` described: a `WardError` with its code when it had one. */
export function reviveError(e: SerializedError): Error {
  if (!e.code) return new Error(e.message);
  return new WardError(e.code, e.message, { ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}), ...(e.hint ? { hint: e.hint } : {}) });
}
