import { goLower, goTrim } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { normalizeContextEnvelope } from './normalize.js';
import type { ContextEnvelope, ContextRecordInput } from './types.js';

export type ContextPrivacyMode = 'metadata' | 'hashes' | 'raw';

/** What a metadata-only record carries instead of its digests: a valid sha256 hex that reveals nothing. */
const ZERO_DIGEST = '0'.repeat(64);

/**
 * `TransformEnvelopePrivacy` (`gate.md` §4.5, last bullet): `metadata` replaces each
 * `source_locator` with `redacted:metadata` and zeroes both digests; `hashes` replaces the locator
 * with `redacted:hashes` and keeps the digests; `raw` keeps everything (callers must demand the
 * explicit unsafe flag before choosing it). The result is re-normalized with a recomputed
 * `context_set_digest`, so it verifies on its own. `""` means the default, `metadata`.
 */
export function transformEnvelopePrivacy(envelope: ContextEnvelope, mode: ContextPrivacyMode | ''): ContextEnvelope {
  const chosen = goLower(goTrim(mode)) || 'metadata';
  let redact: (record: ContextRecordInput) => ContextRecordInput;
  switch (chosen) {
    case 'metadata':
      redact = (r) => ({ ...r, source_locator: 'redacted:metadata', query_digest: ZERO_DIGEST, content_digest: ZERO_DIGEST });
      break;
    case 'hashes':
      redact = (r) => ({ ...r, source_locator: 'redacted:hashes' });
      break;
    case 'raw':
      redact = (r) => r;
      break;
    default:
      throw new WardError(ERROR_CODES.ENVELOPE_INVALID, `unsupported context privacy mode: ${chosen}`);
  }
  return normalizeContextEnvelope({ ...envelope, context_set_digest: '', records: envelope.records.map(redact) });
}
