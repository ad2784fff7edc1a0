// Signed decision records (`gait.gate.trace` 1.0.0): build, sign, write, verify, export.
export { signDigestedJson, verifyDigestedJson, withoutSignature, SIGNATURE_ALG, SIGNATURE_MEMBERS } from './sign.js';
export type { DigestSignature, SignatureCheck, SignatureFailure, VerifyDigestOptions } from './sign.js';
export {
  buildTraceRecord,
  signTrace,
  traceIdFor,
  eventIdFor,
  TRACE_SCHEMA_ID,
  TRACE_SCHEMA_VERSION,
  TRACE_FORMATS,
  WARD_ONLY_TRACE_FIELDS,
} from './record.js';
export type {
  TraceFormat,
  TraceInput,
  TraceContextSummary,
  TraceScriptSummary,
  TraceStepVerdict,
  TraceApprovedScript,
  TraceBroker,
  UnsignedTrace,
  SignedTrace,
} from './record.js';
export { buildTraceRelationship } from './relationship.js';
export type { RelationshipInput } from './relationship.js';
export { parseTraceContext } from './trace-context.js';
export type { TraceContext, TraceContextInput, ParsedTraceContext } from './trace-context.js';
export { writeTrace, traceFileText, checkedTracePath } from './write.js';
export type { WriteTraceOptions } from './write.js';
export { verifyTraceRecord, verifyTraceText } from './verify.js';
export type { TraceVerification, TraceArtifactFormat } from './verify.js';
export { verifyTraceFile, verifyTracePath } from './verify-file.js';
export type { TraceFileVerification, TracePathVerification } from './verify-file.js';
export { exportJws, exportDsse, verifyJws, verifyDsse, pae, isCompactJws, isDsseEnvelope, TRACE_PAYLOAD_TYPE, JWS_ALGS, type JwsAlg } from './export.js';
export type { DsseEnvelope, WrapperCheck } from './export.js';
export { buildDecisionCapture, captureFileName, captureFileText, parseDecisionCapture, writeCapture, DECISION_CAPTURE_SCHEMA_ID, DECISION_CAPTURE_SCHEMA_VERSION } from './capture.js';
export type { CaptureInput, DecisionCapture } from './capture.js';
