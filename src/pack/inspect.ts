import { compareUtf8 } from '../canon/index.js';
import { readRunpack, summaryOf, type Runpack } from '../runpack/index.js';
import { authorizationPayload, decodeAuthorizationBundle } from './authorization.js';
import { bestEffort, openPackView } from './read-side.js';
import { runPayloadOf } from './run-pack.js';
import { AUTHORIZATION_BUNDLE_FILE, type InspectResult, type RunLineage } from './types.js';

/** `pack inspect` (§2): what a pack declares, without verifying it. */
export function inspectPack(bytes: Uint8Array): InspectResult {
  const view = openPackView(bytes);
  const result: InspectResult = { pack_id: view.packId, pack_type: view.packType, source_ref: view.sourceRef };
  if (view.legacyType) {
    const runpack = readRunpack(bytes);
    result.run_payload = runPayloadOf(summaryOf(runpack), false);
    result.run_lineage = runLineage(runpack);
    result.legacy_type = view.legacyType;
    return result;
  }
  if (view.rawManifest) result.manifest = view.rawManifest;
  if (view.runPayload) result.run_payload = view.runPayload;
  const runpack = view.runpackBytes ? bestEffort(() => readRunpack(view.runpackBytes!)) : undefined;
  if (runpack) result.run_lineage = runLineage(runpack);
  if (view.packType === 'authorization') {
    const entry = view.zip.get(AUTHORIZATION_BUNDLE_FILE);
    const bundle = entry ? bestEffort(() => decodeAuthorizationBundle(view.zip.read(entry))) : undefined;
    if (bundle) {
      result.authorization_bundle = bundle as unknown as NonNullable<InspectResult['authorization_bundle']>;
      result.authorization_payload = authorizationPayload(bundle);
    }
  }
  return result;
}

/** Timeline size, receipts, and the union of intents and results by intent_id (§2). */
export function runLineage(runpack: Runpack): RunLineage {
  const byId = new Map<string, { intent_id: string; tool_name?: string; status?: string }>();
  for (const intent of runpack.intents) {
    const item = byId.get(intent.intent_id) ?? { intent_id: intent.intent_id };
    if (intent.tool_name) item.tool_name = intent.tool_name;
    byId.set(intent.intent_id, item);
  }
  for (const result of runpack.results) {
    const item = byId.get(result.intent_id) ?? { intent_id: result.intent_id };
    if (result.status) item.status = result.status;
    byId.set(result.intent_id, item);
  }
  return {
    timeline_events: runpack.run.timeline?.length ?? 0,
    receipt_count: runpack.refs.receipts.length,
    intent_results: [...byId.values()].sort((a, b) => compareUtf8(a.intent_id, b.intent_id)),
  };
}
