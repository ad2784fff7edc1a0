import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Write bytes durably and atomically: temp file in the same directory, fsync, rename over the
 * target, fsync the directory. A reader (or a crash) sees the old file or the whole new one.
 */
export function writeBytesDurably(path: string, bytes: Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', mode);
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // never created or already renamed
    }
    throw new WardError(ERROR_CODES.IO, `write ${path}: ${(err as Error).message}`, { cause: err });
  }
  syncDirectory(dir);
}

/** fsync a directory so created, renamed or removed names survive a crash. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not supported everywhere (e.g. some network file systems); file contents are already synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
