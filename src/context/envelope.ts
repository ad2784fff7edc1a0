import { formatRFC3339Nano, type JsonObject } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import {
  decodeJsonText,
  expectRootObject,
  readInt,
  readObject,
  readObjectArray,
  readString,
  readTime,
  type Decoder,
} from './fields.js';
import { contextRecordJson, normalizeContextEnvelope } from './normalize.js';
import {
  CONTEXT_ENVELOPE_MAX_BYTES,
  type ContextEnvelope,
  type ContextEnvelopeInput,
  type ContextRecordInput,
} from './types.js';

const DECODER: Decoder = { prefix: 'parse context envelope: ', root: 'Envelope', code: ERROR_CODES.ENVELOPE_INVALID };

// ignoreBOM keeps a leading U+FEFF in the text so that JSON.parse rejects it, as Go's decoder does.
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * `contextproof.ParseEnvelope` (`gate.md` §4.3): size limit, strict typed decode, normalization
 * and digest verification. Unlike the reference, unknown fields are ignored rather than rejected
 * (Ward decision 4, following ContextSpec v1 "consumers MUST ignore unknown optional fields"); they
 * never reach the normalized envelope, so they are never digested.
 */
export function parseContextEnvelope(input: string | Uint8Array): ContextEnvelope {
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (size > CONTEXT_ENVELOPE_MAX_BYTES) {
    throw new WardError(
      ERROR_CODES.ENVELOPE_INVALID,
      `context envelope exceeds size limit (${CONTEXT_ENVELOPE_MAX_BYTES} bytes)`,
    );
  }
  const text = typeof input === 'string' ? input : UTF8.decode(input);
  return normalizeContextEnvelope(decodeContextEnvelope(text));
}

/** Decode the envelope JSON into Go-typed fields. Only the contract's keys are read. */
function decodeContextEnvelope(text: string): ContextEnvelopeInput {
  const root = expectRootObject(DECODER, decodeJsonText(DECODER, text));
  return {
    schema_id: readString(DECODER, root, 'schema_id'),
    schema_version: readString(DECODER, root, 'schema_version'),
    created_at: readTime(DECODER, root, 'created_at'),
    producer_version: readString(DECODER, root, 'producer_version'),
    context_set_id: readString(DECODER, root, 'context_set_id'),
    context_set_digest: readString(DECODER, root, 'context_set_digest'),
    evidence_mode: readString(DECODER, root, 'evidence_mode'),
    records: readObjectArray(DECODER, root, 'records', 'ReferenceRecord').map(decodeRecord),
  };
}

function decodeRecord(raw: JsonObject): ContextRecordInput {
  const path = 'records';
  return {
    ref_id: readString(DECODER, raw, 'ref_id', path),
    source_type: readString(DECODER, raw, 'source_type', path),
    source_locator: readString(DECODER, raw, 'source_locator', path),
    query_digest: readString(DECODER, raw, 'query_digest', path),
    content_digest: readString(DECODER, raw, 'content_digest', path),
    retrieved_at: readTime(DECODER, raw, 'retrieved_at', path),
    redaction_mode: readString(DECODER, raw, 'redaction_mode', path),
    immutability: readString(DECODER, raw, 'immutability', path),
    sensitivity_label: readString(DECODER, raw, 'sensitivity_label', path),
    freshness_sla_seconds: readInt(DECODER, raw, 'freshness_sla_seconds', path),
    retrieval_params: readObject(DECODER, raw, 'retrieval_params', path),
  };
}

/** The JSON value of a normalized envelope as Go marshals it (times in RFC3339Nano UTC). */
export function contextEnvelopeJson(envelope: ContextEnvelope): JsonObject {
  return {
    schema_id: envelope.schema_id,
    schema_version: envelope.schema_version,
    created_at: formatRFC3339Nano(envelope.created_at),
    producer_version: envelope.producer_version,
    context_set_id: envelope.context_set_id,
    context_set_digest: envelope.context_set_digest,
    evidence_mode: envelope.evidence_mode,
    records: envelope.records.map(contextRecordJson),
  };
}
