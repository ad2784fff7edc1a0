import type { JsonObject } from '../canon/index.js';
import { readInt, readObject, readObjectArray, readString, type Decoder } from '../context/index.js';
import { readTimeText } from './decode.js';
import type { IntentRecord, Receipt, Refs, ResultRecord, RunRecord, TimelineEvent } from './types.js';

/*
 * Decoders from parsed JSON objects to runpack records. The returned objects are already the stored
 * JSON: optional keys are present only when Go's omitempty would emit them.
 */

export function decodeRun(obj: JsonObject, d: Decoder): RunRecord {
  const env = readObject(d, obj, 'env', 'run') ?? {};
  return {
    schema_id: readString(d, obj, 'schema_id', 'run'),
    schema_version: readString(d, obj, 'schema_version', 'run'),
    created_at: readTimeText(d, obj, 'created_at', 'run'),
    producer_version: readString(d, obj, 'producer_version', 'run'),
    run_id: readString(d, obj, 'run_id', 'run'),
    env: { os: readString(d, env, 'os', 'run.env'), arch: readString(d, env, 'arch', 'run.env'), runtime: readString(d, env, 'runtime', 'run.env') },
    // A nil slice without omitempty marshals as null in Go: absent stays null, [] stays [].
    timeline: obj['timeline'] == null ? null : readObjectArray(d, obj, 'timeline', 'TimelineEvt', 'run').map((e) => decodeTimelineEvent(e, d)),
  };
}

function decodeTimelineEvent(obj: JsonObject, d: Decoder): TimelineEvent {
  const event: TimelineEvent = { event: readString(d, obj, 'event', 'run.timeline'), ts: readTimeText(d, obj, 'ts', 'run.timeline') };
  const ref = readString(d, obj, 'ref', 'run.timeline');
  if (ref) event.ref = ref;
  const relationship = readObject(d, obj, 'relationship', 'run.timeline');
  if (relationship) event.relationship = relationship;
  return event;
}

export function decodeIntent(obj: JsonObject, d: Decoder): IntentRecord {
  const intent: IntentRecord = {
    ...decodeHeader(obj, d, 'intents'),
    intent_id: readString(d, obj, 'intent_id', 'intents'),
    tool_name: readString(d, obj, 'tool_name', 'intents'),
    args_digest: readString(d, obj, 'args_digest', 'intents'),
  };
  const args = readObject(d, obj, 'args', 'intents');
  if (args && Object.keys(args).length > 0) intent.args = args;
  return intent;
}

export function decodeResult(obj: JsonObject, d: Decoder): ResultRecord {
  const result: ResultRecord = {
    ...decodeHeader(obj, d, 'results'),
    intent_id: readString(d, obj, 'intent_id', 'results'),
    status: readString(d, obj, 'status', 'results'),
    result_digest: readString(d, obj, 'result_digest', 'results'),
  };
  const payload = readObject(d, obj, 'result', 'results');
  if (payload && Object.keys(payload).length > 0) result.result = payload;
  return result;
}

export function decodeRefs(obj: JsonObject, d: Decoder): Refs {
  const refs: Refs = {
    ...decodeHeader(obj, d, 'refs'),
    receipts: readObjectArray(d, obj, 'receipts', 'Receipt', 'refs').map((r) => decodeReceipt(r, d)),
  };
  const digest = readString(d, obj, 'context_set_digest', 'refs');
  if (digest) refs.context_set_digest = digest;
  const mode = readString(d, obj, 'context_evidence_mode', 'refs');
  if (mode) refs.context_evidence_mode = mode;
  const count = readInt(d, obj, 'context_ref_count', 'refs');
  if (count !== 0) refs.context_ref_count = count;
  return refs;
}

function decodeReceipt(obj: JsonObject, d: Decoder): Receipt {
  const path = 'refs.receipts';
  const receipt: Receipt = {
    ref_id: readString(d, obj, 'ref_id', path),
    source_type: readString(d, obj, 'source_type', path),
    source_locator: readString(d, obj, 'source_locator', path),
    query_digest: readString(d, obj, 'query_digest', path),
    content_digest: readString(d, obj, 'content_digest', path),
    retrieved_at: readTimeText(d, obj, 'retrieved_at', path),
    redaction_mode: readString(d, obj, 'redaction_mode', path),
  };
  const immutability = readString(d, obj, 'immutability', path);
  if (immutability) receipt.immutability = immutability;
  const freshness = readInt(d, obj, 'freshness_sla_seconds', path);
  if (freshness !== 0) receipt.freshness_sla_seconds = freshness;
  const label = readString(d, obj, 'sensitivity_label', path);
  if (label) receipt.sensitivity_label = label;
  const params = readObject(d, obj, 'retrieval_params', path);
  if (params && Object.keys(params).length > 0) receipt.retrieval_params = params;
  return receipt;
}

function decodeHeader(obj: JsonObject, d: Decoder, path: string) {
  return {
    schema_id: readString(d, obj, 'schema_id', path),
    schema_version: readString(d, obj, 'schema_version', path),
    created_at: readTimeText(d, obj, 'created_at', path),
    producer_version: readString(d, obj, 'producer_version', path),
    run_id: readString(d, obj, 'run_id', path),
  };
}
