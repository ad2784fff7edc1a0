import { deflateSync } from 'fflate';
import { crc32 } from 'node:zlib';
import { compareUtf8 } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { entryKey, unsafePathReason } from './path.js';
import {
  CENTRAL_HEADER_LEN,
  CENTRAL_HEADER_SIG,
  DATA_DESCRIPTOR_LEN,
  DATA_DESCRIPTOR_SIG,
  END_OF_CENTRAL_DIR_LEN,
  END_OF_CENTRAL_DIR_SIG,
  EXTENDED_TIMESTAMP_ID,
  FLAG_DATA_DESCRIPTOR,
  FLAG_UTF8,
  LOCAL_HEADER_LEN,
  LOCAL_HEADER_SIG,
  METHOD_DEFLATE,
  S_IFREG,
  VERSION_MADE_BY_UNIX_20,
  VERSION_NEEDED_20,
} from './format.js';

export interface ZipFileInput {
  /** Entry name with `/` separators; never a directory. */
  path: string;
  data: Uint8Array;
  /** Unix permission bits; normalized to 0644 or 0755. */
  mode?: number;
}

/** MS-DOS date of 1980-01-01 (day 1, month 1, year offset 0) and time 00:00:00. */
const DOS_DATE_1980 = 0x0021;
const DOS_TIME_MIDNIGHT = 0x0000;
const UNIX_1980 = 315532800;
/** Fixed deflate parameters: with fflate pinned, the same input always gives the same bytes. */
const DEFLATE_OPTIONS = { level: 5 } as const;
const MAX_UINT32 = 0xffffffff;

/** The reference's mode normalization: 0 → 0644, any execute bit → 0755, otherwise 0644. */
export function normalizeMode(mode: number | undefined): number {
  if (!mode) return 0o644;
  return (mode & 0o111) !== 0 ? 0o755 : 0o644;
}

/**
 * A deterministic ZIP laid out the way Go's `archive/zip` streams it (reference `zipx`): entries
 * sorted byte-wise by path, Deflate, 1980-01-01 times plus an extended-timestamp extra field, Unix
 * modes, data descriptors, no comment. Only the deflate bitstream differs from the reference's.
 * No files gives zero bytes, as in the reference.
 */
export function writeDeterministicZip(files: readonly ZipFileInput[]): Buffer {
  if (files.length === 0) return Buffer.alloc(0);
  const sorted = [...files].sort((a, b) => compareUtf8(a.path, b.path));
  const seen = new Set<string>();
  for (const file of sorted) {
    const reason = unsafePathReason(file.path);
    if (reason || file.path.endsWith('/')) {
      throw new WardError(ERROR_CODES.ZIP_UNSAFE_PATH, `zip entry ${JSON.stringify(file.path)}: ${reason ?? 'directory entries are not written'}`);
    }
    const key = entryKey(file.path);
    if (seen.has(key)) throw new WardError(ERROR_CODES.ZIP_DUPLICATE_ENTRY, `zip contains duplicate entries: ${key}`);
    seen.add(key);
  }

  const chunks: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const file of sorted) {
    const name = Buffer.from(file.path, 'utf8');
    const flags = FLAG_DATA_DESCRIPTOR | (needsUtf8Flag(file.path) ? FLAG_UTF8 : 0);
    const extra = extendedTimestamp();
    const deflated = deflateSync(file.data, DEFLATE_OPTIONS);
    const compressed = Buffer.from(deflated.buffer, deflated.byteOffset, deflated.byteLength);
    const crc = crc32(file.data);
    if (file.data.length > MAX_UINT32 || compressed.length > MAX_UINT32 || offset > MAX_UINT32) {
      throw new WardError(ERROR_CODES.ZIP_ENTRY_TOO_LARGE, `zip entry too large: ${file.path}`);
    }

    const local = Buffer.alloc(LOCAL_HEADER_LEN);
    local.writeUInt32LE(LOCAL_HEADER_SIG, 0);
    local.writeUInt16LE(VERSION_NEEDED_20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(METHOD_DEFLATE, 8);
    local.writeUInt16LE(DOS_TIME_MIDNIGHT, 10);
    local.writeUInt16LE(DOS_DATE_1980, 12);
    // CRC and sizes stay zero: they follow in the data descriptor, as Go streams them.
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);

    const descriptor = Buffer.alloc(DATA_DESCRIPTOR_LEN);
    descriptor.writeUInt32LE(DATA_DESCRIPTOR_SIG, 0);
    descriptor.writeUInt32LE(crc, 4);
    descriptor.writeUInt32LE(compressed.length, 8);
    descriptor.writeUInt32LE(file.data.length, 12);

    const header = Buffer.alloc(CENTRAL_HEADER_LEN);
    header.writeUInt32LE(CENTRAL_HEADER_SIG, 0);
    header.writeUInt16LE(VERSION_MADE_BY_UNIX_20, 4);
    header.writeUInt16LE(VERSION_NEEDED_20, 6);
    header.writeUInt16LE(flags, 8);
    header.writeUInt16LE(METHOD_DEFLATE, 10);
    header.writeUInt16LE(DOS_TIME_MIDNIGHT, 12);
    header.writeUInt16LE(DOS_DATE_1980, 14);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(compressed.length, 20);
    header.writeUInt32LE(file.data.length, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt16LE(extra.length, 30);
    // comment length, disk number, internal attributes stay zero
    header.writeUInt32LE(((S_IFREG | normalizeMode(file.mode)) << 16) >>> 0, 38);
    header.writeUInt32LE(offset, 42);

    chunks.push(local, name, extra, compressed, descriptor);
    central.push(header, name, extra);
    offset += local.length + name.length + extra.length + compressed.length + descriptor.length;
  }

  const centralSize = central.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(END_OF_CENTRAL_DIR_LEN);
  end.writeUInt32LE(END_OF_CENTRAL_DIR_SIG, 0);
  end.writeUInt16LE(sorted.length, 8);
  end.writeUInt16LE(sorted.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...chunks, ...central, end]);
}

function extendedTimestamp(): Buffer {
  const extra = Buffer.alloc(9);
  extra.writeUInt16LE(EXTENDED_TIMESTAMP_ID, 0);
  extra.writeUInt16LE(5, 2);
  extra.writeUInt8(1, 4); // flags: modification time present
  extra.writeUInt32LE(UNIX_1980, 5);
  return extra;
}

/** Go's `detectUTF8`: names with control characters, a backslash, `~` or anything past ASCII get the UTF-8 flag. */
function needsUtf8Flag(name: string): boolean {
  return /[\x00-\x1f\\\x7e-\uffff]/.test(name);
}
