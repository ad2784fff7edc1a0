import { closeSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { ERROR_CODES, WardError } from '../errors.js';

export interface FileLockOptions {
  /** Give up after this long (the reference uses 3 s). */
  timeoutMs: number;
  /** A lock file older than this is presumed left by a crashed process (the reference uses 15 s). */
  staleMs: number;
}

/**
 * Run `fn` while holding `<path>` as an O_EXCL lock file. Synchronous on purpose: the critical
 * sections (read-modify-write of a small JSON file) are microseconds long, and a synchronous
 * section cannot interleave with other work of this process.
 */
export function withFileLock<T>(path: string, options: FileLockOptions, fn: () => T): T {
  const deadline = Date.now() + options.timeoutMs;
  let fd: number | undefined;
  for (let attempt = 0; fd === undefined; attempt++) {
    try {
      fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new WardError(ERROR_CODES.STATE_LOCK, `acquire lock ${path}: ${(err as Error).message}`, { cause: err });
      }
      removeIfStale(path, options.staleMs);
      if (Date.now() > deadline) {
        throw new WardError(ERROR_CODES.STATE_LOCK, `acquire lock ${path}: timeout after ${options.timeoutMs} ms`, {
          hint: `another ward process holds ${path}; if none is running, delete the file`,
        });
      }
      sleepSync(Math.min(2 + attempt, 25));
    }
  }
  try {
    return fn();
  } finally {
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // Already removed as stale by another process: nothing left to release.
    }
  }
}

function removeIfStale(path: string, staleMs: number): void {
  try {
    if (Date.now() - statSync(path).mtimeMs > staleMs) unlinkSync(path);
  } catch {
    // Vanished between the failed open and now: the next attempt will tell.
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
