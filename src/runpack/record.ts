import {
  digestJcs,
  formatRFC3339Nano,
  goLower,
  goTrim,
  isSha256Hex,
  jcs,
  toUTC,
  type GoTime,
  type JsonObject,
} from '../canon/index.js';
import type { ContextEnvelope } from '../context/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { SigningKey } from '../keys/index.js';
import { idProblem, ID_PATTERN, quoteId } from '../store/ids.js';
import { writeDeterministicZip } from '../zip/index.js';
import { envelopeFromRefs, receiptsFromEnvelope } from './context.js';
import { ZERO_TIME_TEXT } from './decode.js';
import type { RunRecordInput } from './input.js';
import { computeManifestDigest, encodeRunpackFiles, manifestFiles, manifestJson } from './manifest.js';
import { normalizeRefs } from './refs.js';
import { signManifest } from './signature.js';
import {
  INTENT_SCHEMA,
  REFS_SCHEMA,
  RESULT_SCHEMA,
  RUN_SCHEMA,
  RUNPACK_MANIFEST_SCHEMA,
  type CaptureMode,
  type IntentRecord,
  type Refs,
  type ResultRecord,
  type RunEnv,
  type RunpackManifest,
  type RunRecord,
} from './types.js';

export const RAW_CAPTURE_WARNING =
  'raw capture retains raw intent arguments and raw result payloads; handle runpack as sensitive evidence';
export const REFERENCE_STRIP_WARNING =
  'reference capture stripped raw intent arguments and raw result payloads after digesting';
export const DEFAULT_PRODUCER_VERSION = '0.0.0-dev';

export interface RecordRunOptions {
  /** `--run-id`: overrides every record's run_id. */
  runId?: string | undefined;
  /** `--capture-mode`; falls back to the input's, then `reference`. */
  captureMode?: string | undefined;
  /** `--context-evidence-mode`; falls back to the refs', then `best_effort`. */
  evidenceMode?: string | undefined;
  /** A verified `--context-envelope`; its records replace the refs' receipts. */
  envelope?: ContextEnvelope | undefined;
  /** `--unsafe-context-raw`: permits receipts with `redaction_mode: raw`. */
  unsafeContextRaw?: boolean | undefined;
  signingKey?: SigningKey | undefined;
  /** Used for a missing run `created_at`. */
  now: GoTime;
  /** Defaults for a missing `run.env`. */
  env: RunEnv;
}

export interface RecordedRunpack {
  runId: string;
  manifest: RunpackManifest;
  /** The runpack zip. */
  bytes: Buffer;
  captureMode: CaptureMode;
  warnings: string[];
}

/** Run ids name files (`runpack_<run_id>.zip`), so they follow the one id rule (`store/ids.ts`). */
const RUN_ID = ID_PATTERN;

/**
 * `run record` (§4.2 steps 1–9, `runpack.RecordRun`): resolve modes, bind the context envelope,
 * apply the raw-redaction gate, default and inherit record fields, normalize digests, strip raw
 * payloads in reference capture, then build and sign the runpack. Pure: no I/O.
 */
