// Runpacks: the primitive artifact of one agent run (`packs-regress.md` §1.2–§1.3, §4).
export * from './types.js';
export { parseRunRecordInput, type RunRecordInput } from './input.js';
export {
  recordRunpack,
  RAW_CAPTURE_WARNING,
  REFERENCE_STRIP_WARNING,
  DEFAULT_PRODUCER_VERSION,
  type RecordRunOptions,
  type RecordedRunpack,
} from './record.js';
export {
  readRunpack,
  readOpenedRunpack,
  summarizeRunpack,
  summarizeOpenedRunpack,
  summaryOf,
  type RunpackSummary,
  type OpenedRunpack,
  openRunpack, decodeRunpackManifest, type StoredManifest } from './read.js';
export { verifyRunpack, runpackVerified, uncoveredEntries, type RunpackVerifyResult, type VerifyRunpackOptions } from './verify.js';
export { checkRunpackFiles, checkDeclaredFiles, undeclaredEntries, type HashMismatch, type RunpackFileCheck, type DeclaredFileCheck } from './files.js';
export { computeManifestDigest, manifestJson } from './manifest.js';
export { normalizeRefs } from './refs.js';
export { envelopeFromRefs, receiptsFromEnvelope } from './context.js';
export { signManifest, checkManifestSignatures, type SignatureStatus, type SignatureCheck } from './signature.js';
export { EPOCH_1980_TEXT, ZERO_TIME_TEXT, utcOr1980 } from './decode.js';
