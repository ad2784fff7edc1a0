import { describe, expect, it } from 'vitest';
import { nowUTC } from '../../src/canon/gotime.js';
import { evaluate } from '../../src/gate/evaluate.js';
import { generateSigningKey } from '../../src/keys/ed25519.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decideGate, type GateRuntime } from '../../src/decision/gate-run.js';
import { WARD_VERSION } from '../../src/version.js';

const rt: GateRuntime = {
  policy: parsePolicyYaml('default_verdict: allow\nrules:\n  - name: no-secrets\n    priority: 1\n    effect: block\n    match:\n      target_values: [/etc/shadow]\n'),
  signingKey: generateSigningKey(),
  traceFormat: 'ward',
  traceDir: '/nonexistent/traces',
  rateLimitStatePath: '/nonexistent/rate.json',
  profile: 'standard',
};

const intent = (path: string) => ({
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-11-21T10:00:00Z',
  producer_version: 'test',
  tool_name: 'fs.read',
  args: { path },
  targets: [{ kind: 'path', value: path, operation: 'read' }],
  context: { identity: 'alice', workspace: '/repo', risk_class: 'low' },
});

/** The fields of a trace that do not depend on when or under which ids it was made. */
const decided = (t: Record<string, unknown>) => ({ ...t, trace_id: 0, event_id: 0, observed_at: 0, latency_ms: 0, signature: 0 });

describe('decideGate with the caller\'s evaluation', () => {
  it('gives the same decision as evaluating again, for an allow and a block', () => {
    for (const path of ['/data/a.txt', '/etc/shadow']) {
      const now = nowUTC();
      const outcome = evaluate(rt.policy, intent(path), { now, contextNow: now, producerVersion: WARD_VERSION });
      const reused = decideGate(rt, { intent: intent(path), evaluationTime: now, evaluated: { outcome, latencyMs: 0.5 } });
      const fresh = decideGate(rt, { intent: intent(path), evaluationTime: now });
      expect(decided(reused.trace)).toEqual(decided(fresh.trace));
      expect(reused.trace['latency_ms']).toBe(0.5);
    }
  });

  it('does not evaluate again: the outcome it is given is the one it signs', () => {
    const now = nowUTC();
    const blocked = evaluate(rt.policy, intent('/etc/shadow'), { now, contextNow: now });
    const t = decideGate(rt, { intent: intent('/etc/shadow'), evaluationTime: now, evaluated: { outcome: { ...blocked, verdict: 'dry_run' }, latencyMs: 1 } }).trace;
    expect(t['verdict']).toBe('dry_run');
  });
});