export function recordRunpack(input: RunRecordInput, options: RecordRunOptions): RecordedRunpack {
  const warnings: string[] = [];
  const runId = goTrim(options.runId ?? '') || goTrim(input.run.run_id);
  if (runId === '') throw usage('run_id is required (set run.run_id or --run-id)');
  const problem = idProblem(runId);
  if (problem) throw usage(`run_id ${quoteId(runId)} must match ${RUN_ID.source} (${problem})`);

  const captureMode = goLower(goTrim(options.captureMode ?? '')) || goLower(goTrim(input.captureMode)) || 'reference';
  if (captureMode !== 'reference' && captureMode !== 'raw') throw usage('capture mode must be reference or raw');

  // Resolved as the reference does (flag > the input's refs > best_effort) and always written to the
  // refs, so a plain record's manifest_digest equals the reference's.
  const evidenceMode = goLower(goTrim(options.evidenceMode ?? '')) || goLower(goTrim(input.refs.context_evidence_mode ?? '')) || 'best_effort';
  if (evidenceMode !== 'best_effort' && evidenceMode !== 'required') {
    throw usage('context evidence mode must be best_effort or required');
  }

  const run = withRunDefaults(input.run, runId, options);
  let refs: Refs = inherit(input.refs, run, REFS_SCHEMA);
  refs.context_evidence_mode = evidenceMode;
  if (options.envelope) {
    if (!options.unsafeContextRaw && options.envelope.records.some((r) => isRaw(r.redaction_mode))) {
      throw usage('context envelope contains raw redaction records; pass --unsafe-context-raw to record them');
    }
    refs = {
      ...refs,
      context_set_digest: options.envelope.context_set_digest,
      context_evidence_mode: evidenceMode,
      context_ref_count: options.envelope.records.length,
      receipts: receiptsFromEnvelope(options.envelope),
    };
  }
  if (!options.unsafeContextRaw && refs.receipts.some((r) => isRaw(r.redaction_mode))) {
    throw usage('refs contain raw redaction receipts; pass --unsafe-context-raw to record them');
  }

  const intents = input.intents.map((intent) => normalizeIntent(inherit(intent, run, INTENT_SCHEMA), input.intentArgs));
  const results = input.results.map((result) => normalizeResult(inherit(result, run, RESULT_SCHEMA), input.resultPayloads));
  refs = normalizeRefs({ ...refs, receipts: refs.receipts.map((r) => bindTraceReceipt(r, intents, results)) }, ERROR_CODES.RUN_RECORD_INVALID);
  if (refs.context_evidence_mode === 'required' && !refs.context_set_digest) {
    throw usage('context evidence mode required but context_set_digest is missing');
  }
  // Stricter than the reference, which finds out only at pack build: receipts must form a valid
  // context set and agree with any digest the refs claim, so recorded evidence is always packable.
  if (refs.receipts.length > 0 || refs.context_set_digest) envelopeFromRefs(refs);

  const hadRawPayloads = intents.some((i) => i.args !== undefined) || results.some((r) => r.result !== undefined);
  if (captureMode === 'raw') warnings.push(RAW_CAPTURE_WARNING);
  else {
    for (const intent of intents) delete intent.args;
    for (const result of results) delete result.result;
    if (hadRawPayloads) warnings.push(REFERENCE_STRIP_WARNING);
  }

  const files = encodeRunpackFiles(run, intents, results, refs);
  const manifest: RunpackManifest = {
    schema_id: RUNPACK_MANIFEST_SCHEMA.id,
    schema_version: RUNPACK_MANIFEST_SCHEMA.version,
    created_at: run.created_at,
    producer_version: run.producer_version,
    run_id: runId,
    capture_mode: captureMode,
    files: manifestFiles(files),
    manifest_digest: '',
  };
  manifest.manifest_digest = computeManifestDigest(manifest);
  if (options.signingKey) manifest.signatures = [signManifest(manifestJson(manifest), options.signingKey)];

  const entries = [...files].map(([path, data]) => ({ path, data }));
  entries.push({ path: 'manifest.json', data: Buffer.from(jcs(manifestJson(manifest))) });
  return { runId, manifest, bytes: writeDeterministicZip(entries), captureMode, warnings };
}

function withRunDefaults(run: RunRecord, runId: string, options: RecordRunOptions): RunRecord {
  return {
    ...run,
    schema_id: run.schema_id || RUN_SCHEMA.id,
    schema_version: run.schema_version || RUN_SCHEMA.version,
    created_at: run.created_at === ZERO_TIME_TEXT ? formatRFC3339Nano(toUTC(options.now)) : run.created_at,
    producer_version: run.producer_version || DEFAULT_PRODUCER_VERSION,
    run_id: runId,
    env: {
      os: run.env.os || options.env.os,
      arch: run.env.arch || options.env.arch,
      runtime: run.env.runtime || options.env.runtime,
    },
  };
}

