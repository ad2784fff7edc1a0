import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { caselessKey, foldSpelling, foldSpellingUnicode } from '../../src/canon/fold.js';

// foldSpelling answers printable-ASCII names without the Unicode property classes (building them
// costs every one-shot command ~0.7 ms); its answer must be the general path's.
describe('foldSpelling', () => {
  it('the printable-ASCII path folds exactly as the Unicode path', () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });
    fc.assert(
      fc.property(ascii, (name) => {
        expect(foldSpelling(name)).toBe(foldSpellingUnicode(name));
      }),
      { numRuns: 2000 },
    );
    // Every printable ASCII character, one by one.
    for (let c = 0x20; c <= 0x7e; c++) expect(foldSpelling(String.fromCharCode(c))).toBe(foldSpellingUnicode(String.fromCharCode(c)));
  });

  it('folds the documented spellings alike, ASCII or not', () => {
    for (const name of ['Tools/Call', 'tools/call ', 'ｔｏｏｌｓ／ｃａｌｌ', 'tools.call', 'tools\u200bcall']) expect(foldSpelling(name)).toBe('toolscall');
    for (const name of ['filePath', 'file_path', 'FILE-PATH']) expect(foldSpelling(name)).toBe('filepath');
    expect(caselessKey('ẞ')).toBe(caselessKey('SS'));
  });
});
