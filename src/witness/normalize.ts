/**
 * The spellings of one text that Ward treats as the same text when it screens results and
 * matches remembered values (docs/witness.md "Normalisation"). Two forms:
 *
 * - `screenForm` (the result firewall's detectors): NFKC, so full-width `ＡＫＩＡ…` is `AKIA…`,
 *   with every invisible code point removed (zero-width characters, bidi marks, the combining
 *   grapheme joiner U+034F, variation selectors U+FE00–FE0F and U+E0100–E01EF, tag characters
 *   U+E0000–E007F, soft hyphen, fillers...). Case and whitespace stay: the detectors match formats
 *   (an AWS key id is upper case; a key in another case is not that key, and `AKIA` inside prose
 *   across words is not one either).
 * - `foldForMatch` (the witness): the same, plus case folded and every whitespace and control
 *   character removed, so a remembered value is found whatever case it is written in and whatever
 *   spaces, newlines or invisible characters were put into it. Folding works one code point at a
 *   time (compatibility decomposition, NFKD, then lower case), which keeps it compositional:
 *   fold(a + b) = fold(a) + fold(b), so a value found as a substring before folding is still
 *   found after, and fingerprints of folded values can be compared against windows of a folded
 *   argument. (NFKD and NFKC differ only by canonical composition, which both sides skip alike.)
 */

/**
 * Code points a reader does not see: default-ignorable code points (zero-width space, joiners,
 * U+034F, variation selectors, tag characters, soft hyphen, Hangul fillers, U+180B–180F...) and
 * format characters (bidi marks and controls, U+FEFF, U+2060–2064...).
 */
export const INVISIBLE_CODE_POINT = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/u;
const INVISIBLE_GLOBAL = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
/** Removed by `foldForMatch` after decomposition: invisible, whitespace and control characters. */
const FOLD_DROPPED = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{White_Space}]/gu;

/** Variation selectors (U+FE00–FE0F, U+E0100–E01EF): they can spell bytes invisibly after any character. */
export const VARIATION_SELECTOR = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;

const NON_ASCII = /[^\x00-\x7f]/;
const ASCII_DROPPED = /[\x00-\x20\x7f]+/g;

/**
 * NFKC with invisible code points removed (the firewall's second view of a string); the text
 * itself when it is ASCII (NFKC leaves ASCII as it is, and no ASCII character is invisible in
 * this sense: controls are the `invisible` detector's business).
 */
export function screenForm(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.replace(INVISIBLE_GLOBAL, '').normalize('NFKC').replace(INVISIBLE_GLOBAL, '');
}

/** Folded forms of non-ASCII code points, computed once per process (bounded). */
const FOLDED = new Map<number, string>();
const MAX_FOLDED_CACHE = 65_536;

function foldCodePoint(cp: number): string {
  let folded = FOLDED.get(cp);
  if (folded !== undefined) return folded;
  const s = String.fromCodePoint(cp);
  // Lower case may leave something NFKD would decompose further (and decomposition may give upper case).
  folded = s.normalize('NFKD').toLowerCase().normalize('NFKD').replace(FOLD_DROPPED, '');
  if (FOLDED.size < MAX_FOLDED_CACHE) FOLDED.set(cp, folded);
  return folded;
}

/**
 * The witness's form of a text (see the module comment): compatibility-decomposed, lower case,
 * with invisible, whitespace and control characters removed. Printable ASCII without upper case
 * or spaces is returned as it is (the common token, path or id); a lone surrogate is kept.
 */
export function foldForMatch(text: string): string {
  const n = text.length;
  let i = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || (c >= 0x41 && c <= 0x5a)) break;
  }
  if (i === n) return text;
  // ASCII (most texts): native lower-casing, and controls and spaces removed by one regex when there are any.
  let upper = false;
  let dropped = false;
  for (let k = i; k < n; k++) {
    const c = text.charCodeAt(k);
    if (c >= 0x7f) {
      if (c > 0x7f) return foldNonAscii(text, i);
      dropped = true;
    } else if (c <= 0x20) dropped = true;
    else if (c >= 0x41 && c <= 0x5a) upper = true;
  }
  const kept = dropped ? text.replace(ASCII_DROPPED, '') : text;
  return upper ? kept.toLowerCase() : kept;
}

function foldNonAscii(text: string, from: number): string {
  const n = text.length;
  let i = from;
  const parts: string[] = [text.slice(0, i)];
  let runStart = i;
  const flush = (end: number) => {
    if (end > runStart) parts.push(text.slice(runStart, end));
  };
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x20 && c < 0x7f && !(c >= 0x41 && c <= 0x5a)) continue;
    flush(i);
    if (c < 0x80) {
      if (c >= 0x41 && c <= 0x5a) parts.push(String.fromCharCode(c + 32));
      // Controls, space and DEL: dropped.
      runStart = i + 1;
      continue;
    }
    let cp = c;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
      }
    }
    parts.push(cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : foldCodePoint(cp));
    runStart = i + 1;
  }
  flush(n);
  return parts.join('');
}

/** Does the text hold a character `foldForMatch` changes or removes? (When not, the fold is the text.) */
export function foldChanges(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || (c >= 0x41 && c <= 0x5a)) return true;
  }
  return false;
}

/** The reverse of a text by code point (a value written backwards). */
export function reversed(text: string): string {
  return Array.from(text).reverse().join('');
}

/**
 * Can `foldForMatch(text)` be at least `n` characters long? Folding never lengthens ASCII, but a
 * compatibility decomposition can lengthen other text (`⑩` is `10`, `ﬃ` is `ffi`, `é` is `e` and a
 * combining accent): the length that counts is the folded one, on both sides (remember and match).
 */
export function mayFoldToLength(text: string, n: number): boolean {
  return text.length >= n || NON_ASCII.test(text);
}

/**
 * `(start, end) => foldForMatch(text.slice(start, end))`, with the text folded once: folding is
 * compositional, so a slice's fold is a slice of the text's fold (ASCII: each character folds to
 * itself lower-cased or to nothing, and a prefix count maps offsets). Text with other characters
 * folds each slice on its own (rare in results; the slices start and end at code point boundaries).
 */
export function foldedSlices(text: string): (start: number, end: number) => string {
  if (!foldChanges(text)) return (start, end) => text.slice(start, end);
  if (NON_ASCII.test(text)) return (start, end) => foldForMatch(text.slice(start, end));
  const n = text.length;
  let dropped = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) {
      dropped = true;
      break;
    }
  }
  const lower = text.toLowerCase();
  if (!dropped) return (start, end) => lower.slice(start, end);
  // kept[i]: characters of text[0, i) the fold keeps.
  const kept = new Uint32Array(n + 1);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (!(c <= 0x20 || c === 0x7f)) k++;
    kept[i + 1] = k;
  }
  const folded = lower.replace(ASCII_DROPPED, '');
  return (start, end) => folded.slice(kept[start] as number, kept[end] as number);
}
