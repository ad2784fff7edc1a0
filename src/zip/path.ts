import { goTrim } from '../canon/index.js';

/**
 * The name readers compare entries by: trimmed, with `\` read as `/` (the reference's
 * `zipx.DuplicatePaths`). Two entries with the same key are duplicates.
 */
export function entryKey(name: string): string {
  return goTrim(name).replaceAll('\\', '/');
}

/**
 * Why a name may not be extracted or trusted, or undefined when it is safe: empty, NUL bytes,
 * absolute (`/x`, `C:x`, `\\host`) or climbing out with a `..` segment.
 */
export function unsafePathReason(name: string): string | undefined {
  const key = entryKey(name);
  if (key === '') return 'empty entry name';
  if (key.includes('\0')) return 'entry name contains NUL';
  if (key.startsWith('/')) return 'absolute entry path';
  if (/^[A-Za-z]:/.test(key)) return 'absolute entry path (drive letter)';
  if (key.split('/').includes('..')) return 'entry path traverses parent directories';
  return undefined;
}
