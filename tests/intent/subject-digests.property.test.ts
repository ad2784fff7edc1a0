import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argsDigest, intentDigest, subjectDigests } from '../../src/intent/digest.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import type { NormalizedIntent } from '../../src/intent/types.js';

/**
 * `subjectDigests` composes the intent digest's canonical text around the arguments' (so they are
 * canonicalized once); it must give exactly `intentDigest` and `argsDigest`, and throw as they do.
 */
function outcome(f: () => unknown): unknown {
  try {
    return f();
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const unit = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0x22, 0x5c, 0x0a, 0xd800));
const text = fc.array(unit, { maxLength: 8 }).map((u) => String.fromCharCode(...u));
const word = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/);
const argValue = fc.jsonValue({ maxDepth: 3 });
const args = fc.dictionary(fc.oneof(word, fc.constantFrom('arg_provenance', 'args', 'a', 'zz', '0')), fc.oneof(argValue, text), { maxKeys: 6 });
const target = fc.record({
  kind: fc.constantFrom('path', 'url', 'host', 'other'),
  value: fc.constantFrom('/tmp/a', 'https://example.com/x', 'example.com', 'thing'),
  operation: fc.constantFrom('read', 'write', 'delete', ''),
});
const provenance = fc.record({ arg_path: fc.constantFrom('$.a', '$.text', '$'), source: fc.constantFrom('user', 'tool_output', 'system') });
const context = fc.record(
  {
    identity: word,
    workspace: fc.constantFrom('/repo', '/tmp'),
    risk_class: fc.constantFrom('low', 'high'),
    session_id: word,
    run_id: word,
    auth_context: fc.dictionary(word, fc.oneof(word, fc.integer()), { maxKeys: 3 }),
    credential_scopes: fc.array(word, { maxLength: 2 }),
  },
  { requiredKeys: ['identity', 'workspace', 'risk_class'] },
);
const step = fc.record({ tool_name: fc.constantFrom('tool.read', 'tool.write'), args, targets: fc.array(target, { maxLength: 2 }) });
const raw = fc.oneof(
  fc.record(
    {
      tool_name: fc.constantFrom('tool.read', 'echo', 'fs.write'),
      args,
      targets: fc.array(target, { maxLength: 3 }),
      arg_provenance: fc.array(provenance, { maxLength: 3 }),
      context,
      skill_provenance: fc.record({ skill_name: word, source: fc.constantFrom('registry', 'local'), publisher: word }),
      delegation: fc.constant({
        requester_identity: 'alice',
        issued_at: '2026-01-01T00:00:00Z',
        expires_at: '2026-01-02T00:00:00Z',
        chain: [{ delegator_identity: 'alice', delegate_identity: 'bot', issued_at: '2026-01-01T00:00:00Z', expires_at: '2026-01-02T00:00:00Z' }],
      }),
    },
    { requiredKeys: ['tool_name', 'context'] },
  ),
  fc.record({ tool_name: fc.constant('script'), script: fc.record({ steps: fc.array(step, { minLength: 1, maxLength: 3 }) }), context }),
);

describe('subjectDigests', () => {
  it('equals intentDigest and argsDigest on any intent', () => {
    let compared = 0;
    fc.assert(
      fc.property(raw, (r) => {
        let intent: NormalizedIntent;
        try {
          intent = normalizeIntent(r);
        } catch {
          return; // not an intent: no digests
        }
        compared++;
        const separately = outcome(() => ({ intentDigest: intentDigest(intent), argsDigest: argsDigest(intent) }));
        expect(outcome(() => subjectDigests(intent))).toEqual(separately);
      }),
      { numRuns: 1500 },
    );
    expect(compared).toBeGreaterThan(250);
  });

  it('throws as intentDigest does when the arguments cannot be canonicalized', () => {
    const intent = normalizeIntent({ tool_name: 'echo', args: { text: 'ok' }, context: { identity: 'a', workspace: '/w', risk_class: 'low' } });
    const bad = { ...intent, args: { text: '\ud800' } };
    expect(() => intentDigest(bad)).toThrow();
    expect(outcome(() => subjectDigests(bad))).toEqual(outcome(() => intentDigest(bad)));
  });
});
