export {
  CONTEXT_ENVELOPE_SCHEMA_ID,
  CONTEXT_ENVELOPE_SCHEMA_VERSION,
  CONTEXT_ENVELOPE_MAX_BYTES,
  CONTEXT_EVIDENCE_MODES,
} from './types.js';
export type {
  ContextEnvelope,
  ContextEnvelopeInput,
  ContextEvidenceMode,
  ContextImmutability,
  ContextRecord,
  ContextRecordInput,
} from './types.js';
export { parseContextEnvelope, contextEnvelopeJson } from './envelope.js';
export {
  normalizeContextEnvelope,
  normalizeContextRecord,
  isVerifiedContextEnvelope,
  sortContextRecords,
  contextRecordJson,
  contextSetDigestPayload,
  contextSetDigest,
} from './normalize.js';
export { envelopeContextAgeSeconds, futureEvidence, CONTEXT_CLOCK_SKEW_SECONDS, type FutureEvidence } from './age.js';
export { transformEnvelopePrivacy, type ContextPrivacyMode } from './privacy.js';
export { bindContextEvidence, CONTEXT_SOURCE_ENVELOPE, CONTEXT_AGE_KEY, type BoundIntent } from './bind.js';
export { decodeError, decodeJsonText, expectRootObject, readBool, readInt, readObject, readObjectArray, readString, readStringArray, readTime, rejectUnknownFields } from './fields.js';
export type { Decoder } from './fields.js';
