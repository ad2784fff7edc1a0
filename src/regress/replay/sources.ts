import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { compareTime, compareUtf8, isJsonObject, parseJsonText, parseRFC3339, toUTC, type JsonObject } from '../../canon/index.js';
import { parseDecisionCapture } from '../../trace/index.js';
import { readRunpack } from '../../runpack/index.js';
import { openLevelStore, type EvidenceStore, type ListFilter } from '../../store/index.js';
import { runpackOf } from '../source.js';
import { resultVerdict } from '../verdict.js';
import type { NotReplayable, ReplayInput, ReplayRecord } from './types.js';

const INTENT_REQUEST_SCHEMA = 'gait.gate.intent_request';

/** A decision capture (`ward.decision_capture`) as a replay record, or why it is not one. */
export function recordFromCapture(bytes: Buffer | string, source: string): ReplayRecord | NotReplayable {
  let capture;
  try {
    capture = parseDecisionCapture(bytes);
  } catch (err) {
    return { id: source, source, tool_name: '', reason_code: 'not_replayable_invalid', detail: (err as Error).message };
  }
  if (!capture.intent) {
    return { id: capture.event_id, source, tool_name: capture.tool_name, reason_code: 'not_replayable_invalid', detail: `the intent was not evaluable when recorded: ${capture.intent_error ?? ''}` };
  }
  return {
    id: capture.event_id,
    source,
    tool_name: capture.tool_name,
    evaluation_time: capture.evaluation_time,
    intent: capture.intent,
    ...(capture.context_envelope ? { context_envelope: capture.context_envelope } : {}),
    ...(capture.resolved_hosts ? { resolved_hosts: capture.resolved_hosts } : {}),
    recorded: { verdict: capture.verdict, reason_codes: capture.reason_codes, matched_rule: capture.matched_rule },
  };
}

/**
 * A traces directory (`.ward/traces`, or any directory of traces and captures): every
 * `capture_<event_id>.json` is replayed; every trace without its capture is reported as not
 * replayable (traces carry digests only), never silently dropped.
 */
export function recordsFromTraceDir(dir: string): ReplayInput {
  const out = collector();
  const names = readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort(compareUtf8);
  const captured = new Set<string>();
  const traces: { name: string; eventId: string; toolName: string }[] = [];
  for (const name of names) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    const bytes = readFileSync(path);
    if (name.startsWith('capture_')) {
      const r = recordFromCapture(bytes, path);
      out.add(r);
      if ('intent' in r || r.id !== path) captured.add(r.id);
      continue;
    }
    let trace: unknown;
    try {
      trace = parseJsonText(bytes.toString('utf8'));
    } catch (err) {
      out.add({ id: path, source: path, tool_name: '', reason_code: 'not_replayable_invalid', detail: `not JSON: ${(err as Error).message}` });
      continue;
    }
    // Other JSON beside the traces (approval audits, tokens) is not a decision.
    if (!isJsonObject(trace) || trace['schema_id'] !== 'gait.gate.trace' || typeof trace['event_id'] !== 'string') continue;
    traces.push({ name: path, eventId: trace['event_id'], toolName: typeof trace['tool_name'] === 'string' ? trace['tool_name'] : '' });
  }
  for (const t of traces) {
    if (!captured.has(t.eventId)) {
      out.add({ id: t.eventId, source: t.name, tool_name: t.toolName, reason_code: 'not_replayable_no_capture', detail: 'no captured intent (record with gate eval --capture-intents)' });
    }
  }
  return out.done();
}

export interface StoreQuery {
  since?: string | undefined;
  until?: string | undefined;
  tool_name?: string | undefined;
  verdict?: string | undefined;
  run_id?: string | undefined;
  limit?: number | undefined;
}

/**
 * Captures from the evidence store (kind `capture`, after ingesting the spool and traces) matching
 * the query; traces in the same range without a capture are reported as not replayable.
 */
