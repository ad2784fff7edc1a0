/** Process exit codes: public API, identical to the reference (`gate.md` §5.3, `cli.md` §7.3). */
export const EXIT = {
  OK: 0,
  INTERNAL: 1,
  VERIFY_FAILED: 2,
  BLOCKED: 3,
  APPROVAL_REQUIRED: 4,
  REGRESS_FAILED: 5,
  INVALID_INPUT: 6,
  DEPENDENCY_MISSING: 7,
  UNSAFE_OPERATION: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

interface ExitCodeInfo {
  /** `error_code` in the JSON error envelope. */
  errorCode: string;
  /** `error_category` in the JSON error envelope. */
  errorCategory: string;
  /** Fixed `hint` text per exit code (reference wording). */
  hint: string;
  meaning: string;
}

export const EXIT_CODE_INFO: Readonly<Record<ExitCode, ExitCodeInfo>> = {
  0: { errorCode: 'ok', errorCategory: 'ok', hint: '', meaning: 'success (allow, dry_run, simulate, verified)' },
  1: {
    errorCode: 'internal_failure',
    errorCategory: 'internal_failure',
    hint: 'retry after checking local environment and logs',
    meaning: 'internal or runtime failure (I/O, lock contention, timeout)',
  },
  2: {
    errorCode: 'verification_failed',
    errorCategory: 'verification_failed',
    hint: 're-run verify after checking artifact integrity',
    meaning: 'verification failed (signature, digest, pack integrity) or a diff found changes',
  },
  3: {
    errorCode: 'policy_blocked',
    errorCategory: 'policy_blocked',
    hint: 'inspect reason_codes and adjust policy or intent',
    meaning: 'policy blocked (verdict block, or a fail-closed dependency was unavailable)',
  },
  4: {
    errorCode: 'approval_required',
    errorCategory: 'approval_required',
    hint: 'provide a valid approval token and retry',
    meaning: 'approval required',
  },
  5: {
    errorCode: 'regress_failed',
    errorCategory: 'internal_failure',
    hint: 'retry after checking local environment and logs',
    meaning: 'deterministic regression failure',
  },
  6: {
    errorCode: 'invalid_input',
    errorCategory: 'invalid_input',
    hint: 'check command usage and input schema',
    meaning: 'invalid input or usage',
  },
  7: {
    errorCode: 'dependency_missing',
    errorCategory: 'dependency_missing',
    hint: 'install or configure the missing dependency and retry',
    meaning: 'missing dependency (doctor found something not fixable)',
  },
  8: {
    errorCode: 'unsafe_operation',
    errorCategory: 'internal_failure',
    hint: 'pass explicit unsafe flags only for approved replay paths',
    meaning: 'unsafe operation blocked',
  },
};

