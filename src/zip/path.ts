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

/** Longest entry name Ward writes or reads (bytes of UTF-16 code units; names are short paths). */
export const MAX_ENTRY_NAME_LENGTH = 1024;

/**
 * Why a name is not in canonical form, or undefined when it is. A canonical name is the one
 * spelling of a path that every reader and every file system agrees on:
 *
 * * safe (`unsafePathReason`): not empty, relative, no `..`, no NUL;
 * * `/` separators only (no `\`), no empty segment (`a//b`, a leading or trailing `/`, so no
 *   directory entries), no `.` segment (`./x`);
 * * no segment ending in `.` or a space and no `:` (Windows aliases: `run.json.` is `run.json`,
 *   `run.json:x` is a stream of `run.json`);
 * * no control characters (U+0000–U+001F, U+007F) and no leading or trailing white space;
 * * Unicode NFC (a decomposed `é` is an alias of the composed one on some file systems);
 * * at most `MAX_ENTRY_NAME_LENGTH` characters.
 *
 * Case is kept, but two names that differ only in case or Unicode compatibility form collide
 * (`caselessKey` in canon/fold.ts): on a case-insensitive file system they are one file.
 */
export function nonCanonicalNameReason(name: string): string | undefined {
  const unsafe = unsafePathReason(name);
  if (unsafe) return unsafe;
  if (name.length > MAX_ENTRY_NAME_LENGTH) return `entry name longer than ${MAX_ENTRY_NAME_LENGTH} characters`;
  if (goTrim(name) !== name) return 'entry name has leading or trailing white space';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'entry name contains a control character';
  if (name.includes('\\')) return 'entry name contains a backslash';
  const segments = name.split('/');
  if (segments.includes('')) return name.endsWith('/') ? 'directory entries are not allowed' : 'entry name has an empty segment';
  if (segments.includes('.')) return 'entry name has a "." segment';
  // Windows drops a trailing dot or space (`run.json.` is `run.json`) and reads `a:b` as stream `b` of `a`.
  if (segments.some((seg) => seg.endsWith('.') || seg.endsWith(' '))) return 'entry name has a segment ending in "." or a space';
  if (name.includes(':')) return 'entry name contains ":"';
  if (!PRINTABLE_ASCII.test(name) && name.normalize('NFC') !== name) return 'entry name is not in Unicode NFC form';
  return undefined;
}

/** Names made of printable ASCII only (nearly all): NFC leaves them as they are. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
