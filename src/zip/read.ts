import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32, inflateRawSync } from 'node:zlib';
import { ERROR_CODES, WardError } from '../errors.js';
import { caselessKey, compareUtf8 } from '../canon/index.js';
import { entryKey, nonCanonicalNameReason, unsafePathReason } from './path.js';
import {
  CENTRAL_HEADER_LEN,
  CENTRAL_HEADER_SIG,
  DATA_DESCRIPTOR_SIG,
  END_OF_CENTRAL_DIR_LEN,
  END_OF_CENTRAL_DIR_SIG,
  FLAG_DATA_DESCRIPTOR,
  FLAG_ENCRYPTED,
  FLAG_STRONG_ENCRYPTION,
  LOCAL_HEADER_LEN,
  LOCAL_HEADER_SIG,
  METHOD_DEFLATE,
  METHOD_STORE,
  S_IFDIR,
  S_IFLNK,
  S_IFMT,
  S_IFREG,
  UINT16_MAX,
  UINT32_MAX,
  ZIP64_END_OF_CENTRAL_DIR_LEN,
  ZIP64_END_OF_CENTRAL_DIR_SIG,
  ZIP64_EXTRA_ID,
  ZIP64_LOCATOR_LEN,
  ZIP64_LOCATOR_SIG,
} from './format.js';

export interface ZipLimits {
  /** Largest uncompressed entry (the reference's 100 MiB per-entry read limit). */
  maxEntryBytes: number;
  /** Largest sum of uncompressed entries. */
  maxTotalBytes: number;
  maxEntries: number;
}

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxEntryBytes: 100 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxEntries: 10_000,
});

export interface ZipEntry {
  /** The stored name, as written. */
  readonly name: string;
  readonly isDirectory: boolean;
  /** Unix permission bits from the external attributes (0 when the creator was not Unix). */
  readonly mode: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly crc32: number;
  readonly method: number;
  readonly localOffset: number;
  readonly dataOffset: number;
  readonly hasDataDescriptor: boolean;
  /** Sizes came from a ZIP64 extra field, so a data descriptor carries 8-byte sizes. */
  readonly zip64Sizes: boolean;
}

export interface ZipArchive {
  /** Entries in central-directory order. */
  readonly entries: readonly ZipEntry[];
  /** Look an entry up by name (exact stored name). */
  get(name: string): ZipEntry | undefined;
  /** Decompress an entry; sizes and CRC-32 are checked, output never exceeds the declared size. */
  read(entry: ZipEntry): Buffer;
}

/** An archive read from a file on demand; close it when done. */
export interface ZipFileArchive extends ZipArchive {
  readonly size: number;
  close(): void;
}

export interface OpenZipOptions {
  limits?: Partial<ZipLimits>;
  /**
   * Reject duplicate names up front (pack and runpack readers do): equal after trimming and
   * `\` → `/`, and, with `strictNames`, equal after case folding and Unicode compatibility
   * normalization. Default true.
   */
  rejectDuplicates?: boolean;
  /**
   * Every name must be canonical (`nonCanonicalNameReason`) and every entry a regular file
   * (no symlinks, directories or devices in the Unix external attributes). Default true.
   */
  strictNames?: boolean;
}

/** Random access to the archive bytes: a buffer in memory, or a file read with positional reads. */
interface ZipSource {
  readonly size: number;
  /** Exactly `length` bytes at `offset`, or fewer when the source ends first. */
  read(offset: number, length: number): Buffer;
}

function bufferSource(buf: Buffer): ZipSource {
  return { size: buf.length, read: (offset, length) => buf.subarray(offset, Math.min(buf.length, offset + length)) };
}

/** Reads go through a 1 MiB window: headers and descriptors are read in file order, so most hit it. */
const FILE_WINDOW = 1 << 20;

