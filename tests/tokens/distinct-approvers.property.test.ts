import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nowUTC, type JsonObject } from '../../src/canon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { evaluateApprovals, mintApprovalToken, type ParsedToken } from '../../src/tokens/index.js';
import { HOUR, INTENT_DIGEST, POLICY_DIGEST } from './helpers.js';

const KEYS = [generateSigningKey(), generateSigningKey(), generateSigningKey()];
const NAMES = ['alice', 'ALICE', 'Alice', 'bob', 'BOB', 'carol', 'dave'];

/** Brute force: the largest set of (approver, key) pairs using no approver and no key twice. */
function bruteForce(edges: readonly [string, number][]): number {
  let best = 0;
  const walk = (i: number, approvers: Set<string>, keys: Set<number>, size: number): void => {
    best = Math.max(best, size);
    if (i === edges.length) return;
    walk(i + 1, approvers, keys, size);
    const [a, k] = edges[i]!;
    if (!approvers.has(a) && !keys.has(k)) {
      approvers.add(a);
      keys.add(k);
      walk(i + 1, approvers, keys, size + 1);
      approvers.delete(a);
      keys.delete(k);
    }
  };
  walk(0, new Set(), new Set(), 0);
  return best;
}

describe('distinct approvers (property)', () => {
  it('counts case-folded approvers paired with distinct keys, as a brute-force matching does', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 2 })), { minLength: 1, maxLength: 7 }), (pairs) => {
        const now = nowUTC();
        const tokens: ParsedToken[] = pairs.map(([approver, k], i) => ({
          source: `t${i}.json`,
          value: mintApprovalToken({
            intentDigest: INTENT_DIGEST,
            policyDigest: POLICY_DIGEST,
            ttlNs: HOUR,
            scope: ['tool:tool.write'],
            approver,
            reasonCode: `r${i}`,
            now,
            producerVersion: 'x',
            key: KEYS[k]!,
          }) as JsonObject,
        }));
        const edges = pairs.map(([approver, k]) => [approver.toLowerCase(), k] as [string, number]);
        const expected = bruteForce(edges);
        for (const required of [2, 3]) {
          const r = evaluateApprovals({
            tokens,
            verifyKeys: KEYS,
            intentDigest: INTENT_DIGEST,
            policyDigest: POLICY_DIGEST,
            requiredScope: ['tool:tool.write'],
            targetCount: 1,
            opCount: 1,
            now,
            requiredApprovals: required,
            requireDistinct: true,
          });
          expect(r.distinctApprovers).toBe(expected);
          expect(r.granted).toBe(pairs.length >= required && expected >= required);
          expect(r.approvers.length).toBe(new Set(edges.map(([a]) => a)).size);
        }
      }),
      { numRuns: 150 },
    );
  });
});
