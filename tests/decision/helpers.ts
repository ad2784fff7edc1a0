import type { JsonObject } from '../../src/canon/index.js';

/**
 * An intent request (gate.md §1) for `tool` touching one path in the `/repo` workspace at low risk,
 * with the fixed `created_at` the decision tests share; `extra` adds members such as `delegation`.
 */
export function pathIntent(tool: string, path: string, operation: string, identity: string, extra: JsonObject = {}): JsonObject & { context: JsonObject } {
  return {
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: '2026-11-21T10:00:00Z',
    producer_version: 'test',
    tool_name: tool,
    args: { path },
    targets: [{ kind: 'path', value: path, operation }],
    context: { identity, workspace: '/repo', risk_class: 'low' },
    ...extra,
  };
}
