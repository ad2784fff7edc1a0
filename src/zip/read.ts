import { crc32, inflateRawSync } from 'node:zlib';
import { compareUtf8 } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { entryKey, unsafePathReason } from './path.js';
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
  S_IFMT,
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
}

export interface ZipArchive {
  /** Entries in central-directory order. */
  readonly entries: readonly ZipEntry[];
  /** Look an entry up by name (exact stored name). */
  get(name: string): ZipEntry | undefined;
  /** Decompress an entry; sizes and CRC-32 are checked, output never exceeds the declared size. */
  read(entry: ZipEntry): Buffer;
}

export interface OpenZipOptions {
  limits?: Partial<ZipLimits>;
  /** Reject duplicate names up front (pack and runpack readers do). Default true. */
  rejectDuplicates?: boolean;
}

/**
 * Open a ZIP held in memory, strictly. The central directory must be well formed and account for
 * the whole archive tail, every local header must agree with it, entries may not overlap (which
 * defeats overlapping-entry zip bombs), paths must be relative and free of `..`, and declared
 * sizes must fit the limits. Every problem is a WardError with a specific code.
 */
export function openZip(bytes: Uint8Array, options: OpenZipOptions = {}): ZipArchive {
  const limits: ZipLimits = { ...DEFAULT_ZIP_LIMITS, ...options.limits };
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = findEndOfCentralDirectory(buf);
  const diskNumber = buf.readUInt16LE(end + 4);
  const centralDisk = buf.readUInt16LE(end + 6);
  const diskRecords = buf.readUInt16LE(end + 8);
  const records = buf.readUInt16LE(end + 10);
  const centralSize = buf.readUInt32LE(end + 12);
  const centralOffset = buf.readUInt32LE(end + 16);
  if (end >= 20 && buf.readUInt32LE(end - 20) === ZIP64_LOCATOR_SIG) throw invalid('zip64 archives are not supported');
  if (records === 0xffff || centralSize === 0xffffffff || centralOffset === 0xffffffff) {
    throw invalid('zip64 archives are not supported');
  }
  if (diskNumber !== 0 || centralDisk !== 0 || diskRecords !== records) throw invalid('multi-disk archives are not supported');
  if (records > limits.maxEntries) {
    throw new WardError(ERROR_CODES.ZIP_BOMB, `zip has too many entries: ${records} > ${limits.maxEntries}`);
  }
  if (centralOffset + centralSize !== end) throw invalid('central directory does not end where the end record starts');

  const entries: ZipEntry[] = [];
  let pos = centralOffset;
  let total = 0;
  for (let i = 0; i < records; i++) {
    if (pos + CENTRAL_HEADER_LEN > end || buf.readUInt32LE(pos) !== CENTRAL_HEADER_SIG) {
      throw invalid(`central directory entry ${i} is malformed`);
    }
    const entry = readCentralEntry(buf, pos, end, limits);
    total += entry.entry.size;
    if (total > limits.maxTotalBytes) {
      throw new WardError(ERROR_CODES.ZIP_BOMB, `zip expands beyond ${limits.maxTotalBytes} bytes in total`);
    }
    entries.push(entry.entry);
    pos = entry.next;
  }
  if (pos !== end) throw invalid('central directory size does not match its entries');
  checkNoOverlap(buf, entries, centralOffset);

  if (options.rejectDuplicates !== false) {
    const duplicates = duplicatePaths(entries.map((e) => e.name));
    if (duplicates.length > 0) {
      throw new WardError(ERROR_CODES.ZIP_DUPLICATE_ENTRY, `zip contains duplicate entries: ${duplicates.join(', ')}`);
    }
  }
  const byName = new Map<string, ZipEntry>();
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  return {
    entries,
    get: (name) => byName.get(name),
    read: (entry) => readEntry(buf, entry),
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

function findEndOfCentralDirectory(buf: Buffer): number {
  if (buf.length < END_OF_CENTRAL_DIR_LEN) throw invalid('not a zip archive (too short)');
  const lowest = Math.max(0, buf.length - END_OF_CENTRAL_DIR_LEN - 0xffff);
  for (let i = buf.length - END_OF_CENTRAL_DIR_LEN; i >= lowest; i--) {
    if (buf.readUInt32LE(i) !== END_OF_CENTRAL_DIR_SIG) continue;
    const commentLength = buf.readUInt16LE(i + 20);
    // The end record must close the file exactly: trailing bytes mean truncation or tampering.
    if (i + END_OF_CENTRAL_DIR_LEN + commentLength === buf.length) return i;
  }
  throw invalid('not a zip archive or truncated (end of central directory not found)');
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function readCentralEntry(buf: Buffer, pos: number, end: number, limits: ZipLimits): { entry: ZipEntry; next: number } {
  const flags = buf.readUInt16LE(pos + 8);
  const method = buf.readUInt16LE(pos + 10);
  const crc = buf.readUInt32LE(pos + 16);
  const compressedSize = buf.readUInt32LE(pos + 20);
  const size = buf.readUInt32LE(pos + 24);
  const nameLength = buf.readUInt16LE(pos + 28);
  const extraLength = buf.readUInt16LE(pos + 30);
  const commentLength = buf.readUInt16LE(pos + 32);
  const externalAttrs = buf.readUInt32LE(pos + 38);
  const localOffset = buf.readUInt32LE(pos + 42);
  const next = pos + CENTRAL_HEADER_LEN + nameLength + extraLength + commentLength;
  if (next > end) throw invalid('central directory entry runs past the directory');
  let name: string;
  try {
    name = UTF8.decode(buf.subarray(pos + CENTRAL_HEADER_LEN, pos + CENTRAL_HEADER_LEN + nameLength));
  } catch {
    throw invalid('entry name is not valid UTF-8');
  }
  const unsafe = unsafePathReason(name);
  if (unsafe) throw new WardError(ERROR_CODES.ZIP_UNSAFE_PATH, `zip entry ${JSON.stringify(name)}: ${unsafe}`);
  if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) throw invalid(`zip entry ${name}: encrypted entries are not supported`);
  if (method !== METHOD_STORE && method !== METHOD_DEFLATE) {
    throw invalid(`zip entry ${name}: unsupported compression method ${method}`);
  }
  if (size > limits.maxEntryBytes) {
    throw new WardError(ERROR_CODES.ZIP_ENTRY_TOO_LARGE, `zip entry too large: ${name} (${size} bytes > ${limits.maxEntryBytes})`);
  }
  if (method === METHOD_STORE && compressedSize !== size) throw invalid(`zip entry ${name}: stored sizes disagree`);

  if (localOffset + LOCAL_HEADER_LEN > buf.length || buf.readUInt32LE(localOffset) !== LOCAL_HEADER_SIG) {
    throw invalid(`zip entry ${name}: local header missing`);
  }
  const localNameLength = buf.readUInt16LE(localOffset + 26);
  const localExtraLength = buf.readUInt16LE(localOffset + 28);
  const localName = buf.subarray(localOffset + LOCAL_HEADER_LEN, localOffset + LOCAL_HEADER_LEN + localNameLength);
  if (!localName.equals(buf.subarray(pos + CENTRAL_HEADER_LEN, pos + CENTRAL_HEADER_LEN + nameLength))) {
    throw invalid(`zip entry ${name}: local header name differs from the central directory`);
  }
  if (buf.readUInt16LE(localOffset + 8) !== method) throw invalid(`zip entry ${name}: local header method differs`);
  const dataOffset = localOffset + LOCAL_HEADER_LEN + localNameLength + localExtraLength;

  const fileType = (externalAttrs >>> 16) & S_IFMT;
  const isDirectory = name.endsWith('/') || fileType === S_IFDIR;
  const creator = buf.readUInt16LE(pos + 4) >> 8;
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
    },
    next,
  };
}

