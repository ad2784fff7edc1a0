import type { GoTime, JsonObject } from '../canon/index.js';

/** ContextSpec v1 envelope identifiers (`gate.md` §4.1). */
export const CONTEXT_ENVELOPE_SCHEMA_ID = 'gait.context.envelope';
export const CONTEXT_ENVELOPE_SCHEMA_VERSION = '1.0.0';
/** Envelopes larger than this many bytes are refused before decoding (`gate.md` §4.3). */
export const CONTEXT_ENVELOPE_MAX_BYTES = 1048576;

export type ContextEvidenceMode = 'best_effort' | 'required';
export const CONTEXT_EVIDENCE_MODES: readonly ContextEvidenceMode[] = ['best_effort', 'required'];

export type ContextImmutability = 'unknown' | 'mutable' | 'immutable';

/**
 * A normalized reference record. Every string is already trimmed/lowercased as the contract says;
 * optional fields use their Go zero value ("" / 0) or undefined, and are omitted from JSON then.
 */
export interface ContextRecord {
  readonly ref_id: string;
  /** Case kept. */
  readonly source_type: string;
  readonly source_locator: string;
  /** Lowercase 64-hex. */
  readonly query_digest: string;
  /** Lowercase 64-hex. */
  readonly content_digest: string;
  /** UTC; a missing time has become 1980-01-01T00:00:00Z. */
  readonly retrieved_at: GoTime;
  readonly redaction_mode: string;
  readonly immutability: ContextImmutability;
  /** Not trimmed (the reference keeps it verbatim); "" when absent. */
  readonly sensitivity_label: string;
  /** ≥ 0; 0 when absent. Not used by the gate. */
  readonly freshness_sla_seconds: number;
  /** Verbatim (not normalized); undefined when absent or empty. Deeply frozen. */
  readonly retrieval_params: Readonly<JsonObject> | undefined;
}

/**
 * A verified envelope: normalized, records sorted, `context_set_digest` recomputed (and equal to
 * the one provided, if any). Instances returned by this module are deeply frozen.
 */
export interface ContextEnvelope {
  readonly schema_id: typeof CONTEXT_ENVELOPE_SCHEMA_ID;
  readonly schema_version: typeof CONTEXT_ENVELOPE_SCHEMA_VERSION;
  /** UTC; a missing time has become 1980-01-01T00:00:00Z. */
  readonly created_at: GoTime;
  readonly producer_version: string;
  readonly context_set_id: string;
  readonly context_set_digest: string;
  readonly evidence_mode: ContextEvidenceMode;
  readonly records: readonly ContextRecord[];
}

/** A record as decoded, before normalization (Go zero values for anything absent). */
export interface ContextRecordInput {
  ref_id?: string;
  source_type?: string;
  source_locator?: string;
  query_digest?: string;
  content_digest?: string;
  retrieved_at?: GoTime;
  redaction_mode?: string;
  immutability?: string;
  sensitivity_label?: string;
  freshness_sla_seconds?: number;
  retrieval_params?: Readonly<JsonObject> | undefined;
}

/** An envelope as decoded (or assembled by a producer such as `run record`), before normalization. */
export interface ContextEnvelopeInput {
  schema_id?: string;
  schema_version?: string;
  created_at?: GoTime;
  producer_version?: string;
  context_set_id?: string;
  /** "" means "compute it". */
  context_set_digest?: string;
  evidence_mode?: string;
  records?: readonly ContextRecordInput[];
}
