import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/keys/ed25519.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decideGate } from '../../src/decision/gate-run.js';
import { describeArtifact, traceIndexFields } from '../../src/store/describe.js';
import { traceFileText } from '../../src/trace/write.js';
import type { JsonObject } from '../../src/canon/json.js';
import { pathIntent } from '../decision/helpers.js';

const key = generateSigningKey();
const rt = {
  policy: parsePolicyYaml('default_verdict: block\nrules:\n  - name: r\n    effect: allow\n    match:\n      tool_names: [fs.read]\n'),
  signingKey: key,
  traceFormat: 'ward' as const,
  traceDir: '/nonexistent',
  rateLimitStatePath: '/nonexistent/rl',
  profile: 'standard' as const,
};
const intent = (tool: string) => pathIntent(tool, '/data/a.txt', 'read', 'alice');

/** The daemon hands the store the fields it serialized a trace from; the index must be what parsing the bytes gives. */
describe('store entries from trace fields', () => {
  it('describe the same entry as the parsed bytes (allow, block with reasons, a session parent, a run)', () => {
    const traces: JsonObject[] = [decideGate(rt, { intent: intent('fs.read') }).trace, decideGate(rt, { intent: intent('fs.delete') }).trace];
    traces.push({ ...traces[1]!, run_id: 'run_1', relationship: { parent_ref: { kind: 'session', id: 'sess-1' }, other: [1, 2] } });
    traces.push({ ...traces[0]!, relationship: { parent_ref: { kind: 'run', id: 'x' } } });
    for (const trace of traces) {
      const bytes = Buffer.from(traceFileText(trace));
      const at = '2026-11-25T20:00:00Z';
      const parsed = describeArtifact({ kind: 'trace', bytes }, at);
      expect(describeArtifact({ kind: 'trace', bytes, fields: traceIndexFields(trace) }, at)).toEqual(parsed);
      expect(parsed.id).toBe(trace['event_id']);
    }
  });

  it('still refuses a record whose ids the store cannot use', () => {
    const trace = { ...decideGate(rt, { intent: intent('fs.read') }).trace, event_id: '../x' };
    expect(() => describeArtifact({ kind: 'trace', bytes: Buffer.from(traceFileText(trace)), fields: traceIndexFields(trace) }, '2026-11-25T20:00:00Z')).toThrow();
  });
});
