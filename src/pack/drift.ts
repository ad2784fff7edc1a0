import { digestJcs, type JsonValue } from '../canon/index.js';
import { EPOCH_1980_TEXT, ZERO_TIME_TEXT, type Refs } from '../runpack/index.js';
import type { DriftClassification } from './types.js';

export interface DriftResult {
  classification: DriftClassification;
  changed: boolean;
  runtimeOnly: boolean;
}

/**
 * `ClassifyRefsDrift` (§3) with Ward decision 7: run identity (`run_id`, `created_at`,
 * `producer_version`) is blanked first, so two runs over the same context are `none` and runs whose
 * receipts differ only in retrieval time are `runtime_only`; anything else is `semantic`.
 */
export function classifyRefsDrift(left: Refs, right: Refs): DriftResult {
  const a = withoutRunIdentity(left);
  const b = withoutRunIdentity(right);
  const sameShape =
    (a.context_evidence_mode ?? '') === (b.context_evidence_mode ?? '') && (a.context_ref_count ?? 0) === (b.context_ref_count ?? 0);
  if (sameShape && (a.context_set_digest ?? '') === (b.context_set_digest ?? '') && digestOf(a) === digestOf(b)) {
    return { classification: 'none', changed: false, runtimeOnly: false };
  }
  if (sameShape && digestOf(runtimeComparable(a)) === digestOf(runtimeComparable(b))) {
    return { classification: 'runtime_only', changed: true, runtimeOnly: true };
  }
  return { classification: 'semantic', changed: true, runtimeOnly: false };
}

function withoutRunIdentity(refs: Refs): Refs {
  return { ...refs, run_id: '', created_at: ZERO_TIME_TEXT, producer_version: '' };
}

/**
 * The context with everything retrieval-time dependent removed: the set digest and each
 * retrieved_at; and, for the records the MCP proxy witnessed (`source_type` `mcp_tool_result`),
 * the call they name (`ref_id` `witness:<trace id>`, `retrieval_params.trace_id`), which differs in
 * every session even over the same document. Receipts are then compared in a stable order.
 */
function runtimeComparable(refs: Refs): Refs {
  const { context_set_digest: _digest, ...rest } = refs;
  const receipts = refs.receipts.map((r) => {
    const out = { ...r, retrieved_at: EPOCH_1980_TEXT } as Record<string, unknown>;
    if (out['source_type'] === WITNESSED_SOURCE_TYPE) {
      out['ref_id'] = 'witness';
      const params = out['retrieval_params'];
      if (params && typeof params === 'object' && !Array.isArray(params)) {
        const { trace_id: _trace, ...kept } = params as Record<string, unknown>;
        out['retrieval_params'] = kept;
      }
    }
    return out as unknown as (typeof refs.receipts)[number];
  });
  const keyed = receipts.map((r) => [digestJcs(r as unknown as JsonValue), r] as const).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  return { ...rest, receipts: keyed.map(([, r]) => r) };
}

/** The source type of the records the MCP proxy and the SDK witness build (src/witness/context.ts). */
const WITNESSED_SOURCE_TYPE = 'mcp_tool_result';

function digestOf(refs: Refs): string {
  return digestJcs(refs as unknown as JsonValue);
}