/** Each entry's bytes (header, data, descriptor) must sit before the directory and apart from the others. */
function checkNoOverlap(buf: Buffer, entries: readonly ZipEntry[], centralOffset: number): void {
  const spans = entries.map((entry) => {
    let stop = entry.dataOffset + entry.compressedSize;
    if (stop > centralOffset) throw invalid(`zip entry ${entry.name}: data runs past the central directory (truncated?)`);
    if (entry.hasDataDescriptor) stop += descriptorLength(buf, entry, stop, centralOffset);
    return { start: entry.localOffset, stop, name: entry.name };
  });
  spans.sort((a, b) => a.start - b.start);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.start < spans[i - 1]!.stop) {
      throw new WardError(ERROR_CODES.ZIP_BOMB, `zip entries overlap: ${spans[i - 1]!.name} and ${spans[i]!.name}`);
    }
  }
}

/** A data descriptor (signature optional) must repeat the central directory's CRC and sizes. */
function descriptorLength(buf: Buffer, entry: ZipEntry, at: number, limit: number): number {
  const signed = at + 4 <= limit && buf.readUInt32LE(at) === DATA_DESCRIPTOR_SIG;
  const start = signed ? at + 4 : at;
  if (start + 12 > limit) throw invalid(`zip entry ${entry.name}: data descriptor truncated`);
  if (buf.readUInt32LE(start) !== entry.crc32) throw new WardError(ERROR_CODES.ZIP_CHECKSUM, `zip entry ${entry.name}: data descriptor checksum differs`);
  if (buf.readUInt32LE(start + 4) !== entry.compressedSize || buf.readUInt32LE(start + 8) !== entry.size) {
    throw invalid(`zip entry ${entry.name}: data descriptor sizes differ`);
  }
  return (signed ? 4 : 0) + 12;
}

function readEntry(buf: Buffer, entry: ZipEntry): Buffer {
  const raw = buf.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
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
