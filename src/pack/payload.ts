import { isSha256Hex, isZeroTime } from '../canon/index.js';
import { expectRootObject, readInt, readString, readTime, rejectUnknownFields, type Decoder } from '../context/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { summarizeRunpack, type RunpackSummary } from '../runpack/index.js';
import { parseSignedJson } from './manifest.js';
import { RUN_PAYLOAD_FILE, RUN_PAYLOAD_SCHEMA, SOURCE_RUNPACK_FILE, type PackManifest, type RunPayload } from './types.js';

const DECODER: Decoder = { prefix: 'parse run_payload.json: ', root: 'RunPayload', code: ERROR_CODES.PACK_VERIFY_FAILED };
const RUN_PAYLOAD_KEYS = new Set([
  'schema_id',
  'schema_version',
  'created_at',
  'run_id',
  'capture_mode',
  'manifest_digest',
  'intents_count',
  'results_count',
  'refs_count',
  'context_set_digest',
  'context_ref_count',
  'context_evidence_mode',
  'context_privacy_mode',
]);

/** Strict decode of `run_payload.json` (unknown fields rejected). */
export function decodeRunPayload(bytes: Buffer): RunPayload {
  const root = expectRootObject(DECODER, parseSignedJson(bytes));
  rejectUnknownFields(DECODER, root, RUN_PAYLOAD_KEYS);
  const createdAt = readTime(DECODER, root, 'created_at');
  const payload: RunPayload = {
    schema_id: readString(DECODER, root, 'schema_id'),
    schema_version: readString(DECODER, root, 'schema_version'),
    created_at: isZeroTime(createdAt) ? '' : (root['created_at'] as string),
    run_id: readString(DECODER, root, 'run_id'),
    capture_mode: readString(DECODER, root, 'capture_mode'),
    manifest_digest: readString(DECODER, root, 'manifest_digest'),
    intents_count: readInt(DECODER, root, 'intents_count'),
    results_count: readInt(DECODER, root, 'results_count'),
    refs_count: readInt(DECODER, root, 'refs_count'),
  };
  const optionalString = (key: 'context_set_digest' | 'context_evidence_mode' | 'context_privacy_mode') => {
    const value = readString(DECODER, root, key);
    if (value) payload[key] = value;
  };
  optionalString('context_set_digest');
  optionalString('context_evidence_mode');
  optionalString('context_privacy_mode');
  const count = readInt(DECODER, root, 'context_ref_count');
  if (count !== 0) payload.context_ref_count = count;
  return payload;
}

/**
 * The run-pack payload contract (§1.7 step 8). Beyond the reference, Ward opens the embedded
 * runpack, checks its integrity, and requires the payload's facts to match it: a payload that
 * misstates its own evidence is refused even when signed.
 */
export function checkRunPayload(manifest: PackManifest, files: ReadonlyMap<string, Buffer>): RunPayload {
  const payloadBytes = files.get(RUN_PAYLOAD_FILE);
  const source = files.get(SOURCE_RUNPACK_FILE);
  if (!payloadBytes) throw fail(`run pack missing ${RUN_PAYLOAD_FILE}`);
  if (!source) throw fail(`run pack missing ${SOURCE_RUNPACK_FILE}`);
  const payload = decodeRunPayload(payloadBytes);
  if (payload.schema_id !== RUN_PAYLOAD_SCHEMA.id || payload.schema_version !== RUN_PAYLOAD_SCHEMA.version) {
    throw fail('run payload schema_id/schema_version invalid');
  }
  if (payload.created_at === '') throw fail('run payload created_at is required');
  if (payload.run_id.trim() === '') throw fail('run payload run_id is required');
  if (payload.capture_mode !== 'reference' && payload.capture_mode !== 'raw') throw fail('run payload capture_mode must be reference or raw');
  if (!isSha256Hex(payload.manifest_digest.toLowerCase())) throw fail('run payload manifest_digest must be sha256 hex');
  if (payload.intents_count < 0 || payload.results_count < 0 || payload.refs_count < 0 || (payload.context_ref_count ?? 0) < 0) {
    throw fail('run payload counts must be >= 0');
  }
  if (payload.context_set_digest && !isSha256Hex(payload.context_set_digest.toLowerCase())) {
    throw fail('run payload context_set_digest must be sha256 hex');
  }
  if (payload.context_evidence_mode && payload.context_evidence_mode !== 'best_effort' && payload.context_evidence_mode !== 'required') {
    throw fail('run payload context_evidence_mode must be best_effort or required');
  }
  if (payload.run_id !== manifest.source_ref) throw fail('run payload run_id does not match manifest source_ref');

  let summary: RunpackSummary;
  try {
    summary = summarizeRunpack(source);
  } catch (err) {
    throw fail(`${SOURCE_RUNPACK_FILE}: ${(err as Error).message}`);
  }
  const embedded: Pick<RunPayload, (typeof CROSS_CHECKED)[number]> = {
    run_id: summary.manifest.run_id,
    capture_mode: summary.manifest.capture_mode,
    manifest_digest: summary.manifest.manifest_digest,
    intents_count: summary.intentsCount,
    results_count: summary.resultsCount,
    refs_count: summary.refs.receipts.length,
  };
  if (summary.refs.context_set_digest) embedded.context_set_digest = summary.refs.context_set_digest;
  for (const key of CROSS_CHECKED) {
    if (String(embedded[key] ?? '').toLowerCase() !== String(payload[key] ?? '').toLowerCase()) {
      throw fail(`run payload ${key} does not match ${SOURCE_RUNPACK_FILE}`);
    }
  }
  return payload;
}

/** The payload facts that follow unambiguously from the embedded runpack. */
const CROSS_CHECKED = [
  'run_id',
  'capture_mode',
  'manifest_digest',
  'intents_count',
  'results_count',
  'refs_count',
  'context_set_digest',
] as const satisfies readonly (keyof RunPayload)[];

function fail(message: string): WardError {
  return new WardError(ERROR_CODES.PACK_VERIFY_FAILED, message);
}
