import {
  compareUtf8,
  EPOCH_1980,
  formatRFC3339Nano,
  goLower,
  goTrim,
  isSha256Hex,
  isZeroTime,
  jcs,
  sha256Hex,
  type GoTime,
  type JsonObject,
  type JsonValue,
} from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import {
  CONTEXT_ENVELOPE_SCHEMA_ID,
  CONTEXT_ENVELOPE_SCHEMA_VERSION,
  type ContextEnvelope,
  type ContextEnvelopeInput,
  type ContextEvidenceMode,
  type ContextImmutability,
  type ContextRecord,
  type ContextRecordInput,
} from './types.js';

/*
 * NormalizeEnvelope of the reference (`gate.md` §4.1, §4.2). Error strings are contract strings:
 * they are byte-identical to the reference's and tests pin each one.
 */

/** Envelopes produced by normalizeContextEnvelope; anything else must be re-verified before use. */
const verified = new WeakSet<object>();

/** True when `value` is an envelope this module normalized and froze (so it cannot have changed since). */
export function isVerifiedContextEnvelope(value: unknown): value is ContextEnvelope {
  return typeof value === 'object' && value !== null && verified.has(value);
}

function invalid(message: string): WardError {
  return new WardError(ERROR_CODES.ENVELOPE_INVALID, message);
}

/**
 * Normalize, sort and verify an envelope. The checks run in the order of the contract's field
 * table: schema_id, schema_version, context_set_id, the format of a provided context_set_digest,
 * evidence_mode, each record, and finally the recomputed digest against the provided one.
 */
export function normalizeContextEnvelope(input: ContextEnvelopeInput): ContextEnvelope {
  const schemaId = goTrim(input.schema_id ?? '') || CONTEXT_ENVELOPE_SCHEMA_ID;
  if (schemaId !== CONTEXT_ENVELOPE_SCHEMA_ID) throw invalid(`unsupported context envelope schema_id: ${schemaId}`);
  const schemaVersion = goTrim(input.schema_version ?? '') || CONTEXT_ENVELOPE_SCHEMA_VERSION;
  if (schemaVersion !== CONTEXT_ENVELOPE_SCHEMA_VERSION) {
    throw invalid(`unsupported context envelope schema_version: ${schemaVersion}`);
  }
  const contextSetId = goTrim(input.context_set_id ?? '');
  if (contextSetId === '') throw invalid('context_set_id is required');
  const claimedDigest = goLower(goTrim(input.context_set_digest ?? ''));
  if (claimedDigest !== '' && !isSha256Hex(claimedDigest)) throw invalid('context_set_digest must be sha256 hex');
  const evidenceMode = normalizeEvidenceMode(input.evidence_mode ?? '');

  const records = sortContextRecords((input.records ?? []).map(normalizeContextRecord));
  const digest = digestOfSorted(records);
  if (claimedDigest !== '' && claimedDigest !== digest) throw invalid('context_set_digest mismatch');

  const envelope: ContextEnvelope = Object.freeze({
    schema_id: CONTEXT_ENVELOPE_SCHEMA_ID,
    schema_version: CONTEXT_ENVELOPE_SCHEMA_VERSION,
    created_at: utcOr1980(input.created_at),
    producer_version: goTrim(input.producer_version ?? '') || '0.0.0-dev',
    context_set_id: contextSetId,
    context_set_digest: digest,
    evidence_mode: evidenceMode,
    records: Object.freeze(records),
  });
  verified.add(envelope);
  return envelope;
}

function normalizeEvidenceMode(raw: string): ContextEvidenceMode {
  const mode = goLower(goTrim(raw));
  if (mode === '' || mode === 'best_effort') return 'best_effort';
  if (mode === 'required') return 'required';
  throw invalid('context evidence mode must be best_effort or required');
}

const IMMUTABILITY: ReadonlySet<string> = new Set<ContextImmutability>(['unknown', 'mutable', 'immutable']);