function fileSource(fd: number, size: number): ZipSource {
  let windowStart = 0;
  let window: Buffer = Buffer.alloc(0);
  const readAt = (offset: number, length: number): Buffer => {
    const want = Math.max(0, Math.min(length, size - offset));
    const out = Buffer.allocUnsafe(want);
    let done = 0;
    while (done < want) {
      const n = readSync(fd, out, done, want - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return done === want ? out : out.subarray(0, done);
  };
  return {
    size,
    read(offset, length) {
      if (offset >= windowStart && offset + length <= windowStart + window.length) {
        return window.subarray(offset - windowStart, offset - windowStart + length);
      }
      // Large reads (entry data) bypass the window; small ones refill it (a fresh buffer, so
      // slices handed out earlier stay valid).
      if (length >= FILE_WINDOW) return readAt(offset, length);
      windowStart = offset;
      window = readAt(offset, FILE_WINDOW);
      return window.subarray(0, Math.min(length, window.length));
    },
  };
}

/**
 * Open a ZIP held in memory, strictly. The central directory must be well formed and account for
 * the whole archive tail, every local header must agree with it, entries may not overlap (which
 * defeats overlapping-entry zip bombs), names must be canonical, entries must be regular files,
 * and declared sizes must fit the limits. Every problem is a WardError with a specific code.
 */
export function openZip(bytes: Uint8Array, options: OpenZipOptions = {}): ZipArchive {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return openSource(bufferSource(buf), options);
}

/**
 * `openZip` over a file, read with positional reads: only the central directory is held in
 * memory, so archives larger than a Buffer can hold (store exports) open too. Close it when done.
 */
export function openZipFile(path: string, options: OpenZipOptions = {}): ZipFileArchive {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `open ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const size = fstatSync(fd).size;
    const archive = openSource(fileSource(fd, size), options);
    return { ...archive, size, close: () => closeSync(fd) };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

interface Directory {
  records: number;
  centralOffset: number;
  centralSize: number;
  /** Where the directory must end: the ZIP64 end record, or the end record. */
  centralEnd: number;
}

function openSource(src: ZipSource, options: OpenZipOptions): ZipArchive {
  const limits: ZipLimits = { ...DEFAULT_ZIP_LIMITS, ...options.limits };
  const strict = options.strictNames !== false;
  const dir = readDirectoryLocation(src);
  const { records, centralOffset, centralSize, centralEnd } = dir;
  if (records > limits.maxEntries) {
    throw new WardError(ERROR_CODES.ZIP_BOMB, `zip has too many entries: ${records} > ${limits.maxEntries}`);
  }
  // Each record takes at least 46 bytes: a count the directory cannot hold is a lie.
  if (records * CENTRAL_HEADER_LEN > centralSize) throw invalid('central directory is too small for its entry count');
  if (centralOffset + centralSize !== centralEnd) throw invalid('central directory does not end where the end record starts');

  const cd = src.read(centralOffset, centralSize);
  if (cd.length !== centralSize) throw invalid('central directory truncated');
  const entries: ZipEntry[] = [];
  let pos = 0;
  let total = 0;
  for (let i = 0; i < records; i++) {
    if (pos + CENTRAL_HEADER_LEN > cd.length || cd.readUInt32LE(pos) !== CENTRAL_HEADER_SIG) {
      throw invalid(`central directory entry ${i} is malformed`);
    }
    const entry = readCentralEntry(src, cd, pos, limits, strict);
    total += entry.entry.size;
    if (total > limits.maxTotalBytes) {
      throw new WardError(ERROR_CODES.ZIP_BOMB, `zip expands beyond ${limits.maxTotalBytes} bytes in total`);
    }
    entries.push(entry.entry);
    pos = entry.next;
  }
  if (pos !== cd.length) throw invalid('central directory size does not match its entries');
  checkNoOverlap(src, entries, centralOffset, strict);

  if (options.rejectDuplicates !== false) {
    const names = entries.map((e) => e.name);
    const duplicates = duplicatePaths(names);
    if (duplicates.length > 0) {
      throw new WardError(ERROR_CODES.ZIP_DUPLICATE_ENTRY, `zip contains duplicate entries: ${duplicates.join(', ')}`);
    }
    if (strict) {
      const aliases = aliasedPaths(names);
      if (aliases.length > 0) {
        throw new WardError(ERROR_CODES.ZIP_DUPLICATE_ENTRY, `zip contains entries that differ only in case or Unicode form: ${aliases.join(', ')}`);
      }
    }
  }
  const byName = new Map<string, ZipEntry>();
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  return {
    entries,
    get: (name) => byName.get(name),
    read: (entry) => readEntry(src, entry),
  };
}

/** Names that occur more than once after trimming and `\` → `/`, sorted (`zipx.DuplicatePaths`). */
export function duplicatePaths(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const name of names) {
    const key = entryKey(name);
    if (seen.has(key)) dups.add(key);
    seen.add(key);
  }
  return [...dups].sort(compareUtf8);
}

/** Distinct names that collide after case folding and NFKC (`caselessKey`), sorted, each group joined by ` = `. */
export function aliasedPaths(names: readonly string[]): string[] {
  const groups = new Map<string, Set<string>>();
  for (const name of names) {
    const key = caselessKey(name);
    const group = groups.get(key) ?? new Set<string>();
    group.add(name);
    groups.set(key, group);
  }
  const out: string[] = [];
  for (const group of groups.values()) if (group.size > 1) out.push([...group].sort(compareUtf8).join(' = '));
  return out.sort(compareUtf8);
}

function readDirectoryLocation(src: ZipSource): Directory {
  if (src.size < END_OF_CENTRAL_DIR_LEN) throw invalid('not a zip archive (too short)');
  const tailStart = Math.max(0, src.size - END_OF_CENTRAL_DIR_LEN - UINT16_MAX);
  const tail = src.read(tailStart, src.size - tailStart);
  let end = -1;
  for (let i = tail.length - END_OF_CENTRAL_DIR_LEN; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== END_OF_CENTRAL_DIR_SIG) continue;
    const commentLength = tail.readUInt16LE(i + 20);
    // The end record must close the file exactly: trailing bytes mean truncation or tampering.
    if (i + END_OF_CENTRAL_DIR_LEN + commentLength === tail.length) {
      end = i;
      break;
    }
  }
  if (end < 0) throw invalid('not a zip archive or truncated (end of central directory not found)');
  const endOffset = tailStart + end;
  const diskNumber = tail.readUInt16LE(end + 4);
  const centralDisk = tail.readUInt16LE(end + 6);
  const diskRecords = tail.readUInt16LE(end + 8);
  const records = tail.readUInt16LE(end + 10);
  const centralSize = tail.readUInt32LE(end + 12);
  const centralOffset = tail.readUInt32LE(end + 16);
  if (diskNumber !== 0 || centralDisk !== 0 || diskRecords !== records) throw invalid('multi-disk archives are not supported');

  const hasLocator = endOffset >= ZIP64_LOCATOR_LEN && src.read(endOffset - ZIP64_LOCATOR_LEN, 4).readUInt32LE(0) === ZIP64_LOCATOR_SIG;
  // Without a locator the classic values are the real ones, even 0xFFFF: Python's zipfile writes
  // exactly 65,535 entries that way (as Go's reader, Ward's accepts it). Saturated values that are
  // not real fail the directory checks that follow.
  if (!hasLocator) return { records, centralOffset, centralSize, centralEnd: endOffset };
  return readZip64Directory(src, endOffset, { records, centralSize, centralOffset });
}

/** The ZIP64 end record, which must sit right before its locator, and agree with the classic end record. */
function readZip64Directory(src: ZipSource, endOffset: number, classic: { records: number; centralSize: number; centralOffset: number }): Directory {
  const locatorOffset = endOffset - ZIP64_LOCATOR_LEN;
  const locator = src.read(locatorOffset, ZIP64_LOCATOR_LEN);
  const recordOffset = readUint64(locator, 8, 'ZIP64 end record offset');
  if (locator.readUInt32LE(4) !== 0 || locator.readUInt32LE(16) !== 1) throw invalid('multi-disk archives are not supported');
  if (recordOffset + ZIP64_END_OF_CENTRAL_DIR_LEN !== locatorOffset) throw invalid('ZIP64 end record is not where its locator says');
  const record = src.read(recordOffset, ZIP64_END_OF_CENTRAL_DIR_LEN);
  if (record.length !== ZIP64_END_OF_CENTRAL_DIR_LEN || record.readUInt32LE(0) !== ZIP64_END_OF_CENTRAL_DIR_SIG) throw invalid('ZIP64 end record missing');
  if (readUint64(record, 4, 'ZIP64 end record size') !== ZIP64_END_OF_CENTRAL_DIR_LEN - 12) throw invalid('ZIP64 end record has extensible data');
  if (record.readUInt32LE(16) !== 0 || record.readUInt32LE(20) !== 0) throw invalid('multi-disk archives are not supported');
  const diskRecords = readUint64(record, 24, 'ZIP64 entry count');
  const records = readUint64(record, 32, 'ZIP64 entry count');
  const centralSize = readUint64(record, 40, 'ZIP64 directory size');
  const centralOffset = readUint64(record, 48, 'ZIP64 directory offset');
  if (diskRecords !== records) throw invalid('multi-disk archives are not supported');
  // The classic fields are either the saturated marker or the same value: never a second opinion.
  const agrees = (value: number, real: number, max: number) => value === max || value === real;
  if (!agrees(classic.records, records, UINT16_MAX) || !agrees(classic.centralSize, centralSize, UINT32_MAX) || !agrees(classic.centralOffset, centralOffset, UINT32_MAX)) {
    throw invalid('end record disagrees with the ZIP64 end record');
  }
  return { records, centralOffset, centralSize, centralEnd: recordOffset };
}

function readUint64(buf: Buffer, at: number, what: string): number {
  const value = buf.readBigUInt64LE(at);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid(`${what} out of range`);
  return Number(value);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function readCentralEntry(src: ZipSource, cd: Buffer, pos: number, limits: ZipLimits, strict: boolean): { entry: ZipEntry; next: number } {
  const flags = cd.readUInt16LE(pos + 8);
  const method = cd.readUInt16LE(pos + 10);
  const crc = cd.readUInt32LE(pos + 16);
  let compressedSize = cd.readUInt32LE(pos + 20);
  let size = cd.readUInt32LE(pos + 24);
  const nameLength = cd.readUInt16LE(pos + 28);
  const extraLength = cd.readUInt16LE(pos + 30);
  const commentLength = cd.readUInt16LE(pos + 32);
  const diskStart = cd.readUInt16LE(pos + 34);
  const externalAttrs = cd.readUInt32LE(pos + 38);
  let localOffset = cd.readUInt32LE(pos + 42);
  const next = pos + CENTRAL_HEADER_LEN + nameLength + extraLength + commentLength;
  if (next > cd.length) throw invalid('central directory entry runs past the directory');
  const nameBytes = cd.subarray(pos + CENTRAL_HEADER_LEN, pos + CENTRAL_HEADER_LEN + nameLength);
  let name: string;
  try {
    name = UTF8.decode(nameBytes);
  } catch {
    throw invalid('entry name is not valid UTF-8');
  }
  const unsafe = strict ? nonCanonicalNameReason(name) : unsafePathReason(name);
  if (unsafe) throw new WardError(ERROR_CODES.ZIP_UNSAFE_PATH, `zip entry ${JSON.stringify(name)}: ${unsafe}`);

  const creator = cd.readUInt16LE(pos + 4) >> 8;
  // Unix file-type bits are honoured by extractors whatever creator the header claims, so they are
  // read whatever it claims; the MS-DOS directory attribute too.
  const fileType = (externalAttrs >>> 16) & S_IFMT;
  if (strict && ((fileType !== 0 && fileType !== S_IFREG) || (externalAttrs & DOS_DIRECTORY) !== 0)) {
    const what = fileType === S_IFLNK ? 'a symbolic link' : fileType === S_IFDIR || fileType === 0 ? 'a directory' : 'not a regular file';
    throw new WardError(ERROR_CODES.ZIP_UNSAFE_PATH, `zip entry ${JSON.stringify(name)}: ${what} (only regular files are allowed)`);
  }
  const centralExtra = cd.subarray(pos + CENTRAL_HEADER_LEN + nameLength, pos + CENTRAL_HEADER_LEN + nameLength + extraLength);
  if (strict) refuseAliasExtras(centralExtra, name);
  if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) throw invalid(`zip entry ${name}: encrypted entries are not supported`);
  if (method !== METHOD_STORE && method !== METHOD_DEFLATE) {
    throw invalid(`zip entry ${name}: unsupported compression method ${method}`);
  }

  // ZIP64 extra: 8-byte values for exactly the 32-bit fields that are saturated, in this order.
  let zip64Sizes = false;
  if (size === UINT32_MAX || compressedSize === UINT32_MAX || localOffset === UINT32_MAX || diskStart === UINT16_MAX) {
    const extra = findExtra(centralExtra, ZIP64_EXTRA_ID, name);
    if (!extra) throw invalid(`zip entry ${name}: ZIP64 extra field missing`);
    let at = 0;
    const take = (what: string) => {
      if (at + 8 > extra.length) throw invalid(`zip entry ${name}: ZIP64 extra field too short`);
      const value = readUint64(extra, at, `zip entry ${name}: ${what}`);
      at += 8;
      return value;
    };
    if (size === UINT32_MAX) {
      size = take('size');
      zip64Sizes = true;
    }
    if (compressedSize === UINT32_MAX) {
      compressedSize = take('compressed size');
      zip64Sizes = true;
    }
    if (localOffset === UINT32_MAX) localOffset = take('offset');
    if (diskStart === UINT16_MAX) throw invalid('multi-disk archives are not supported');
  } else if (diskStart !== 0) {
    throw invalid('multi-disk archives are not supported');
  }
  if (size > limits.maxEntryBytes) {
    throw new WardError(ERROR_CODES.ZIP_ENTRY_TOO_LARGE, `zip entry too large: ${name} (${size} bytes > ${limits.maxEntryBytes})`);
  }
  if (method === METHOD_STORE && compressedSize !== size) throw invalid(`zip entry ${name}: stored sizes disagree`);

  const local = src.read(localOffset, LOCAL_HEADER_LEN);
  if (local.length < LOCAL_HEADER_LEN || local.readUInt32LE(0) !== LOCAL_HEADER_SIG) {
    throw invalid(`zip entry ${name}: local header missing`);
  }
  const localNameLength = local.readUInt16LE(26);
  const localExtraLength = local.readUInt16LE(28);
  const localName = src.read(localOffset + LOCAL_HEADER_LEN, localNameLength);
  if (!localName.equals(nameBytes)) {
    throw invalid(`zip entry ${name}: local header name differs from the central directory`);
  }
  if (local.readUInt16LE(8) !== method) throw invalid(`zip entry ${name}: local header method differs`);
  if (strict) refuseAliasExtras(src.read(localOffset + LOCAL_HEADER_LEN + localNameLength, localExtraLength), name);
  const dataOffset = localOffset + LOCAL_HEADER_LEN + localNameLength + localExtraLength;

  const isDirectory = name.endsWith('/') || fileType === S_IFDIR;
  const mode = creator === 3 ? (externalAttrs >>> 16) & 0o7777 : 0;
  return {
    entry: {
      name,
      isDirectory,
      mode,
      compressedSize,
      size,
      crc32: crc,
      method,
      localOffset,
      dataOffset,
      hasDataDescriptor: (flags & FLAG_DATA_DESCRIPTOR) !== 0,
      zip64Sizes,
    },
    next,
  };
}

/** MS-DOS attribute bit for a directory (low byte of the external attributes). */
const DOS_DIRECTORY = 0x10;
/** Info-ZIP Unicode Path extra field: a second name that many extractors use instead of the header's. */
const UNICODE_PATH_EXTRA_ID = 0x7075;

/** An entry must have one name: a Unicode Path extra field would give it a second one. */
function refuseAliasExtras(block: Buffer, name: string): void {
  if (findExtra(block, UNICODE_PATH_EXTRA_ID, name)) {
    throw new WardError(ERROR_CODES.ZIP_UNSAFE_PATH, `zip entry ${JSON.stringify(name)}: has a second name (Unicode Path extra field)`);
  }
}

/** The body of one extra field by id; the extra block must be well formed. */
function findExtra(block: Buffer, id: number, name: string): Buffer | undefined {
  let at = 0;
  let found: Buffer | undefined;
  while (at < block.length) {
    if (at + 4 > block.length) throw invalid(`zip entry ${name}: malformed extra field`);
    const fieldId = block.readUInt16LE(at);
    const length = block.readUInt16LE(at + 2);
    if (at + 4 + length > block.length) throw invalid(`zip entry ${name}: malformed extra field`);
    if (fieldId === id) {
      if (found) throw invalid(`zip entry ${name}: repeated extra field ${id}`);
      found = block.subarray(at + 4, at + 4 + length);
    }
    at += 4 + length;
  }
  return found;
}

/**
 * Each entry's bytes (header, data, descriptor) must sit before the directory and apart from the
 * others; with strict names they must also tile the archive from byte 0 to the directory.
 */
function checkNoOverlap(src: ZipSource, entries: readonly ZipEntry[], centralOffset: number, strict: boolean): void {
  const spans = entries.map((entry) => {
    let stop = entry.dataOffset + entry.compressedSize;
    if (stop > centralOffset) throw invalid(`zip entry ${entry.name}: data runs past the central directory (truncated?)`);
    if (entry.hasDataDescriptor) stop += descriptorLength(src, entry, stop, centralOffset);
    return { start: entry.localOffset, stop, name: entry.name };
  });
  spans.sort((a, b) => a.start - b.start);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.start < spans[i - 1]!.stop) {
      throw new WardError(ERROR_CODES.ZIP_BOMB, `zip entries overlap: ${spans[i - 1]!.name} and ${spans[i]!.name}`);
    }
  }
  if (!strict) return;
  // Every byte belongs to an entry: nothing hidden before the first, between two or after the last.
  let at = 0;
  for (const span of spans) {
    if (span.start !== at) throw invalid(`zip has ${span.start - at} bytes that belong to no entry before ${span.name}`);
    at = span.stop;
  }
  if (at !== centralOffset) throw invalid(`zip has ${centralOffset - at} bytes that belong to no entry before the central directory`);
}

/**
 * A data descriptor (signature optional) must repeat the central directory's CRC and sizes. Sizes
 * are 4 bytes each, or 8 in a ZIP64 entry; Go writes 4-byte sizes even when only the entry's offset
 * needed ZIP64 (past 4 GiB), so the form is the one whose sizes match, 4-byte tried first.
 */
function descriptorLength(src: ZipSource, entry: ZipEntry, at: number, limit: number): number {
  const buf = src.read(at, Math.min(24, limit - at));
  const signed = buf.length >= 4 && buf.readUInt32LE(0) === DATA_DESCRIPTOR_SIG;
  const start = signed ? 4 : 0;
  if (start + 12 > buf.length) throw invalid(`zip entry ${entry.name}: data descriptor truncated`);
  if (buf.readUInt32LE(start) !== entry.crc32) throw new WardError(ERROR_CODES.ZIP_CHECKSUM, `zip entry ${entry.name}: data descriptor checksum differs`);
  if (buf.readUInt32LE(start + 4) === entry.compressedSize && buf.readUInt32LE(start + 8) === entry.size) return start + 12;
  if (entry.zip64Sizes && start + 20 <= buf.length) {
    const compressed = Number(buf.readBigUInt64LE(start + 4));
    const size = Number(buf.readBigUInt64LE(start + 12));
    if (compressed === entry.compressedSize && size === entry.size) return start + 20;
  }
  throw invalid(`zip entry ${entry.name}: data descriptor sizes differ`);
}

function readEntry(src: ZipSource, entry: ZipEntry): Buffer {
  const raw = src.read(entry.dataOffset, entry.compressedSize);
  if (raw.length !== entry.compressedSize) throw invalid(`zip entry ${entry.name}: data truncated`);
  let data: Buffer;
  if (entry.method === METHOD_STORE) {
    data = Buffer.from(raw);
  } else {
    try {
      // The output is capped at the declared size, so a lying header cannot inflate without bound.
      data = inflateRawSync(raw, { maxOutputLength: Math.max(entry.size, 1) });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ERR_BUFFER_TOO_LARGE') {
        throw new WardError(ERROR_CODES.ZIP_BOMB, `zip entry ${entry.name}: inflates beyond its declared size`);
      }
      throw invalid(`zip entry ${entry.name}: corrupt deflate data (${(err as Error).message})`);
    }
  }
  if (data.length !== entry.size) {
    const code = data.length > entry.size ? ERROR_CODES.ZIP_BOMB : ERROR_CODES.ZIP_INVALID;
    throw new WardError(code, `zip entry ${entry.name}: size ${data.length} differs from declared ${entry.size}`);
  }
  if (crc32(data) !== entry.crc32) throw new WardError(ERROR_CODES.ZIP_CHECKSUM, `zip entry ${entry.name}: checksum mismatch`);
  return data;
}

function invalid(message: string): WardError {
  return new WardError(ERROR_CODES.ZIP_INVALID, message);
}