export async function recordsFromStore(stateDir: string, query: StoreQuery, openStore?: () => Promise<EvidenceStore>): Promise<ReplayInput> {
  const out = collector();
  const store = openStore ? await openStore() : await openLevelStore(stateDir);
  try {
    await store.ingest();
    const filter: ListFilter = { since: query.since, until: query.until, tool_name: query.tool_name, verdict: query.verdict, run_id: query.run_id, limit: query.limit, order: 'asc' };
    const captures = await store.list({ ...filter, kind: 'capture' });
    const captured = new Set<string>();
    for (const entry of captures) {
      const r = recordFromCapture(await store.read(entry), `store:capture/${entry.id}`);
      out.add(r);
      captured.add(entry.id);
    }
    for (const entry of await store.list({ ...filter, kind: 'trace' })) {
      if (captured.has(entry.id)) continue;
      out.add({
        id: entry.id,
        source: `store:trace/${entry.id}`,
        tool_name: entry.tool_names?.[0] ?? '',
        reason_code: 'not_replayable_no_capture',
        detail: 'no captured intent (record with gate eval --capture-intents)',
      });
    }
  } finally {
    await store.close();
  }
  return out.done();
}

/**
 * The intents of a runpack (or run pack). A runpack keeps tool names and arguments, not gate
 * intents: an intent is replayable when its `args` is itself a gate intent request, or when
 * `intentContext` supplies the gate `context` (identity, workspace, risk_class, …). Reference
 * captures keep only digests and cannot be replayed. The recorded verdict comes from the result.
 */
export function recordsFromRunpack(bytes: Buffer, source: string, intentContext?: JsonObject): ReplayInput {
  const out = collector();
  const runpack = readRunpack(runpackOf(bytes).bytes);
  const results = new Map(runpack.results.map((r) => [r.intent_id, r]));
  for (const intent of runpack.intents) {
    const id = `${runpack.manifest.run_id}/${intent.intent_id}`;
    const where = `${source}#${intent.intent_id}`;
    if (!intent.args) {
      out.add({ id, source: where, tool_name: intent.tool_name, reason_code: 'not_replayable_no_args', detail: 'reference capture keeps only the args digest' });
      continue;
    }
    let request: JsonObject;
    if (intent.args['schema_id'] === INTENT_REQUEST_SCHEMA) request = intent.args;
    else if (intentContext) {
      request = {
        schema_id: INTENT_REQUEST_SCHEMA,
        schema_version: '1.0.0',
        created_at: intent.created_at,
        producer_version: intent.producer_version,
        tool_name: intent.tool_name,
        args: intent.args,
        targets: [],
        context: intentContext,
      };
    } else {
      out.add({ id, source: where, tool_name: intent.tool_name, reason_code: 'not_replayable_no_context', detail: 'runpack intents carry no gate context; pass --intent-context <context.json>' });
      continue;
    }
    const result = results.get(intent.intent_id);
    const verdict = result ? resultVerdict(result) : 'error';
    out.add({
      id,
      source: where,
      tool_name: intent.tool_name,
      evaluation_time: toUTC(parseRFC3339(intent.created_at)),
      intent: request,
      ...(verdict !== 'error' ? { recorded: { verdict, reason_codes: recordedReasons(result?.result), matched_rule: '' } } : {}),
    });
  }
  return out.done();
}

function recordedReasons(payload: JsonObject | undefined): string[] {
  const codes = payload?.['reason_codes'];
  return Array.isArray(codes) ? codes.filter((c): c is string => typeof c === 'string') : [];
}

/** Records in a stable order (decision time, then id), whatever order the source listed them in. */
function collector() {
  const records: ReplayRecord[] = [];
  const skipped: NotReplayable[] = [];
  return {
    add(r: ReplayRecord | NotReplayable) {
      if ('reason_code' in r) skipped.push(r);
      else records.push(r);
    },
    done(): ReplayInput {
      records.sort((a, b) => compareTime(a.evaluation_time, b.evaluation_time) || compareUtf8(a.id, b.id) || compareUtf8(a.source, b.source));
      skipped.sort((a, b) => compareUtf8(a.id, b.id) || compareUtf8(a.source, b.source));
      return { records, not_replayable: skipped };
    },
  };
}