interface Header {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  run_id: string;
}

/** Missing header fields come from the record's own schema and from the run (§4.2 defaults). */
function inherit<T extends Header>(record: T, run: RunRecord, schema: { id: string; version: string }): T {
  return {
    ...record,
    schema_id: record.schema_id || schema.id,
    schema_version: record.schema_version || schema.version,
    created_at: record.created_at === ZERO_TIME_TEXT ? run.created_at : record.created_at,
    producer_version: record.producer_version || run.producer_version,
    run_id: run.run_id,
  };
}

function normalizeIntent(intent: IntentRecord, normalized: ReadonlyMap<string, JsonObject>): IntentRecord {
  const digest = resolveDigest(`intent ${intent.intent_id} args`, intent.args_digest, normalized.get(intent.intent_id), intent.args);
  if (!digest) throw usage(`intent ${intent.intent_id} requires args_digest or normalization.intent_args`);
  return { ...intent, args_digest: digest };
}

function normalizeResult(result: ResultRecord, normalized: ReadonlyMap<string, JsonObject>): ResultRecord {
  const digest = resolveDigest(`result ${result.intent_id}`, result.result_digest, normalized.get(result.intent_id), result.result);
  if (!digest) throw usage(`result ${result.intent_id} requires result_digest or normalization.result_payloads`);
  return { ...result, result_digest: digest };
}

/**
 * A normalization payload's digest fills the field or must equal it; otherwise a given digest is
 * kept (and must be sha256 hex); otherwise the inline payload is digested.
 */
function resolveDigest(what: string, given: string, normalized: JsonObject | undefined, inline: JsonObject | undefined): string {
  const provided = goTrim(given);
  if (provided && !isSha256Hex(goLower(provided))) throw usage(`${what} digest must be sha256 hex`);
  if (normalized) {
    const digest = digestJcs(normalized);
    if (provided && goLower(provided) !== digest) throw usage(`${what} digest mismatch`);
    return provided || digest;
  }
  if (provided) return provided;
  return inline ? digestJcs(inline) : '';
}

/**
 * A `gait.trace` receipt `trace_<intent_id>` is bound to its intent and result: its query digest
 * is digest({tool_name, args_digest}) and its content digest the result digest (filled or equal).
 */
function bindTraceReceipt<R extends { ref_id: string; source_type: string; query_digest: string; content_digest: string }>(
  receipt: R,
  intents: readonly IntentRecord[],
  results: readonly ResultRecord[],
): R {
  if (goLower(goTrim(receipt.source_type)) === 'gait.trace' && receipt.ref_id.startsWith('trace_')) {
    const intentId = receipt.ref_id.slice('trace_'.length);
    const intent = intents.find((i) => i.intent_id === intentId);
    const result = results.find((r) => r.intent_id === intentId);
    if (!intent || !result) throw usage(`receipt ${receipt.ref_id} references unknown intent ${intentId}`);
    const query = digestJcs({ tool_name: intent.tool_name, args_digest: intent.args_digest });
    const content = result.result_digest;
    if (receipt.query_digest && goLower(goTrim(receipt.query_digest)) !== query) throw usage(`receipt ${receipt.ref_id} query_digest mismatch`);
    if (receipt.content_digest && goLower(goTrim(receipt.content_digest)) !== goLower(content)) {
      throw usage(`receipt ${receipt.ref_id} content_digest mismatch`);
    }
    return { ...receipt, query_digest: query, content_digest: content };
  }
  if (!goTrim(receipt.query_digest) || !goTrim(receipt.content_digest)) {
    throw usage(`receipt ${receipt.ref_id} requires query_digest and content_digest`);
  }
  return receipt;
}

function isRaw(redactionMode: string): boolean {
  return goLower(goTrim(redactionMode)) === 'raw';
}

function usage(message: string): WardError {
  return new WardError(ERROR_CODES.RUN_RECORD_INVALID, message);
}
