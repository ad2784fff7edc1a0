import type { JsonObject } from '../canon/index.js';

/**
 * Runpack records as they are stored: the JSON the reference's Go structs marshal to (times as
 * RFC3339Nano strings, optional keys absent when Go's omitempty drops them). Shapes follow
 * `packs-regress.md` §1.2.
 */
export const RUN_SCHEMA = { id: 'gait.runpack.run', version: '1.0.0' } as const;
export const INTENT_SCHEMA = { id: 'gait.runpack.intent', version: '1.0.0' } as const;
export const RESULT_SCHEMA = { id: 'gait.runpack.result', version: '1.0.0' } as const;
export const REFS_SCHEMA = { id: 'gait.runpack.refs', version: '1.0.0' } as const;
export const RUNPACK_MANIFEST_SCHEMA = { id: 'gait.runpack.manifest', version: '1.0.0' } as const;

export const CAPTURE_MODES = ['reference', 'raw'] as const;
export type CaptureMode = (typeof CAPTURE_MODES)[number];
export const EVIDENCE_MODES = ['best_effort', 'required'] as const;
export type EvidenceMode = (typeof EVIDENCE_MODES)[number];

/** The four payload files a runpack manifest lists, in path order. */
export const RUNPACK_FILES = ['intents.jsonl', 'refs.json', 'results.jsonl', 'run.json'] as const;

export interface RunEnv {
  os: string;
  arch: string;
  runtime: string;
}

export interface TimelineEvent {
  event: string;
  ts: string;
  ref?: string;
  relationship?: JsonObject;
}

export interface RunRecord {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  run_id: string;
  env: RunEnv;
  /** `null` when the input had none: Go marshals a nil slice without omitempty as null. */
  timeline: TimelineEvent[] | null;
}

interface RecordHeader {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  run_id: string;
}

export interface IntentRecord extends RecordHeader {
  intent_id: string;
  tool_name: string;
  args_digest: string;
  args?: JsonObject;
}

export interface ResultRecord extends RecordHeader {
  intent_id: string;
  status: string;
  result_digest: string;
  result?: JsonObject;
}

export interface Receipt {
  ref_id: string;
  source_type: string;
  source_locator: string;
  query_digest: string;
  content_digest: string;
  retrieved_at: string;
  redaction_mode: string;
  immutability?: string;
  freshness_sla_seconds?: number;
  sensitivity_label?: string;
  retrieval_params?: JsonObject;
}

export interface Refs extends RecordHeader {
  context_set_digest?: string;
  context_evidence_mode?: string;
  context_ref_count?: number;
  receipts: Receipt[];
}

export interface ManifestFile {
  path: string;
  sha256: string;
}

/** A manifest signature (`gate.md` §6.2 construction over the manifest). */
export interface ManifestSignature {
  alg: string;
  key_id: string;
  sig: string;
  signed_digest?: string;
}

export interface RunpackManifest {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  run_id: string;
  capture_mode: string;
  files: ManifestFile[];
  manifest_digest: string;
  signatures?: ManifestSignature[];
}

/** A runpack read back and checked (`ReadRunpack`). */
export interface Runpack {
  manifest: RunpackManifest;
  run: RunRecord;
  intents: IntentRecord[];
  results: ResultRecord[];
  refs: Refs;
}
