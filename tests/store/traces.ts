/** Synthetic gate traces with a spread of runs, sessions, tools, verdicts and reasons. */
import type { JsonObject } from '../../src/canon/index.js';
export function trace(n: number, extra: JsonObject = {}): JsonObject {
  return {
    schema_id: 'gait.gate.trace',
    schema_version: '1.0.0',
    created_at: '2026-02-18T00:00:00Z',
    observed_at: `2026-02-18T00:00:${String(n % 60).padStart(2, '0')}.${String(n).padStart(9, '0')}Z`,
    trace_id: `trace${String(n).padStart(19, '0')}`,
    event_id: `event${String(n).padStart(19, '0')}`,
    tool_name: n % 2 === 0 ? 'fs.write' : 'http.get',
    verdict: n % 3 === 0 ? 'block' : 'allow',
    reason_codes: n % 3 === 0 ? ['matched_rule_block', 'destructive_apply_requires_approval'] : ['matched_rule_allow'],
    run_id: `run_${n % 4}`,
    relationship: { parent_ref: { kind: 'session', id: `sess_${n % 5}` } },
    ...extra,
  };
}
