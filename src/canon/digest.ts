import { createHash, hash } from 'node:crypto';
import { jcs } from './jcs.js';

/** Lowercase hex sha256 of UTF-8 text or raw bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/** Raw 32-byte sha256. */
export function sha256Bytes(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** A Gait digest: lowercase hex sha256 of the JCS bytes of a JSON value (never `sha256:`-prefixed). */
export function digestJcs(value: unknown): string {
  return sha256Hex(jcs(value));
}

/** Hex of the first 12 bytes of sha256(text): the reference's id construction (trace_id, token_id, ...). */
export function shortId(text: string): string {
  return sha256Hex(text).slice(0, 24);
}

const HEX64 = /^[0-9a-f]{64}$/;

/** True for a 64-character lowercase hex string (callers lowercase first where the contract does). */
export function isSha256Hex(value: string): boolean {
  return HEX64.test(value);
}
