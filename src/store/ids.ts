import { ERROR_CODES, WardError, type ErrorCode } from '../errors.js';
import type { ExitCode } from '../contract/exit-codes.js';

/**
 * Ids that become keys and file names: trace and event ids, run ids, pack ids, runpack manifest
 * digests. One rule, checked on every way in (store ingest and import, the daemon's routes,
 * `run record`, `pack build`), so that no id can name a path (`../x`, `a/b`), hide in a key
 * (`a\0b` splits a LevelDB key at its separator), or break a terminal or a file system.
 *
 * An id is 1 to 128 characters from `A–Z a–z 0–9 _ . -`, starting with a letter or digit. Ward's
 * own ids (24 or 64 hex characters) and the reference's run ids (`run_…`) all fit. Pure: no I/O.
 */
export const ID_MAX_LENGTH = 128;
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * What a lookup may name (the daemon's path parameters, `store show`): an id, an id prefix, or a
 * secondary reference such as a run id; `:` is also allowed. Never a path.
 */
export const LOOKUP_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** Why `value` is not a valid id, in words, or undefined when it is one. */
export function idProblem(value: unknown, pattern: RegExp = ID_PATTERN): string | undefined {
  if (typeof value !== 'string') return 'not a string';
  if (value === '') return 'empty';
  if (value.length > ID_MAX_LENGTH) return `longer than ${ID_MAX_LENGTH} characters`;
  if (value.includes('\0')) return 'contains NUL';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return 'contains a control character';
  if (/[/\\]/.test(value)) return 'contains a path separator';
  if (value === '.' || value === '..' || value.includes('..')) return 'contains ".."';
  if (!pattern.test(value)) {
    return pattern === ID_PATTERN
      ? "must start with a letter or digit and use only letters, digits, '_', '.', '-'"
      : "must start with a letter or digit and use only letters, digits, '_', '.', '-', ':'";
  }
  return undefined;
}

export function isValidId(value: unknown): value is string {
  return idProblem(value) === undefined;
}

/** Quote an id for a message: escaped (NUL shows as \u0000) and cut at 64 characters. */
export function quoteId(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

export interface CheckIdOptions {
  code?: ErrorCode;
  exitCode?: ExitCode;
  pattern?: RegExp;
}

/**
 * `value` when it is a valid id; otherwise a WardError naming the field and the problem, e.g.
 * `trace event_id "../x" is not a valid id: contains a path separator` (default code ERR_USAGE).
 */
export function checkId(what: string, value: unknown, options: CheckIdOptions = {}): string {
  const problem = idProblem(value, options.pattern);
  if (problem === undefined) return value as string;
  const message = `${what} ${quoteId(value)} is not a valid id: ${problem}`;
  return failId(message, options);
}

function failId(message: string, options: CheckIdOptions): never {
  throw new WardError(options.code ?? ERROR_CODES.USAGE, message, options.exitCode === undefined ? {} : { exitCode: options.exitCode });
}
