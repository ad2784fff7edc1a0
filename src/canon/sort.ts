/**
 * Byte-wise UTF-8 order (Go `sort.Strings`), which equals code-point order. JS `<` compares UTF-16
 * code units, which differs only when one side is a surrogate and the other is U+E000..U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** `uniqueSorted` of the reference: trim, drop empties, dedupe, sort byte-wise. Always an array. */
export function uniqueSorted(list: readonly string[] | null | undefined): string[] {
  if (!list || list.length === 0) return [];
  const seen = new Set<string>();
  for (const item of list) {
    const trimmed = goTrim(item);
    if (trimmed !== '') seen.add(trimmed);
  }
  return [...seen].sort(compareUtf8);
}

/** `normalizeStringListLower`: like uniqueSorted, lowercasing first (Go `strings.ToLower`, see goLower). */
export function uniqueSortedLower(list: readonly string[] | null | undefined): string[] {
  if (!list || list.length === 0) return [];
  return uniqueSorted(list.map(goLower));
}

/**
 * Go `strings.TrimSpace`: trims Unicode White_Space. JS `trim` also strips U+FEFF (not White_Space
 * in Go) but misses U+0085 (NEL), which Go trims.
 */
export function goTrim(value: string): string {
  // A scan from both ends, not a `/[ws]+$/` regex: the regex backtracks quadratically on a long
  // run of inner whitespace (50k spaces took ~1 s), which untrusted input could exploit.
  let start = 0;
  let end = value.length;
  while (start < end && isGoSpace(value.charCodeAt(start))) start++;
  while (end > start && isGoSpace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** Go `unicode.IsSpace` (all White_Space code points are in the BMP). */
function isGoSpace(c: number): boolean {
  if (c <= 0xff) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0;
  return (
    c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * Go `strings.ToLower`: per-rune simple case mapping. JS `toLowerCase` is context-sensitive (final
 * sigma) and expands U+0130 to two code points, which would change digests for such input.
 */
export function goLower(value: string): string {
  if (ASCII.test(value)) return value.toLowerCase();
  let out = '';
  for (const ch of value) {
    if (ch === '\u0130') out += 'i';
    else {
      const lower = ch.toLowerCase();
      out += [...lower].length === 1 ? lower : ch;
    }
  }
  return out;
}
