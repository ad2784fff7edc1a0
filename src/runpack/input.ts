import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES } from '../errors.js';
import { FieldReader } from './decode.js';
import { decodeIntent, decodeRefs, decodeResult, decodeRun } from './records.js';
import type { IntentRecord, Refs, ResultRecord, RunRecord } from './types.js';

/** `run_record.json` (§4.2), decoded leniently: unknown keys ignored, wrong types rejected. */
export interface RunRecordInput {
  run: RunRecord;
  intents: IntentRecord[];
  results: ResultRecord[];
  refs: Refs;
  /** `capture_mode` from the input ("" when absent). */
  captureMode: string;
  /** `normalization.intent_args`: raw arguments by intent id, digested instead of stored. */
  intentArgs: Map<string, JsonObject>;
  /** `normalization.result_payloads`: raw results by intent id. */
  resultPayloads: Map<string, JsonObject>;
}

export function parseRunRecordInput(text: string): RunRecordInput {
  const reader = new FieldReader(ERROR_CODES.RUN_RECORD_INVALID, 'run_record');
  let root: JsonValue;
  try {
    root = parseJsonText(text);
  } catch (err) {
    throw reader.fail(`parse run record: ${(err as Error).message}`);
  }
  const obj = reader.object(root);
  const normalization = reader.optionalObject(obj, 'normalization') ?? {};
  const normReader = reader.at('run_record.normalization');
  return {
    run: decodeRun(obj['run'] ?? {}, reader.at('run')),
    intents: (reader.array(obj, 'intents') ?? []).map((v, i) => decodeIntent(v, reader.at(`intents[${i}]`))),
    results: (reader.array(obj, 'results') ?? []).map((v, i) => decodeResult(v, reader.at(`results[${i}]`))),
    refs: decodeRefs(obj['refs'] ?? {}, reader.at('refs')),
    captureMode: reader.string(obj, 'capture_mode'),
    intentArgs: objectMap(normReader.optionalObject(normalization, 'intent_args'), normReader.at('normalization.intent_args')),
    resultPayloads: objectMap(normReader.optionalObject(normalization, 'result_payloads'), normReader.at('normalization.result_payloads')),
  };
}

function objectMap(value: JsonObject | undefined, reader: FieldReader): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>();
  for (const [key, child] of Object.entries(value ?? {})) {
    if (!isJsonObject(child)) throw reader.fail(`${key}: expected a JSON object`);
    out.set(key, child);
  }
  return out;
}
