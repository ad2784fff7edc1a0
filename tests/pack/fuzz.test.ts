import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWardError } from '../../src/errors.js';
import { diffPacks, inspectPack, packVerified, verifyPack } from '../../src/pack/index.js';
import { runpackVerified, verifyRunpack } from '../../src/runpack/index.js';
import { demoPack, record, TEST_KEY } from './helpers.js';

const pack = demoPack().bytes;
const runpack = record({ signingKey: TEST_KEY }).bytes;

/** Run `fn`; any throw must be a WardError (a specific, classified failure), never a crash. */
function outcome(fn: () => boolean): 'ok' | 'rejected' {
  try {
    return fn() ? 'ok' : 'rejected';
  } catch (err) {
    if (!isWardError(err)) throw err;
    return 'rejected';
  }
}

const damage = (bytes: Buffer) =>
  fc.oneof(
    fc.record({ at: fc.nat(bytes.length - 1), xor: fc.integer({ min: 1, max: 255 }) }).map(({ at, xor }) => {
      const copy = Buffer.from(bytes);
      copy[at]! ^= xor;
      return copy;
    }),
    fc.nat(bytes.length - 1).map((n) => bytes.subarray(0, n)),
  );

describe('damaged archives', () => {
  it('pack verify, inspect and diff classify every corruption and never crash', () => {
    fc.assert(
      fc.property(damage(pack), (bytes) => {
        const verified = outcome(() => packVerified(verifyPack(bytes, { keys: [TEST_KEY], requireSignature: true }), true));
        outcome(() => inspectPack(bytes) !== undefined);
        outcome(() => diffPacks(bytes, pack) !== undefined);
        if (verified === 'ok') {
          // Only bytes no hash covers may change undetected: zip metadata outside entry contents.
          const inspected = inspectPack(bytes);
          expect(inspected.pack_id).toBe(inspectPack(pack).pack_id);
        }
      }),
      { numRuns: 400, seed: 20261121 },
    );
  });

  it('runpack verify classifies every corruption and never crashes', () => {
    fc.assert(
      fc.property(damage(runpack), (bytes) => {
        outcome(() => runpackVerified(verifyRunpack(bytes, { keys: [TEST_KEY], requireSignature: true }), true));
      }),
      { numRuns: 400, seed: 20261121 },
    );
  });
});
