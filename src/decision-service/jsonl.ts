import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { withFileLock } from '../state/file-lock.js';

/** The reference lock timings: 3 s to acquire, a lock file older than 15 s is stale. */
const LOCK = { timeoutMs: 3000, staleMs: 15000 };

/**
 * Append one line to a JSONL file, append-only and locked across processes (`<path>.lock`, the
 * state module's O_EXCL lock), fsynced before returning. Creates the file (0600) and its directory.
 */
export function appendJsonLine(path: string, line: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
  withFileLock(`${path}.lock`, LOCK, () => {
    const fd = openSync(path, 'a', 0o600);
    try {
      writeSync(fd, line.endsWith('\n') ? line : line + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
}
