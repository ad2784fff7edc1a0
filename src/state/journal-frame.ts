import { crc32 } from 'node:zlib';

/**
 * The byte format of Ward's journal segments (docs/daemon.md, "Journal format"). Pure: no I/O.
 *
 * A segment starts with the 8-byte magic `WARDJNL` + version byte 1, then frames back to back,
 * then the zeros it was preallocated with:
 *
 *     u32 LE  payload length (≥ 1)
 *     u32 LE  CRC-32 (IEEE, as zlib) of the length bytes, the type byte and the payload
 *     u8      record type (the journal's user decides what it means)
 *     …       payload
 *
 * A reader stops at the first frame that does not check out (a torn append, a flipped bit) and
 * reports whether what follows is the preallocated zeros (a clean end) or not (torn). Appends are
 * acknowledged in order, so everything acknowledged is in the intact prefix.
 *
 * Segments without the magic are the daemon's journal before version 1 (the same frames with the
 * CRC over the payload only); they are still read, so a journal left by an older Ward is recovered.
 */
export const SEGMENT_MAGIC = Buffer.from('WARDJNL\x01', 'latin1');
export const FRAME_HEADER = 9;

export interface JournalRecord {
  /** 0–255, meaning chosen by the journal's user. */
  type: number;
  payload: Buffer;
}

export type FrameFormat = 'v1' | 'legacy';

export interface DecodedFrames {
  records: JournalRecord[];
  /** Bytes after the last intact frame that are not the preallocated zeros. */
  torn: boolean;
}

function checksum(header: Buffer, at: number, payload: Uint8Array, format: FrameFormat): number {
  if (format === 'legacy') return crc32(payload);
  // Length and type are covered too: a flipped type byte must not turn a trace into something else.
  return crc32(payload, crc32(header.subarray(at + 8, at + 9), crc32(header.subarray(at, at + 4))));
}

/** One record's frame (v1). */
export function encodeFrame(type: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
  writeFrame(out, 0, type, payload);
  return out;
}

/** Several records' frames in one buffer (one write). */
export function encodeFrames(records: readonly JournalRecord[]): Buffer {
  let size = 0;
  for (const r of records) size += FRAME_HEADER + r.payload.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const r of records) at = writeFrame(out, at, r.type, r.payload);
  return out;
}

function writeFrame(out: Buffer, at: number, type: number, payload: Uint8Array): number {
  if (payload.length === 0) throw new RangeError('journal record payload is empty');
  if (!Number.isInteger(type) || type < 0 || type > 255) throw new RangeError(`journal record type ${type} is not a byte`);
  out.writeUInt32LE(payload.length, at);
  out.writeUInt8(type, at + 8);
  out.writeUInt32LE(checksum(out, at, payload, 'v1'), at + 4);
  out.set(payload, at + FRAME_HEADER);
  return at + FRAME_HEADER + payload.length;
}

/** The intact frames of `bytes` (no segment header), in order; stops at the first torn or corrupt frame. */
export function decodeFrames(bytes: Buffer, format: FrameFormat = 'v1'): DecodedFrames {
  const records: JournalRecord[] = [];
  let at = 0;
  while (at < bytes.length) {
    // Segments are preallocated with zeros: a zero length is where the records end.
    if (bytes.length - at < FRAME_HEADER) return { records, torn: zerosFrom(bytes, at) === false };
    const length = bytes.readUInt32LE(at);
    if (length === 0) return { records, torn: !zerosFrom(bytes, at) };
    if (at + FRAME_HEADER + length > bytes.length) return { records, torn: true };
    const payload = bytes.subarray(at + FRAME_HEADER, at + FRAME_HEADER + length);
    if (checksum(bytes, at, payload, format) !== bytes.readUInt32LE(at + 4)) return { records, torn: true };
    records.push({ type: bytes.readUInt8(at + 8), payload: Buffer.from(payload) });
    at += FRAME_HEADER + length;
  }
  return { records, torn: false };
}

/** A whole segment file's content: the header says which frame format follows. */
export function decodeSegmentBytes(bytes: Buffer): DecodedFrames & { format: FrameFormat } {
  if (bytes.length >= SEGMENT_MAGIC.length && bytes.subarray(0, SEGMENT_MAGIC.length).equals(SEGMENT_MAGIC)) {
    return { ...decodeFrames(bytes.subarray(SEGMENT_MAGIC.length), 'v1'), format: 'v1' };
  }
  // A v1 segment whose header never reached the disk holds nothing acknowledged: its header is
  // written and synced before the segment is used. Such a file decodes as an empty legacy one.
  return { ...decodeFrames(bytes, 'legacy'), format: 'legacy' };
}

/**
 * Whether everything from `at` is zero. Only the next 64 KiB are looked at: a torn write is
 * contiguous with the last good frame, and a whole preallocated segment need not be scanned.
 */
function zerosFrom(bytes: Buffer, at: number): boolean {
  const end = Math.min(bytes.length, at + 64 * 1024);
  for (let i = at; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}
