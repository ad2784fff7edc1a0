import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseJsonText, type JsonValue } from '../canon/json.js';
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

/** Parse JSON text; `prefix` names the artifact in the error (`parse intent json: …`). */
export function parseJsonInput(text: string, prefix: string, code: ErrorCode = ERROR_CODES.USAGE): JsonValue {
  try {
    return parseJsonText(text);
  } catch (err) {
    throw new WardError(code, `${prefix}: ${(err as Error).message}`);
  }
}