/** One reference record (`gate.md` §4.1 record table). The result is frozen. */
export function normalizeContextRecord(input: ContextRecordInput): ContextRecord {
  const refId = goTrim(input.ref_id ?? '');
  const sourceType = goTrim(input.source_type ?? '');
  const sourceLocator = goTrim(input.source_locator ?? '');
  const redactionMode = goTrim(input.redaction_mode ?? '');
  if (refId === '' || sourceType === '' || sourceLocator === '' || redactionMode === '') {
    throw invalid('context record fields ref_id/source_type/source_locator/redaction_mode are required');
  }
  const queryDigest = goLower(goTrim(input.query_digest ?? ''));
  const contentDigest = goLower(goTrim(input.content_digest ?? ''));
  if (!isSha256Hex(queryDigest) || !isSha256Hex(contentDigest)) throw invalid('context record digests must be sha256 hex');
  const immutability = goLower(goTrim(input.immutability ?? '')) || 'unknown';
  if (!IMMUTABILITY.has(immutability)) throw invalid('context record immutability must be unknown|mutable|immutable');
  const freshness = input.freshness_sla_seconds ?? 0;
  if (freshness < 0) throw invalid('context record freshness_sla_seconds must be >= 0');
  const params = input.retrieval_params;
  return Object.freeze({
    ref_id: refId,
    source_type: sourceType,
    source_locator: sourceLocator,
    query_digest: queryDigest,
    content_digest: contentDigest,
    retrieved_at: utcOr1980(input.retrieved_at),
    redaction_mode: redactionMode,
    immutability: immutability as ContextImmutability,
    sensitivity_label: input.sensitivity_label ?? '',
    freshness_sla_seconds: freshness,
    // Copied so a caller's object can neither alias nor later change what was digested.
    retrieval_params: params && Object.keys(params).length > 0 ? (frozenCopy(params) as JsonObject) : undefined,
  });
}

/** Zero (absent) times become 1980-01-01T00:00:00Z; others are converted to UTC. Always a fresh frozen value. */
function utcOr1980(t: GoTime | undefined): GoTime {
  if (t === undefined || isZeroTime(t)) return EPOCH_1980;
  return Object.freeze({ sec: t.sec, nsec: t.nsec, offset: 0 });
}

function frozenCopy(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as JsonValue[];
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) out[key] = frozenCopy(child);
    return Object.freeze(out);
  }
  return value;
}

/**
 * Sort by (ref_id, source_type, source_locator, content_digest), byte-wise, as the reference does.
 * Records equal on all four keys but different elsewhere are ordered by their canonical JSON: the
 * reference leaves that order to its (unstable) sort, which would let record order change the
 * digest; ContextSpec says it must not, so Ward breaks the tie deterministically. Whenever the
 * reference's result is order-independent, this ordering equals it.
 */
export function sortContextRecords(records: readonly ContextRecord[]): ContextRecord[] {
  return [...records].sort(
    (a, b) =>
      compareUtf8(a.ref_id, b.ref_id) ||
      compareUtf8(a.source_type, b.source_type) ||
      compareUtf8(a.source_locator, b.source_locator) ||
      compareUtf8(a.content_digest, b.content_digest) ||
      compareUtf8(jcs(contextRecordJson(a)), jcs(contextRecordJson(b))),
  );
}

/**
 * The JSON value Go emits for a record: the eight required keys always, `sensitivity_label`,
 * `freshness_sla_seconds` and `retrieval_params` only when non-empty (omitempty).
 */
export function contextRecordJson(record: ContextRecord): JsonObject {
  const out: JsonObject = {
    ref_id: record.ref_id,
    source_type: record.source_type,
    source_locator: record.source_locator,
    query_digest: record.query_digest,
    content_digest: record.content_digest,
    retrieved_at: formatRFC3339Nano(record.retrieved_at),
    redaction_mode: record.redaction_mode,
    immutability: record.immutability,
  };
  if (record.sensitivity_label !== '') out['sensitivity_label'] = record.sensitivity_label;
  if (record.freshness_sla_seconds !== 0) out['freshness_sla_seconds'] = record.freshness_sla_seconds;
  if (record.retrieval_params && Object.keys(record.retrieval_params).length > 0) {
    out['retrieval_params'] = record.retrieval_params as JsonObject;
  }
  return out;
}

/** The digest input (`gate.md` §4.2): the sorted array of record JSON values, `[]` when empty. */
export function contextSetDigestPayload(records: readonly ContextRecord[]): JsonObject[] {
  return sortContextRecords(records).map(contextRecordJson);
}

/** `context_set_digest`: sha256 of the JCS of the sorted records (independent of input order). */
export function contextSetDigest(records: readonly ContextRecord[]): string {
  return digestOfSorted(sortContextRecords(records));
}

function digestOfSorted(sorted: readonly ContextRecord[]): string {
  return sha256Hex(jcs(sorted.map(contextRecordJson)));
}
