import { join } from 'node:path';
import { compareUtf8, formatRFC3339Nano, isJsonObject, parseJsonTime, parseStrictJson, type GoTime, type JsonObject } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { normalizedIntentJson } from '../intent/digest.js';
import type { HostResolution, ResolvedHosts } from '../intent/address.js';
import type { NormalizedIntent } from '../intent/types.js';
import { writeFileAtomic } from '../state/atomic-file.js';
import type { SignedTrace } from './record.js';

/**
 * Decision captures: the input of a decision kept beside its trace, so a later policy can be
 * replayed against real traffic (`ward regress replay`). A trace carries only digests; the capture
 * carries the normalized intent and the bound context envelope, which may be sensitive — capturing
 * is therefore off unless asked for (`--capture-intents`).
 */
export const DECISION_CAPTURE_SCHEMA_ID = 'ward.decision_capture';
export const DECISION_CAPTURE_SCHEMA_VERSION = '1.0.0';

export interface DecisionCapture {
  trace_id: string;
  event_id: string;
  /** The clock the decision used (`--evaluation-time` or the wall clock): replay uses it too. */
  evaluation_time: GoTime;
  policy_digest: string;
  intent_digest: string;
  tool_name: string;
  verdict: string;
  reason_codes: string[];
  matched_rule: string;
  /** The normalized intent request; absent when the intent could not be evaluated. */
  intent?: JsonObject;
  intent_error?: string;
  /** The context envelope JSON exactly as it was given, when one was bound. */
  context_envelope?: JsonObject;
  /** What the targets' host names resolved to when the decision was made: replay judges them the same. */
  resolved_hosts?: ResolvedHosts;
  /** The capture record as read. */
  raw: JsonObject;
}

export interface CaptureInput {
  trace: SignedTrace;
  evaluationTime: GoTime;
  intent: NormalizedIntent | undefined;
  intentError: string | undefined;
  contextEnvelope: JsonObject | undefined;
  resolvedHosts?: ResolvedHosts | undefined;
}

export function buildDecisionCapture(input: CaptureInput): JsonObject {
  const t = input.trace;
  const out: JsonObject = {
    schema_id: DECISION_CAPTURE_SCHEMA_ID,
    schema_version: DECISION_CAPTURE_SCHEMA_VERSION,
    trace_id: t['trace_id'] as string,
    event_id: t['event_id'] as string,
    evaluation_time: formatRFC3339Nano(input.evaluationTime),
    policy_digest: t['policy_digest'] as string,
    intent_digest: t['intent_digest'] as string,
    tool_name: t['tool_name'] as string,
    verdict: t['verdict'] as string,
    reason_codes: (t['reason_codes'] as string[] | undefined) ?? [],
    matched_rule: (t['matched_rule'] as string | undefined) ?? '',
  };
  if (input.intent) out['intent'] = normalizedIntentJson(input.intent);
  if (input.intentError !== undefined) out['intent_error'] = input.intentError;
  if (input.contextEnvelope) out['context_envelope'] = input.contextEnvelope;
  if (input.resolvedHosts) out['resolved_hosts'] = resolvedHostsJson(input.resolvedHosts);
  return out;
}

/** `capture_<event_id>.json`: event ids are unique per decision, so captures never collide. */
export function captureFileName(capture: JsonObject): string {
  return `capture_${capture['event_id'] as string}.json`;
}

export function captureFileText(capture: JsonObject): string {
  return JSON.stringify(capture, null, 2) + '\n';
}

/** Write a capture durably next to the traces (mode 0600); returns its path. */
export function writeCapture(dir: string, capture: JsonObject): string {
  const path = join(dir, captureFileName(capture));
  writeFileAtomic(path, captureFileText(capture), 0o600);
  return path;
}

