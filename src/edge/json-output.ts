import { EXIT, EXIT_CODE_INFO, type ExitCode } from '../contract/exit-codes.js';
import { isWardError } from '../errors.js';

/**
 * One line of JSON with keys sorted at every depth and Go's HTML-safe escaping, as the reference
 * prints its `--json` output (marshal → map → marshal). The CLI, the daemon's replies and the MCP
 * commands all print through it.
 */
export function goJsonLine(value: unknown): string {
  return escapeGoHtml(JSON.stringify(sortKeysDeep(value)));
}

function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) out[key] = sortKeysDeep(child);
    }
    return out;
  }
  return value;
}

function escapeGoHtml(text: string): string {
  return text.replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Drop keys whose values are Go-empty ("" 0 false [] {} undefined null); `keep` names survive. */
export function omitEmpty<T extends Record<string, unknown>>(obj: T, keep: readonly string[] = ['ok']): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (keep.includes(key) || !isGoEmpty(value)) out[key] = value;
  }
  return out as Partial<T>;
}

export function isGoEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

/** Fields added to any JSON output that carries an `error` (`cli.md` §7.4). */
export function errorEnvelope(exitCode: ExitCode, hint?: string): Record<string, unknown> {
  const info = EXIT_CODE_INFO[exitCode];
  return {
    error_code: info.errorCode,
    error_category: info.errorCategory,
    retryable: exitCode === EXIT.INTERNAL,
    hint: hint ?? info.hint,
  };
}

export interface CommandFailure {
  exitCode: ExitCode;
  json: Record<string, unknown>;
  text: string;
}

/** Turn any thrown value into the failure shape (`{ok:false, error, …envelope}`); unknown errors are internal failures. */
export function describeFailure(err: unknown): CommandFailure {
  if (isWardError(err)) {
    const json: Record<string, unknown> = { ok: false, error: err.message, ...errorEnvelope(err.exitCode, err.hint) };
    if (err.details) Object.assign(json, err.details);
    // `details.source` names the input the error is about (a policy file, "stdin").
    const source = typeof err.details?.['source'] === 'string' ? `${err.details['source']}: ` : '';
    const text = `error: ${source}${err.message}`;
    return { exitCode: err.exitCode, json, text: err.hint ? `${text}\nhint: ${err.hint}` : text };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    exitCode: EXIT.INTERNAL,
    json: { ok: false, error: message, ...errorEnvelope(EXIT.INTERNAL) },
    text: `error: ${message}`,
  };
}
