import { parseJsonTime } from '../canon/index.js';
import {
  contextRecordJson,
  normalizeContextEnvelope,
  type ContextEnvelope,
  type ContextRecordInput,
} from '../context/index.js';
import type { Receipt, Refs } from './types.js';

/** Envelope records as runpack receipts (same JSON shape; sorted by ref_id by `normalizeRefs`). */
export function receiptsFromEnvelope(envelope: ContextEnvelope): Receipt[] {
  return envelope.records.map((record) => contextRecordJson(record) as unknown as Receipt);
}

/**
 * `EnvelopeFromRefs` (§1.8): the refs' receipts as a verified context envelope with
 * `context_set_id` = run_id. Fails with `context_set_digest mismatch` when the refs claim a digest
 * their receipts do not have.
 */
export function envelopeFromRefs(refs: Refs): ContextEnvelope {
  return normalizeContextEnvelope({
    created_at: parseJsonTime(refs.created_at, 'refs.created_at'),
    producer_version: refs.producer_version,
    context_set_id: refs.run_id,
    context_set_digest: refs.context_set_digest ?? '',
    evidence_mode: refs.context_evidence_mode ?? '',
    records: refs.receipts.map(recordInput),
  });
}

function recordInput(receipt: Receipt): ContextRecordInput {
  return {
    ref_id: receipt.ref_id,
    source_type: receipt.source_type,
    source_locator: receipt.source_locator,
    query_digest: receipt.query_digest,
    content_digest: receipt.content_digest,
    retrieved_at: parseJsonTime(receipt.retrieved_at, 'retrieved_at'),
    redaction_mode: receipt.redaction_mode,
    immutability: receipt.immutability ?? '',
    sensitivity_label: receipt.sensitivity_label ?? '',
    freshness_sla_seconds: receipt.freshness_sla_seconds ?? 0,
    retrieval_params: receipt.retrieval_params,
  };
}
