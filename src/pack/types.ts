import type { JsonObject } from '../canon/index.js';
import type { HashMismatch, ManifestSignature, SignatureStatus } from '../runpack/index.js';

/** PackSpec v1 identifiers (`packs-regress.md` §1.4–§1.5). */
export const PACK_MANIFEST_SCHEMA = { id: 'gait.pack.manifest', version: '1.0.0' } as const;
export const RUN_PAYLOAD_SCHEMA = { id: 'gait.pack.run', version: '1.0.0' } as const;
export const AUTHORIZATION_PAYLOAD_SCHEMA = { id: 'gait.pack.authorization', version: '1.0.0' } as const;
export const PACK_DIFF_SCHEMA = { id: 'gait.pack.diff', version: '1.0.0' } as const;
export const PACK_OUTPUT_SCHEMA = { id: 'gait.pack.output', version: '1.0.0' } as const;

export const PACK_TYPES = ['run', 'job', 'call', 'authorization'] as const;
export type PackType = (typeof PACK_TYPES)[number];

export const PACK_MANIFEST_FILE = 'pack_manifest.json';
export const PROOF_RECORDS_FILE = 'proof_records.jsonl';
export const RUN_PAYLOAD_FILE = 'run_payload.json';
export const SOURCE_RUNPACK_FILE = 'source/runpack.zip';
export const CONTEXT_ENVELOPE_FILE = 'context_envelope.json';
export const AUTHORIZATION_BUNDLE_FILE = 'authorization_bundle.json';

/** Every manifest Gait (and Ward) builds carries this fixed created_at. */
export const PACK_CREATED_AT = '1980-01-01T00:00:00Z';

export interface PackContent {
  path: string;
  sha256: string;
  type: string;
}

export interface PackManifest {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  pack_id: string;
  pack_type: string;
  source_ref: string;
  contents: PackContent[];
  signatures?: ManifestSignature[];
}

/** `gait.pack.run` 1.0.0: the summary of the embedded runpack. */
export interface RunPayload {
  schema_id: string;
  schema_version: string;
  created_at: string;
  run_id: string;
  capture_mode: string;
  manifest_digest: string;
  intents_count: number;
  results_count: number;
  refs_count: number;
  context_set_digest?: string;
  context_ref_count?: number;
  context_evidence_mode?: string;
  context_privacy_mode?: string;
}

/** `pack verify` result (§1.7); optional keys are omitted when empty. */
export interface PackVerifyResult {
  pack_id?: string;
  pack_type?: string;
  source_ref?: string;
  files_checked: number;
  proof_records_verified?: number;
  missing_files?: string[];
  hash_mismatches?: HashMismatch[];
  undeclared_files?: string[];
  signature_status?: SignatureStatus;
  signature_errors?: string[];
  signatures_total?: number;
  signatures_valid?: number;
  legacy_type?: string;
  /**
   * Ward addition: the proof chain's first record hashes in the form Ward used before 2026-11-28
   * (`integrity: {}` instead of the reference's `{"previous_record_hash": ""}`). It verifies, but the
   * reference rejects it; `ward pack upgrade` writes a reference-compatible copy.
   */
  legacy_proof_records?: true;
}

export interface RunLineage {
  timeline_events: number;
  receipt_count: number;
  intent_results: { intent_id: string; tool_name?: string; status?: string }[];
}

export interface InspectResult {
  pack_id?: string;
  pack_type?: string;
  source_ref?: string;
  manifest?: JsonObject;
  run_payload?: RunPayload;
  authorization_bundle?: JsonObject;
  authorization_payload?: JsonObject;
  run_lineage?: RunLineage;
  legacy_type?: string;
}

export type DriftClassification = 'none' | 'runtime_only' | 'semantic';

export interface PackDiffSummary {
  changed: boolean;
  added_files?: string[];
  removed_files?: string[];
  changed_files?: string[];
  manifest_delta: boolean;
  context_changed?: boolean;
  context_runtime_only_changes?: boolean;
  context_drift_classification: DriftClassification;
}

export interface PackDiff {
  schema_id: string;
  schema_version: string;
  created_at: string;
  left_pack_id: string;
  right_pack_id: string;
  left_pack_type: string;
  right_pack_type: string;
  summary: PackDiffSummary;
}
