import { writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/**
 * The system calls through which Ward's journal and atomic files write data, in one object so a
 * test can make them fail as a full or failing disk does (ENOSPC, EIO, a short write) with the real
 * journal and store around them (tests/faults). Production code calls these and nothing else for
 * those writes; nothing here changes behaviour.
 */
export const fsSeam = {
  /** write(2) at a position; returns the bytes written (possibly fewer than asked). */
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number | null): number {
    return writeSync(fd, buffer, offset, length, position);
  },
  /** Positional write through a file handle; resolves with the bytes written. */
  async write(fh: FileHandle, buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<number> {
    return (await fh.write(buffer, offset, length, position)).bytesWritten;
  },
};

/** Write all of `bytes` at `position` (a short write continues where it stopped; a write of 0 bytes is ENOSPC). */
export function writeFullySync(fd: number, bytes: Uint8Array, position: number | null): void {
  let written = 0;
  while (written < bytes.length) {
    const n = fsSeam.writeSync(fd, bytes, written, bytes.length - written, position === null ? null : position + written);
    if (n <= 0) throw noProgress();
    written += n;
  }
}

export async function writeFully(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const n = await fsSeam.write(fh, bytes, written, bytes.length - written, position + written);
    if (n <= 0) throw noProgress();
    written += n;
  }
}

function noProgress(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write made no progress'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}
