import { ERROR_CODES, WardError } from '../errors.js';
import { inspectPack, packVerified, verifyPack } from '../pack/index.js';
import { readRunpack } from '../runpack/index.js';
import { compareUtf8, formatRFC3339Nano, isJsonObject, parseJsonTime, parseStrictJson, sha256Hex, toUTC, type JsonObject } from '../canon/index.js';
import { parseDecisionCapture } from '../trace/index.js';
import { checkId } from './ids.js';
import type { StoreEntry, StoreInput } from './types.js';

/**
 * The indexable facts of an artifact, after checking it is what it claims to be: traces must be
 * `gait.gate.trace` JSON; runpacks and packs must pass their integrity checks (hashes, manifest,
 * proof chain). Signatures are not judged here: the store indexes evidence, verification is a
 * separate step with the right keys. Ids that become keys and file names (the entry id, trace ids,
 * run ids, pack source refs) must be valid ids (`ids.ts`), or the artifact is refused.
 */
export function describeArtifact(input: StoreInput, ingestedAt: string): StoreEntry {
  const base = { digest: sha256Hex(input.bytes), size: input.bytes.length, ingested_at: ingestedAt };
  switch (input.kind) {
    case 'trace':
      return { ...base, ...describeTrace(input.fields ?? parseTrace(input.bytes), base.digest, ingestedAt) };
    case 'capture': {
      let capture;
      try {
        capture = parseDecisionCapture(input.bytes);
      } catch (err) {
        throw invalid((err as Error).message);
      }
      return compact({
        ...base,
        kind: 'capture' as const,
        id: storeId('capture event_id', capture.event_id),
        time: utcText(formatRFC3339Nano(capture.evaluation_time), ingestedAt),
        refs: [capture.trace_id],
        tool_names: capture.tool_name ? [capture.tool_name] : [],
        verdict: capture.verdict,
        reason_codes: unique(capture.reason_codes),
      });
    }
    case 'runpack': {
      const runpack = readRunpack(input.bytes);
      storeId('runpack run_id', runpack.manifest.run_id);
      return compact({
        ...base,
        kind: 'runpack' as const,
        id: storeId('runpack manifest_digest', runpack.manifest.manifest_digest),
        time: utcText(runpack.run.created_at, ingestedAt),
        run_id: runpack.manifest.run_id,
        refs: [runpack.manifest.run_id],
        tool_names: unique(runpack.intents.map((i) => i.tool_name)),
      });
    }
    case 'pack': {
      const verified = verifyPack(input.bytes);
      if (!packVerified(verified, false)) throw invalid('pack failed integrity verification');
      const view = inspectPack(input.bytes);
      const isRun = view.pack_type === 'run';
      storeId('pack source_ref', view.source_ref);
      return compact({
        ...base,
        kind: 'pack' as const,
        id: storeId('pack pack_id', view.pack_id),
        time: utcText(view.run_payload?.created_at ?? (view.authorization_payload?.['created_at'] as string | undefined) ?? '', ingestedAt),
        pack_type: view.pack_type!,
        run_id: isRun ? view.source_ref! : '',
        refs: [view.source_ref!],
        tool_names: unique((view.run_lineage?.intent_results ?? []).map((r) => r.tool_name ?? '')),
      });
    }
  }
}

/**
 * The fields of a trace record the index reads (`describeTrace`): what a writer that has the record
 * passes as `StoreInput.fields` instead of having the store parse the bytes again.
 */
export function traceIndexFields(record: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ['schema_id', 'event_id', 'trace_id', 'observed_at', 'created_at', 'run_id', 'tool_name', 'verdict', 'reason_codes']) {
    if (key in record) out[key] = record[key]!;
  }
  const rel = record['relationship'];
  if (isJsonObject(rel) && 'parent_ref' in rel) out['relationship'] = { parent_ref: rel['parent_ref']! };
  return out;
}

function parseTrace(bytes: Buffer): unknown {
  try {
    return parseStrictJson(bytes.toString('utf8'));
  } catch (err) {
    throw invalid(`trace: ${(err as Error).message}`);
  }
}

function describeTrace(value: unknown, digest: string, ingestedAt: string): Omit<StoreEntry, 'digest' | 'size' | 'ingested_at'> {
  if (!isJsonObject(value) || value['schema_id'] !== 'gait.gate.trace') throw invalid('trace: not a gait.gate.trace record');
  const s = (key: string, from: JsonObject = value) => (typeof from[key] === 'string' ? (from[key] as string) : '');
  const parent = isJsonObject(value['relationship']) && isJsonObject(value['relationship']['parent_ref']) ? value['relationship']['parent_ref'] : {};
  const reasons = Array.isArray(value['reason_codes']) ? value['reason_codes'].filter((r): r is string => typeof r === 'string') : [];
  if ('event_id' in value) storeId('trace event_id', value['event_id']);
  if ('trace_id' in value) storeId('trace trace_id', value['trace_id']);
  return compact({
    kind: 'trace' as const,
    id: s('event_id') || digest,
    time: utcText(s('observed_at') || s('created_at'), ingestedAt),
    run_id: s('run_id'),
    session_id: s('kind', parent) === 'session' ? s('id', parent) : '',
    refs: s('trace_id') ? [s('trace_id')] : [],
    tool_names: s('tool_name') ? [s('tool_name')] : [],
    verdict: s('verdict'),
    reason_codes: unique(reasons),
  });
}

/** A time in UTC RFC3339Nano; missing, unparsable or the 1980 placeholder fall back to the ingest time. */
function utcText(text: string, fallback: string): string {
  if (!text) return fallback;
  try {
    const t = toUTC(parseJsonTime(text, 'time'));
    const out = formatRFC3339Nano(t);
    return out.startsWith('1980-01-01T00:00:00') || out.startsWith('0001-') ? fallback : out;
  } catch {
    return fallback;
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values.filter((v) => v !== ''))].sort(compareUtf8);
}

/** Drop empty optional fields so stored entries stay small and comparable. */
function compact<T extends Record<string, unknown>>(entry: T): T {
  for (const key of Object.keys(entry)) {
    const value = entry[key];
    if (value === '' || (Array.isArray(value) && value.length === 0)) delete entry[key];
  }
  return entry;
}

/** An id the store would use as a key or file name: valid (`ids.ts`) or the artifact is refused (exit 2). */
function storeId(what: string, value: unknown): string {
  return checkId(what, value, { code: ERROR_CODES.STORE_INVALID, exitCode: 2 });
}

function invalid(message: string): WardError {
  return new WardError(ERROR_CODES.STORE_INVALID, message, { exitCode: 2 });
}
