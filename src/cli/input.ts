import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseRFC3339, type GoTime } from '../canon/gotime.js';
import type { JsonValue } from '../canon/json.js';
import { parseStrictJson } from '../canon/strict-json.js';
import { ERROR_CODES, WardError, type ErrorCode } from '../errors.js';
import type { CliContext } from './context.js';

/** Read a file named on the command line (`-` is standard input), with an error that names the flag. */
export async function readInputText(ctx: CliContext, path: string, what: string): Promise<string> {
  if (path === '-') return ctx.readStdin();
  try {
    return readFileSync(resolve(ctx.cwd, path), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new WardError(ERROR_CODES.USAGE, `read ${what} ${path}: ${reason}`, { hint: `check the path given for the ${what}` });
  }
}

/**
 * Parse JSON text; `prefix` names the artifact in the error (`parse intent json: …`). A key repeated
 * in one object is refused like a syntax error (`parse intent json: duplicate key "targets" at $`,
 * exit 6 for the codes input errors use), with `duplicate_key` and `duplicate_key_path` in `--json`
 * output.
 */
export function parseJsonInput(text: string, prefix: string, code: ErrorCode = ERROR_CODES.USAGE, options: { hint?: string } = {}): JsonValue {
  return parseStrictJson(text, code, { prefix: `${prefix}: `, syntaxPrefix: '', ...options });
}

/** `--evaluation-time`: strict RFC 3339, or undefined when the flag was not given. */
export function parseEvaluationTime(text: string | undefined): GoTime | undefined {
  if (text === undefined) return undefined;
  try {
    return parseRFC3339(text);
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `invalid --evaluation-time: ${(err as Error).message}`, {
      hint: 'use RFC 3339, e.g. 2026-03-12T12:00:00Z',
    });
  }
}
