import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameWords, nameWordsUnicode, ruleForArgName } from '../../src/intent/discover.js';

// Argument names in printable ASCII are split into words without the Unicode property classes
// (building them costs every one-shot command ~0.7 ms); the words must be the general path's.
describe('argument-name words', () => {
  it('the printable-ASCII path splits exactly as the Unicode path', () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });
    const nameLike = fc.stringMatching(/^[A-Za-z0-9_ .\-/]{0,24}$/);
    fc.assert(
      fc.property(fc.oneof(ascii, nameLike), (name) => {
        expect(nameWords(name)).toEqual(nameWordsUnicode(name));
      }),
      { numRuns: 3000 },
    );
  });

  it('names read alike in every spelling, ASCII or not', () => {
    for (const name of ['filePath', 'file_path', 'FILE-PATH', 'ｆｉｌｅＰａｔｈ', 'file path', 'file\u200bPath']) {
      expect(ruleForArgName(name), name).toEqual({ kind: 'path' });
    }
    expect(nameWords('HTTPServerURL')).toEqual(['HTTP', 'Server', 'URL']);
    expect(ruleForArgName('target_branch')).toBeNull();
  });
});
