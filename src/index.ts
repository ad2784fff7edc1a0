// Ward's public library surface. Everything not exported here is private.
export * from './canon/index.js';
export { WardError, ERROR_CODES, isWardError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { EXIT, EXIT_CODE_INFO } from './contract/exit-codes.js';
export type { ExitCode } from './contract/exit-codes.js';
export type * from './intent/types.js';
export type * from './policy/types.js';
export { VERDICTS } from './policy/types.js';
export { WARD_VERSION } from './version.js';
