import { goTrim, jcs, type JsonValue } from '../canon/index.js';
import { contextEnvelopeJson } from '../context/index.js';
import { envelopeFromRefs, openRunpack, summarizeOpenedRunpack, utcOr1980, type RunpackSummary } from '../runpack/index.js';
import { writeDeterministicZip } from '../zip/index.js';
import { buildPack, type BuildPackOptions, type BuiltPack } from './build.js';
import {
  CONTEXT_ENVELOPE_FILE,
  RUN_PAYLOAD_FILE,
  RUN_PAYLOAD_SCHEMA,
  SOURCE_RUNPACK_FILE,
  type RunPayload,
} from './types.js';

/** `run_payload.json` from a checked runpack (§1.4). */
export function runPayloadOf(runpack: RunpackSummary, normalizeCreatedAt = true): RunPayload {
  const { refs } = runpack;
  const payload: RunPayload = {
    schema_id: RUN_PAYLOAD_SCHEMA.id,
    schema_version: RUN_PAYLOAD_SCHEMA.version,
    created_at: normalizeCreatedAt ? utcOr1980(runpack.run.created_at) : runpack.run.created_at,
    run_id: runpack.manifest.run_id,
    capture_mode: runpack.manifest.capture_mode,
    manifest_digest: runpack.manifest.manifest_digest,
    intents_count: runpack.intentsCount,
    results_count: runpack.resultsCount,
    refs_count: refs.receipts.length,
  };
  if (refs.context_set_digest) payload.context_set_digest = refs.context_set_digest;
  if (refs.receipts.length > 0) payload.context_ref_count = refs.receipts.length;
  if (refs.context_evidence_mode) payload.context_evidence_mode = refs.context_evidence_mode;
  const privacy = privacyMode(refs.receipts.map((r) => r.redaction_mode));
  if (privacy) payload.context_privacy_mode = privacy;
  return payload;
}

/** The receipts' common redaction mode (blank counts as `unknown`), `mixed` if they differ, "" if none. */
function privacyMode(modes: readonly string[]): string {
  const set = new Set(modes.map((m) => goTrim(m) || 'unknown'));
  if (set.size === 0) return '';
  return set.size === 1 ? [...set][0]! : 'mixed';
}

/**
 * `BuildRunPack`: read the runpack with every integrity check, re-zip it deterministically as
 * `source/runpack.zip`, summarize it in `run_payload.json`, and add `context_envelope.json` when
 * it has receipts (failing when the refs' digest does not match them).
 */
export function buildRunPack(runpackBytes: Uint8Array, options: Omit<BuildPackOptions, 'packType' | 'sourceRef'>): BuiltPack & { runpack: RunpackSummary } {
  const opened = openRunpack(runpackBytes);
  const runpack = summarizeOpenedRunpack(opened);
  const { zip } = opened;
  const source = writeDeterministicZip(
    zip.entries.filter((e) => !e.isDirectory).map((e) => ({ path: e.name, data: zip.read(e), mode: e.mode })),
  );
  const files = [
    { path: RUN_PAYLOAD_FILE, data: Buffer.from(jcs(runPayloadOf(runpack) as unknown as JsonValue)) },
    { path: SOURCE_RUNPACK_FILE, data: source },
  ];
  if (runpack.refs.receipts.length > 0) {
    files.push({ path: CONTEXT_ENVELOPE_FILE, data: Buffer.from(jcs(contextEnvelopeJson(envelopeFromRefs(runpack.refs)))) });
  }
  const built = buildPack(files, { ...options, packType: 'run', sourceRef: runpack.manifest.run_id });
  return { ...built, runpack };
}
