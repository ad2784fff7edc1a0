import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareUtf8, goLower, goTrim, uniqueSorted, uniqueSortedLower } from '../../src/canon/index.js';

const sign = (n: number): number => (n > 0 ? 1 : n < 0 ? -1 : 0);
const bytesCompare = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * Code points biased toward the ranges where UTF-16 order and UTF-8 (code point) order disagree:
 * U+E000..U+FFFF sort *before* astral code points in UTF-8 but *after* them in UTF-16 units.
 */
const codePoint = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0x80, max: 0xd7ff }),
  fc.integer({ min: 0xe000, max: 0xffff }),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
  fc.constantFrom(0x00, 0x7f, 0x80, 0xd7ff, 0xe000, 0xfb33, 0xfeff, 0xffff, 0x10000, 0x1f602, 0x10ffff),
);
const unicodeString = fc.oneof(
  fc.array(codePoint, { maxLength: 8 }).map((cps) => String.fromCodePoint(...cps)),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

describe('compareUtf8 (Go sort.Strings order)', () => {
  it('has the sign of Buffer.compare of the UTF-8 bytes (property)', () => {
    fc.assert(
      fc.property(unicodeString, unicodeString, (a, b) => {
        expect(sign(compareUtf8(a, b))).toBe(sign(bytesCompare(a, b)));
        expect(sign(compareUtf8(b, a)) + sign(compareUtf8(a, b))).toBe(0);
      }),
      { numRuns: 5000 },
    );
  });

  it('handles shared prefixes (property)', () => {
    fc.assert(
      fc.property(unicodeString, unicodeString, unicodeString, (p, a, b) => {
        expect(sign(compareUtf8(p + a, p + b))).toBe(sign(bytesCompare(p + a, p + b)));
        expect(sign(compareUtf8(p, p + a))).toBe(a === '' ? 0 : -1);
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts like Buffer.compare, unlike the default UTF-16 sort (property)', () => {
    fc.assert(
      fc.property(fc.array(unicodeString, { maxLength: 12 }), (list) => {
        const bytewise = list.slice().sort(bytesCompare);
        expect(list.slice().sort(compareUtf8)).toEqual(bytewise);
      }),
      { numRuns: 1000 },
    );
  });

  it('puts U+E000..U+FFFF before astral code points', () => {
    expect(compareUtf8('\ufb33', '\u{1f602}')).toBeLessThan(0);
    expect(compareUtf8('\uffff', '\u{10000}')).toBeLessThan(0);
    expect(compareUtf8('\u{10000}', '\ue000')).toBeGreaterThan(0);
    expect('\ufb33' < '\u{1f602}').toBe(false); // what JS `<` would say
    expect(compareUtf8('\ud7ff', '\u{10000}')).toBeLessThan(0);
    expect(compareUtf8('a', 'b')).toBeLessThan(0);
    expect(compareUtf8('ab', 'a')).toBeGreaterThan(0);
    expect(compareUtf8('same', 'same')).toBe(0);
    expect(compareUtf8('', '')).toBe(0);
  });
});

describe('uniqueSorted (reference uniqueSorted)', () => {
  it('trims, drops empties, dedupes and sorts byte-wise', () => {
    expect(uniqueSorted([' b ', 'a', '', '   ', 'a', '\tb\n', 'c'])).toEqual(['a', 'b', 'c']);
    expect(uniqueSorted(['\u{1f602}', '\ufb33', 'z', '\u00e9'])).toEqual(['z', '\u00e9', '\ufb33', '\u{1f602}']);
    expect(uniqueSorted(['B', 'a', 'A', 'b'])).toEqual(['A', 'B', 'a', 'b']); // case-sensitive
    expect(uniqueSorted(['\u0085x\u00a0', 'x'])).toEqual(['x']); // Go trims NEL and NBSP
    expect(uniqueSorted(['\ufeffx', 'x'])).toEqual(['x', '\ufeffx']); // ...but not the BOM
  });

  it('always returns a fresh array, never null', () => {
    expect(uniqueSorted(null)).toEqual([]);
    expect(uniqueSorted(undefined)).toEqual([]);
    expect(uniqueSorted([])).toEqual([]);
    expect(uniqueSorted(['', ' ', '\n'])).toEqual([]);
    const input = ['b', 'a'];
    const out = uniqueSorted(input);
    expect(out).not.toBe(input);
    expect(input).toEqual(['b', 'a']); // input untouched
    expect(uniqueSorted(null)).not.toBe(uniqueSorted(null));
  });

  it('matches a straightforward reference and is idempotent (property)', () => {
    const item = fc.oneof(
      unicodeString,
      fc.constantFrom('', ' ', ' a', 'a ', '\u3000a', 'a\u0085', '\ufeff', 'A', 'a'),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 15 }), (list) => {
        const expected = [...new Set(list.map((s) => goTrim(s)).filter((s) => s !== ''))].sort(bytesCompare);
        const out = uniqueSorted(list);
        expect(out).toEqual(expected);
        expect(uniqueSorted(out)).toEqual(out);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('uniqueSortedLower (reference normalizeStringListLower)', () => {
  it('lowercases with Go rules before trimming, deduping and sorting', () => {
    expect(uniqueSortedLower([' High', 'high ', 'CRITICAL', '', 'Low'])).toEqual(['critical', 'high', 'low']);
    expect(uniqueSortedLower(['\u0130', 'I', 'i'])).toEqual(['i']); // U+0130 -> i, not i + U+0307
    expect(uniqueSortedLower(['ΟΔΟΣ'])).toEqual(['οδοσ']); // no final-sigma rule
    expect(uniqueSortedLower(null)).toEqual([]);
    expect(uniqueSortedLower([])).toEqual([]);
  });
});

/** Go unicode.IsSpace: the Unicode White_Space property. */
const WHITE_SPACE = /^\p{White_Space}$/u;
function referenceTrim(s: string): string {
  const cps = [...s];
  let start = 0;
  let end = cps.length;
  while (start < end && WHITE_SPACE.test(cps[start]!)) start++;
  while (end > start && WHITE_SPACE.test(cps[end - 1]!)) end--;
  return cps.slice(start, end).join('');
}

describe('goTrim (Go strings.TrimSpace)', () => {
  it('trims every Unicode White_Space code point, including U+0085 (NEL)', () => {
    const ws = '\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';
    expect(goTrim(`${ws}a b${ws}`)).toBe('a b');
    expect(goTrim('\u0085x\u0085')).toBe('x');
    expect('\u0085x'.trim()).toBe('\u0085x'); // JS trim misses NEL
  });

  it('keeps U+FEFF, U+200B and U+180E (not White_Space in Go)', () => {
    expect(goTrim('\ufeffx\ufeff')).toBe('\ufeffx\ufeff');
    expect('\ufeffx\ufeff'.trim()).toBe('x'); // JS trim strips the BOM
    expect(goTrim('\u200bx\u200b')).toBe('\u200bx\u200b');
    expect(goTrim('\u180ex\u180e')).toBe('\u180ex\u180e');
  });

  it('keeps inner whitespace and handles empty / all-space input', () => {
    expect(goTrim('')).toBe('');
    expect(goTrim(' \t\n ')).toBe('');
    expect(goTrim('a \u3000 b')).toBe('a \u3000 b');
    expect(goTrim('x')).toBe('x');
  });

  it('runs in linear time on long runs of inner whitespace', () => {
    // A backtracking /\s+$/-style implementation needs seconds here (quadratic); linear is ~0.1 ms.
    // Kept small enough that a regression fails in seconds instead of hanging the suite.
    const s = `a${' '.repeat(100_000)}b`;
    const started = performance.now();
    expect(goTrim(s)).toBe(s);
    expect(goTrim(`  ${s}\u3000`)).toBe(s);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('matches a White_Space reference (property)', () => {
    const unit = fc.oneof(
      fc.constantFrom(' ', '\t', '\n', '\u0085', '\u00a0', '\u2028', '\u3000', '\ufeff', '\u200b', '\u180e', 'a'),
      fc.string({ unit: 'binary', maxLength: 1 }),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (parts) => {
        const s = parts.join('');
        expect(goTrim(s)).toBe(referenceTrim(s));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('goLower (Go strings.ToLower: per-rune simple case mapping)', () => {
  it('maps U+0130 (İ) to plain i', () => {
    expect(goLower('\u0130')).toBe('i');
    expect(goLower('\u0130STANBUL')).toBe('istanbul');
    expect('\u0130'.toLowerCase()).toBe('i\u0307'); // what JS does
  });

  it('has no final-sigma context rule: Σ is always σ', () => {
    expect(goLower('ΟΔΟΣ')).toBe('οδοσ');
    expect(goLower('ΣΑΣ ΣΑΣ')).toBe('σασ σασ');
    expect('ΟΔΟΣ'.toLowerCase()).toBe('οδος'); // what JS does
    expect(goLower('ς')).toBe('ς');
  });

  it('lowercases ASCII, Latin, titlecase digraphs, compatibility and astral letters', () => {
    expect(goLower('Tool.WRITE')).toBe('tool.write');
    expect(goLower('ÀÉÎÕÜ')).toBe('àéîõü');
    expect(goLower('\u01c5')).toBe('\u01c6'); // ǅ -> ǆ
    expect(goLower('\u212a')).toBe('k'); // KELVIN SIGN
    expect(goLower('\u2126')).toBe('\u03c9'); // OHM SIGN
    expect(goLower('\u{10400}')).toBe('\u{10428}'); // DESERET
    expect(goLower('ß')).toBe('ß');
    expect(goLower('')).toBe('');
  });

  it('maps rune by rune: same number of code points, and goLower(a + b) = goLower(a) + goLower(b) (property)', () => {
    fc.assert(
      fc.property(unicodeString, unicodeString, (a, b) => {
        expect([...goLower(a)]).toHaveLength([...a].length);
        expect(goLower(a + b)).toBe(goLower(a) + goLower(b));
        expect(goLower(goLower(a))).toBe(goLower(a));
      }),
      { numRuns: 3000 },
    );
  });

  it('leaves lone surrogates alone', () => {
    expect(goLower('A\ud800B')).toBe('a\ud800b');
  });
});
