import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWardError } from '../../src/errors.js';
import { openZip, openZipFile, writeDeterministicZip } from '../../src/zip/index.js';

// The writer only makes ZIP64 archives at 65,535 entries, so one such archive is damaged in its
// last 200 bytes: the end record, the locator, the ZIP64 end record and the directory's tail.
// Each run opens 65,535 entries twice, so the run count stays small.
const files = Array.from({ length: 65_535 }, (_, i) => ({ path: `e/${String(i).padStart(6, '0')}`, data: Buffer.from([i & 0xff]) }));
const zip = writeDeterministicZip(files);
const LIMITS = { limits: { maxEntries: 1_000_000 } };

function outcome(fn: () => unknown): 'ok' | 'rejected' {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (!isWardError(err)) throw err;
    return 'rejected';
  }
}

describe('damaged ZIP64 tails', () => {
  it('every flipped byte in the end records is rejected with a WardError or leaves the entries intact', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-zip64-fuzz-'));
    fc.assert(
      fc.property(fc.integer({ min: zip.length - 200, max: zip.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const copy = Buffer.from(zip);
        copy[at]! ^= xor;
        const inMemory = outcome(() => {
          const archive = openZip(copy, LIMITS);
          // Whatever still opens must still be the same archive (flips in fields no check covers,
          // such as the version bytes of the ZIP64 record).
          expect(archive.entries).toHaveLength(65_535);
          expect(archive.read(archive.entries[65_534]!)[0]).toBe(65_534 & 0xff);
        });
        const path = join(dir, 'z.zip');
        writeFileSync(path, copy);
        const fromFile = outcome(() => openZipFile(path, LIMITS).close());
        expect(fromFile).toBe(inMemory);
      }),
      { numRuns: 30, seed: 20261125 },
    );
  }, 120_000);
});
