import { compareUtf8, goLower, goTrim, isSha256Hex } from '../canon/index.js';
import { WardError, type ErrorCode } from '../errors.js';
import { utcOr1980 } from './decode.js';
import type { Receipt, Refs } from './types.js';

/**
 * `NormalizeRefs` (§1.8): lowercase digests and modes, default immutability, UTC retrieval
 * times, receipts sorted by ref_id, and the ref count filled in. Invalid values are errors with
 * `code` (usage at record time, verification when reading a runpack).
 */
export function normalizeRefs(refs: Refs, code: ErrorCode): Refs {
  const mode = goLower(goTrim(refs.context_evidence_mode ?? ''));
  if (mode !== '' && mode !== 'best_effort' && mode !== 'required') {
    throw new WardError(code, 'context evidence mode must be best_effort or required');
  }
  const digest = goLower(goTrim(refs.context_set_digest ?? ''));
  if (digest !== '' && !isSha256Hex(digest)) throw new WardError(code, 'context_set_digest must be sha256 hex');
  const count = refs.context_ref_count ?? 0;
  if (count < 0) throw new WardError(code, 'context_ref_count must be >= 0');
  const receipts = refs.receipts.map((r) => normalizeReceipt(r, code)).sort(byRefId);
  const out: Refs = { ...refs, receipts };
  setOrDelete(out, 'context_evidence_mode', mode);
  setOrDelete(out, 'context_set_digest', digest);
  const finalCount = count === 0 ? receipts.length : count;
  if (finalCount !== 0) out.context_ref_count = finalCount;
  else delete out.context_ref_count;
  return out;
}

function normalizeReceipt(receipt: Receipt, code: ErrorCode): Receipt {
  const immutability = goLower(goTrim(receipt.immutability ?? '')) || 'unknown';
  let retrievedAt: string;
  try {
    retrievedAt = utcOr1980(receipt.retrieved_at);
  } catch (err) {
    throw new WardError(code, (err as Error).message);
  }
  return {
    ...receipt,
    query_digest: goLower(goTrim(receipt.query_digest)),
    content_digest: goLower(goTrim(receipt.content_digest)),
    immutability,
    retrieved_at: retrievedAt,
  };
}

function byRefId(a: Receipt, b: Receipt): number {
  return (
    compareUtf8(a.ref_id, b.ref_id) ||
    compareUtf8(a.source_type, b.source_type) ||
    compareUtf8(a.source_locator, b.source_locator) ||
    compareUtf8(a.content_digest, b.content_digest)
  );
}

function setOrDelete(refs: Refs, key: 'context_evidence_mode' | 'context_set_digest', value: string): void {
  if (value) refs[key] = value;
  else delete refs[key];
}
