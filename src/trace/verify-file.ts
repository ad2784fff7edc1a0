import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';
import type { VerifyKey } from '../keys/index.js';
import { verifyTraceText, type TraceVerification } from './verify.js';

export interface TraceFileVerification extends TraceVerification {
  path: string;
}

export interface TracePathVerification {
  results: TraceFileVerification[];
  summary: { total: number; verified: number; failed: number };
}

/** Files a directory verify picks up: traces Ward or the reference wrote, and exported wrappers. */
const TRACE_FILE = /^(?:trace_.*\.json|.*\.jws|.*\.dsse\.json)$/;

/** Verify one file. An unreadable file is a usage error (exit 6), not a failed verification. */
export function verifyTraceFile(path: string, keys: readonly VerifyKey[]): TraceFileVerification {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `read trace ${path}: ${(err as Error).message}`, { cause: err });
  }
  return { path, ...verifyTraceText(text, keys) };
}

/** Verify a file, or every trace file directly inside a directory (sorted by name). */
export function verifyTracePath(path: string, keys: readonly VerifyKey[]): TracePathVerification {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `read trace ${path}: ${(err as Error).message}`, { cause: err });
  }
  const files = isDir
    ? readdirSync(path, { withFileTypes: true })
        .filter((entry) => entry.isFile() && TRACE_FILE.test(entry.name))
        .map((entry) => join(path, entry.name))
        .sort()
    : [path];
  const results = files.map((file) => verifyTraceFile(file, keys));
  const verified = results.filter((result) => result.ok).length;
  return { results, summary: { total: results.length, verified, failed: results.length - verified } };
}
