import type { JsonObject, JsonValue } from '../canon/index.js';
import { type FieldReader } from './decode.js';
import { decodeReceipt } from './refs.js';
import type { IntentRecord, Refs, ResultRecord, RunEnv, RunRecord, TimelineEvent } from './types.js';

/**
 * Decoders from parsed JSON to runpack records, leniently as Go decodes into the record structs:
 * unknown keys dropped, missing keys zero, wrong types errors. The returned objects are already
 * the stored JSON (optional keys present only when Go would emit them).
 */
export function decodeRun(value: JsonValue | undefined, reader: FieldReader): RunRecord {
  const obj = reader.object(value ?? {});
  const env = reader.optionalObject(obj, 'env') ?? {};
  const envReader = reader.at('run.env');
  const timeline = reader.array(obj, 'timeline');
  return {
    schema_id: reader.string(obj, 'schema_id'),
    schema_version: reader.string(obj, 'schema_version'),
    created_at: reader.time(obj, 'created_at'),
    producer_version: reader.string(obj, 'producer_version'),
    run_id: reader.string(obj, 'run_id'),
    env: {
      os: envReader.string(env, 'os'),
      arch: envReader.string(env, 'arch'),
      runtime: envReader.string(env, 'runtime'),
    } satisfies RunEnv,
    timeline: timeline === null ? null : timeline.map((item, i) => decodeTimelineEvent(item, reader.at(`run.timeline[${i}]`))),
  };
}

function decodeTimelineEvent(value: JsonValue, reader: FieldReader): TimelineEvent {
  const obj = reader.object(value);
  const event: TimelineEvent = { event: reader.string(obj, 'event'), ts: reader.time(obj, 'ts') };
  const ref = reader.string(obj, 'ref');
  if (ref) event.ref = ref;
  const relationship = reader.optionalObject(obj, 'relationship');
  if (relationship) event.relationship = relationship;
  return event;
}

export function decodeIntent(value: JsonValue, reader: FieldReader): IntentRecord {
  const obj = reader.object(value);
  const intent: IntentRecord = {
    ...decodeHeader(obj, reader),
    intent_id: reader.string(obj, 'intent_id'),
    tool_name: reader.string(obj, 'tool_name'),
    args_digest: reader.string(obj, 'args_digest'),
  };
  const args = reader.optionalObject(obj, 'args');
  if (args && Object.keys(args).length > 0) intent.args = args;
  return intent;
}

export function decodeResult(value: JsonValue, reader: FieldReader): ResultRecord {
  const obj = reader.object(value);
  const result: ResultRecord = {
    ...decodeHeader(obj, reader),
    intent_id: reader.string(obj, 'intent_id'),
    status: reader.string(obj, 'status'),
    result_digest: reader.string(obj, 'result_digest'),
  };
  const payload = reader.optionalObject(obj, 'result');
  if (payload && Object.keys(payload).length > 0) result.result = payload;
  return result;
}

export function decodeRefs(value: JsonValue | undefined, reader: FieldReader): Refs {
  const obj = reader.object(value ?? {});
  const receipts = reader.array(obj, 'receipts') ?? [];
  const refs: Refs = {
    ...decodeHeader(obj, reader),
    receipts: receipts.map((item, i) => decodeReceipt(item, reader.at(`refs.receipts[${i}]`))),
  };
  const digest = reader.string(obj, 'context_set_digest');
  if (digest) refs.context_set_digest = digest;
  const mode = reader.string(obj, 'context_evidence_mode');
  if (mode) refs.context_evidence_mode = mode;
  const count = reader.int(obj, 'context_ref_count');
  if (count !== 0) refs.context_ref_count = count;
  return refs;
}

function decodeHeader(obj: JsonObject, reader: FieldReader) {
  return {
    schema_id: reader.string(obj, 'schema_id'),
    schema_version: reader.string(obj, 'schema_version'),
    created_at: reader.time(obj, 'created_at'),
    producer_version: reader.string(obj, 'producer_version'),
    run_id: reader.string(obj, 'run_id'),
  };
}
