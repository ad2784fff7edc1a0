import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/keys/ed25519.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decideGate, type GateRuntime } from '../../src/decision/gate-run.js';

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

describe('decideGate with claimed readings (the MCP proxy\'s annotations)', () => {
  it('a stricter claimed reading wins; a looser one does not', () => {
    const tightened = decideGate(rt, { intent: intent('/data/a.txt'), claimedReadings: [intent('/etc/shadow')] });
    expect(tightened.trace['verdict']).toBe('block');
    expect(tightened.decidedIntent).toEqual(intent('/etc/shadow'));
    const loosened = decideGate(rt, { intent: intent('/etc/shadow'), claimedReadings: [intent('/data/a.txt')] });
    expect(loosened.trace['verdict']).toBe('block');
    expect(loosened.decidedIntent).toEqual(intent('/etc/shadow'));
  });

  it('on a tie the claimed reading is the one decided, and the trace is that of deciding it alone', () => {
    const both = decideGate(rt, { intent: intent('/data/a.txt'), claimedReadings: [intent('/data/b.txt')] });
    const alone = decideGate(rt, { intent: intent('/data/b.txt') });
    expect(decided(both.trace)).toEqual(decided(alone.trace));
  });

  it('a claimed reading that cannot be evaluated is ignored; the intent itself must evaluate', () => {
    const broken = { ...intent('/data/a.txt'), targets: 'not a list' };
    const d = decideGate(rt, { intent: intent('/data/a.txt'), claimedReadings: [broken] });
    expect(d.trace['verdict']).toBe('allow');
    expect(() => decideGate(rt, { intent: broken, claimedReadings: [intent('/data/a.txt')] })).toThrow();
  });
});