/** `{ "<host>": { "addresses": [...] } | { "error": "..." } }`, hosts in byte order. */
function resolvedHostsJson(resolved: ResolvedHosts): JsonObject {
  const out: JsonObject = {};
  for (const host of [...resolved.keys()].sort(compareUtf8)) {
    const r = resolved.get(host)!;
    out[host] = 'addresses' in r ? { addresses: [...r.addresses] } : { error: r.error };
  }
  return out;
}

function parseResolvedHosts(value: unknown): ResolvedHosts {
  if (!isJsonObject(value)) throw invalid('resolved_hosts must be an object');
  const out = new Map<string, HostResolution>();
  for (const [host, r] of Object.entries(value)) {
    if (isJsonObject(r) && Array.isArray(r['addresses']) && r['addresses'].every((a) => typeof a === 'string') && Object.keys(r).length === 1) {
      out.set(host, { addresses: r['addresses'] as string[] });
    } else if (isJsonObject(r) && typeof r['error'] === 'string' && Object.keys(r).length === 1) {
      out.set(host, { error: r['error'] });
    } else throw invalid(`resolved_hosts[${JSON.stringify(host)}] must be {addresses: [strings]} or {error: string}`);
  }
  return out;
}

const ID = /^[0-9a-f]{24}$/;

/** Read and check a capture record; anything malformed is refused, never half-used. */
export function parseDecisionCapture(input: Buffer | string): DecisionCapture {
  let value;
  try {
    value = parseStrictJson(typeof input === 'string' ? input : input.toString('utf8'));
  } catch (err) {
    throw invalid(`not JSON: ${(err as Error).message}`);
  }
  if (!isJsonObject(value) || value['schema_id'] !== DECISION_CAPTURE_SCHEMA_ID) throw invalid(`schema_id must be ${DECISION_CAPTURE_SCHEMA_ID}`);
  if (value['schema_version'] !== DECISION_CAPTURE_SCHEMA_VERSION) throw invalid(`unsupported schema_version ${JSON.stringify(value['schema_version'])}`);
  const str = (key: string): string => {
    const v = value[key];
    if (typeof v !== 'string') throw invalid(`${key} must be a string`);
    return v;
  };
  for (const key of ['trace_id', 'event_id']) if (!ID.test(str(key))) throw invalid(`${key} must be 24 lowercase hex characters`);
  const reasons = value['reason_codes'];
  if (!Array.isArray(reasons) || !reasons.every((r) => typeof r === 'string')) throw invalid('reason_codes must be an array of strings');
  const intent = value['intent'];
  const envelope = value['context_envelope'];
  if (intent !== undefined && !isJsonObject(intent)) throw invalid('intent must be an object');
  if (envelope !== undefined && !isJsonObject(envelope)) throw invalid('context_envelope must be an object');
  if (intent === undefined && typeof value['intent_error'] !== 'string') throw invalid('a capture needs intent or intent_error');
  let evaluationTime: GoTime;
  try {
    evaluationTime = parseJsonTime(str('evaluation_time'), 'evaluation_time');
  } catch (err) {
    throw invalid((err as Error).message);
  }
  return {
    trace_id: str('trace_id'),
    event_id: str('event_id'),
    evaluation_time: evaluationTime,
    policy_digest: str('policy_digest'),
    intent_digest: str('intent_digest'),
    tool_name: str('tool_name'),
    verdict: str('verdict'),
    reason_codes: reasons as string[],
    matched_rule: str('matched_rule'),
    ...(intent !== undefined ? { intent } : {}),
    ...(typeof value['intent_error'] === 'string' ? { intent_error: value['intent_error'] } : {}),
    ...(envelope !== undefined ? { context_envelope: envelope } : {}),
    ...(value['resolved_hosts'] !== undefined ? { resolved_hosts: parseResolvedHosts(value['resolved_hosts']) } : {}),
    raw: value,
  };
}

function invalid(message: string): WardError {
  return new WardError(ERROR_CODES.CAPTURE_INVALID, `decision capture: ${message}`);
}
