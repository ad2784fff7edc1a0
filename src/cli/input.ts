import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseRFC3339, parseStrictJson, type GoTime, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError, type ErrorCode } from '../errors.js';
import type { CliContext } from './context.js';

/**
 * The largest JSON input a command reads (intents, envelopes, traces, inventories). Far above any
 * real artifact; it keeps a wrong file (a log, a dump) from costing seconds and gigabytes first.
 */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Read a file named on the command line (`-` is standard input), with an error that names the flag. */
export async function readInputText(ctx: CliContext, path: string, what: string): Promise<string> {
  if (path === '-') return checkInputSize(await ctx.readStdin(), 'standard input', what);
  try {
    const full = resolve(ctx.cwd, path);
    const size = statSync(full).size;
    if (size > MAX_INPUT_BYTES) throw tooLarge(path, what, size);
    return readFileSync(full, 'utf8');
  } catch (err) {
    if (err instanceof WardError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new WardError(ERROR_CODES.USAGE, `read ${what} ${path}: ${reason}`, { hint: `check the path given for the ${what}` });
  }
}

function checkInputSize(text: string, path: string, what: string): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_INPUT_BYTES) throw tooLarge(path, what, bytes);
  return text;
}

function tooLarge(path: string, what: string, bytes: number): WardError {
  return new WardError(ERROR_CODES.USAGE, `read ${what} ${path}: ${(bytes / 1048576).toFixed(1)} MiB is over the ${MAX_INPUT_BYTES / 1048576} MiB input limit`, {
    hint: `check that ${path} is the ${what} you meant to pass`,
  });
}

/**
 * Parse JSON text; `prefix` names the artifact in the error (`parse intent json: …`). A key repeated
 * in one object is refused like a syntax error (`parse intent json: duplicate key "targets" at $`,
 * exit 6 for the codes input errors use), with `duplicate_key` and `duplicate_key_path` in `--json`
 * output.
 */
export function parseJsonInput(text: string, prefix: string, code: ErrorCode = ERROR_CODES.USAGE, options: { hint?: string } = {}): JsonValue {
  const looksLikePolicy = /^(?:rules|default_verdict|fail_closed|schema_version)\s*:/m.test(text.slice(0, 65_536));
  const hint = looksLikePolicy ? 'this looks like a policy (YAML), not JSON: pass it as --policy, and the JSON file as --intent' : options.hint;
  return parseStrictJson(text, code, { prefix: `${prefix}: `, syntaxPrefix: '', ...options, ...(hint ? { hint } : {}) });
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

/** Commander's accumulator for a repeatable option (`--flag a --flag b` → `['a', 'b']`). */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];
