import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWardError } from '../../src/errors.js';
import { caselessKey } from '../../src/canon/fold.js';
import { nonCanonicalNameReason, openZip, writeDeterministicZip } from '../../src/zip/index.js';
import { craftZip } from './craft.js';

/** Characters that make names interesting: separators, dots, case, combining marks, full-width, controls. */
const CHARS = ['a', 'B', 'c', 'Z', '0', '_', '-', '.', '/', '\\', ' ', '\u0000', '\u0007', '\u0301', 'é', 'E\u0301', 'ｒ', 'ß', 'ſ', 'K', ':', '~'];
const name = fc.array(fc.constantFrom(...CHARS), { minLength: 1, maxLength: 12 }).map((parts) => parts.join(''));

function outcome(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (isWardError(err)) return err.code;
    throw err;
  }
}

describe('canonical entry names (property tests)', () => {
  it('the writer writes exactly the canonical names, and the reader reads them back unchanged', () => {
    fc.assert(
      fc.property(name, (n) => {
        const canonical = nonCanonicalNameReason(n) === undefined;
        const written = outcome(() => writeDeterministicZip([{ path: n, data: Buffer.from('x') }]));
        expect(written === 'ok').toBe(canonical);
        const read = outcome(() => openZip(craftZip([{ name: n, data: Buffer.from('x') }])));
        expect(read === 'ok').toBe(canonical);
        if (canonical) expect(openZip(writeDeterministicZip([{ path: n, data: Buffer.from('x') }])).entries[0]!.name).toBe(n);
      }),
      { numRuns: 2000 },
    );
  });

  it('two canonical names are both accepted exactly when they do not collide after case folding and NFKC', () => {
    fc.assert(
      fc.property(name, name, (a, b) => {
        fc.pre(a !== b && nonCanonicalNameReason(a) === undefined && nonCanonicalNameReason(b) === undefined);
        const distinct = caselessKey(a) !== caselessKey(b);
        const files = [
          { path: a, data: Buffer.from('1') },
          { path: b, data: Buffer.from('2') },
        ];
        expect(outcome(() => writeDeterministicZip(files))).toBe(distinct ? 'ok' : 'ERR_ZIP_DUPLICATE_ENTRY');
        expect(outcome(() => openZip(craftZip(files.map((f) => ({ name: f.path, data: f.data })))))).toBe(distinct ? 'ok' : 'ERR_ZIP_DUPLICATE_ENTRY');
      }),
      { numRuns: 2000 },
    );
  });

  it('any case spelling of a name beside it is refused', () => {
    fc.assert(
      fc.property(name, (n) => {
        fc.pre(nonCanonicalNameReason(n) === undefined);
        for (const alias of [n.toUpperCase(), n.toLowerCase()]) {
          if (alias === n || nonCanonicalNameReason(alias) !== undefined) continue;
          expect(outcome(() => openZip(craftZip([{ name: n, data: Buffer.from('1') }, { name: alias, data: Buffer.from('2') }])))).toBe('ERR_ZIP_DUPLICATE_ENTRY');
        }
      }),
      { numRuns: 1000 },
    );
  });
});
