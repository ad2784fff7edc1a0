import type { VerifyKey } from '../keys/index.js';
import { isCompactJws, isDsseEnvelope, verifyDsse, verifyJws, type WrapperCheck } from './export.js';
import { TRACE_SCHEMA_ID, WARD_ONLY_TRACE_FIELDS } from './record.js';
import { verifyDigestedJson, withoutSignature } from './sign.js';
import { isJsonObject, jcs, parseStrictJson, sha256Hex, type JsonObject, type JsonValue } from '../canon/index.js';

/**
 * Trace verification, one construction for both producers: sha256(JCS(record minus `signature`))
 * over *every* member of the file.
 *
 * The reference verifier instead projects the record onto its Go struct first, silently dropping
 * unknown members (`gate.md` §6.3). Ward does not: a genuine reference trace holds exactly the
 * struct's members, written by Go in the form the projection would re-create, so the whole-record
 * digest equals the reference digest and V7 verifies unchanged; while a member added after signing
 * (to a Ward or a reference trace) is an unsigned claim a reader could mistake for signed data,
 * so it fails. The projection is only used to explain such a failure.
 */
export type TraceArtifactFormat = 'trace' | 'jws' | 'dsse';

export interface TraceVerification {
  ok: boolean;
  format: TraceArtifactFormat;
  trace_id: string;
  verdict: string;
  /** The key that verified (or the record's claimed key_id when verification failed). */
  key_id: string;
  signature_status: 'verified' | 'failed';
  error?: string;
}

/** Top-level members the reference trace struct knows (`gate.md` §6.1), for diagnostics. */
const REFERENCE_TRACE_FIELDS = new Set([
  'schema_id', 'schema_version', 'created_at', 'observed_at', 'producer_version', 'trace_id', 'event_id',
  'correlation_id', 'tool_name', 'args_digest', 'intent_digest', 'policy_digest', 'agent_id', 'agent_identity',
  'run_id', 'workflow_id', 'repo', 'environment', 'credential_ref', 'credential_source', 'credential_access_type',
  'credential_issuer', 'credential_subject', 'credential_owner', 'credential_target_binding',
  'credential_run_binding', 'credential_job_binding', 'credential_ttl_seconds', 'approval_ref',
  'wrkr_inventory_ref', 'agent_action_bom_ref', 'broker_credential_ref', 'broker_credential_source',
  'broker_credential_access_type', 'broker_credential_issuer', 'broker_request_digest', 'broker_target_binding',
  'broker_run_binding', 'broker_job_binding', 'policy_id', 'policy_version', 'matched_rule_ids', 'verdict',
  'context_set_digest', 'context_evidence_mode', 'context_ref_count', 'context_source', 'script', 'step_count',
  'script_hash', 'composite_risk_class', 'step_verdicts', 'pre_approved', 'pattern_id', 'registry_reason',
  'violations', 'latency_ms', 'approval_token_ref', 'delegation_ref', 'freeze_window', 'sandbox', 'kill_switch',
  'mcp_trust', 'relationship', 'skill_provenance', 'signature',
]);

/** Verify a parsed trace record. */
export function verifyTraceRecord(record: JsonValue, keys: readonly VerifyKey[]): TraceVerification {
  if (!isJsonObject(record)) return failed('trace', {}, 'not a trace record: expected a JSON object');
  if (record['schema_id'] !== TRACE_SCHEMA_ID) {
    return failed('trace', record, `not a trace record: schema_id ${JSON.stringify(record['schema_id'] ?? null)}`);
  }
  const check = verifyDigestedJson(withoutSignature(record), record['signature'], keys, { exactMembers: true });
  if (!check.ok) {
    if (check.failure === 'missing') return failed('trace', record, 'trace signature missing');
    if (check.failure === 'digest_mismatch') return failed('trace', record, explainDigestMismatch(record));
    return failed('trace', record, check.message);
  }
  return { ok: true, format: 'trace', trace_id: str(record['trace_id']), verdict: str(record['verdict']), key_id: check.keyId, signature_status: 'verified' };
}

/**
 * Verify trace text in any form Ward reads: a trace record, a compact JWS or a DSSE envelope.
 * Wrapped traces must pass both the wrapper signature and their own.
 */
export function verifyTraceText(text: string, keys: readonly VerifyKey[]): TraceVerification {
  if (isCompactJws(text)) return unwrapped('jws', verifyJws(text, keys), keys);
  let value: JsonValue;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    return failed('trace', {}, `parse trace: ${(err as Error).message}`);
  }
  if (isDsseEnvelope(value)) return unwrapped('dsse', verifyDsse(value, keys), keys);
  return verifyTraceRecord(value, keys);
}

function unwrapped(format: TraceArtifactFormat, check: WrapperCheck, keys: readonly VerifyKey[]): TraceVerification {
  if (!check.ok) return failed(format, {}, check.error);
  return { ...verifyTraceRecord(check.record, keys), format };
}

function explainDigestMismatch(record: JsonObject): string {
  const signature = record['signature'];
  const claimed = isJsonObject(signature) ? signature['signed_digest'] : undefined;
  const extra = Object.keys(record).filter((key) => !REFERENCE_TRACE_FIELDS.has(key) && !WARD_ONLY_TRACE_FIELDS.includes(key));
  if (extra.length > 0 && typeof claimed === 'string') {
    const projected = Object.fromEntries(Object.entries(withoutSignature(record)).filter(([key]) => !extra.includes(key)));
    if (sha256Hex(jcs(projected)) === claimed) {
      return `signed_digest mismatch: unsigned fields added after signing: ${extra.sort().join(', ')}`;
    }
  }
  return 'signed_digest mismatch';
}

function failed(format: TraceArtifactFormat, record: JsonObject, error: string): TraceVerification {
  const signature = record['signature'];
  return {
    ok: false,
    format,
    trace_id: str(record['trace_id']),
    verdict: str(record['verdict']),
    key_id: isJsonObject(signature) ? str(signature['key_id']) : '',
    signature_status: 'failed',
    error,
  };
}

function str(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}
