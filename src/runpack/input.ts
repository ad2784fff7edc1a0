import { isJsonObject, type JsonObject } from '../canon/index.js';
import { decodeError, decodeJsonText, expectRootObject, readObject, readObjectArray, readString } from '../context/index.js';
import { RUN_RECORD_DECODER as D } from './decode.js';
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
  const root = expectRootObject(D, decodeJsonText(D, text));
  const normalization = readObject(D, root, 'normalization') ?? {};
  return {
    run: decodeRun(readObject(D, root, 'run') ?? {}, D),
    intents: readObjectArray(D, root, 'intents', 'IntentRecord').map((o) => decodeIntent(o, D)),
    results: readObjectArray(D, root, 'results', 'ResultRecord').map((o) => decodeResult(o, D)),
    refs: decodeRefs(readObject(D, root, 'refs') ?? {}, D),
    captureMode: readString(D, root, 'capture_mode'),
    intentArgs: payloadMap(readObject(D, normalization, 'intent_args', 'normalization'), 'intent_args'),
    resultPayloads: payloadMap(readObject(D, normalization, 'result_payloads', 'normalization'), 'result_payloads'),
  };
}

function payloadMap(value: JsonObject | undefined, field: string): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>();
  for (const [key, child] of Object.entries(value ?? {})) {
    if (!isJsonObject(child)) throw decodeError(D, `normalization.${field}.${key}: expected a JSON object`);
    out.set(key, child);
  }
  return out;
}
