/** Printable ASCII: NFKC leaves it as it is, and lowercasing is its whole case fold. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The key under which two names count as one: Unicode compatibility form (NFKC, so full-width
 * `ａｌｉｃｅ` is `alice`) and full case folding. Lower, upper, lower makes `ẞ`, `ß` and `SS` meet;
 * NFKC again because case mapping can leave a sequence that is not normalized. Used wherever a
 * spelling must not make two names distinct: approver identities, zip entry aliases, tool-call
 * methods and argument names.
 */
export function caselessKey(s: string): string {
  if (PRINTABLE_ASCII.test(s)) return s.toLowerCase();
  return s.normalize('NFKC').toLowerCase().toUpperCase().toLowerCase().normalize('NFKC');
}

/**
 * Characters that change a name's spelling but not how a lenient reader may see it; and separators
 * a lenient router or binder may treat alike (`/`, `.`, `_`, `-`, `∕`...): all punctuation and
 * symbols. Built on first use: V8 expands the Unicode property classes when the expression is
 * created, about 0.7 ms, which names in printable ASCII (nearly all) never need.
 */
let spellingClasses: { invisible: RegExp; separators: RegExp } | undefined;

/**
 * A name as a lenient reader may see it: NFKC (full-width letters, compatibility forms), then
 * whitespace, control, format and default-ignorable characters removed anywhere, case folded, and
 * punctuation and symbols removed. `Tools/Call`, `tools/call `, `ｔｏｏｌｓ／ｃａｌｌ` and
 * `tools.call` all fold to `toolscall`; `filePath`, `file_path` and `FILE-PATH` to `filepath`.
 */
export function foldSpelling(name: string): string {
  // Printable ASCII: NFKC changes nothing, the only invisible character is the space, and every
  // character but a letter or digit is punctuation or a symbol (tests/canon/fold.test.ts checks
  // this against the general path).
  if (PRINTABLE_ASCII.test(name)) return name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return foldSpellingUnicode(name);
}

/** foldSpelling for any string (exported for the test that checks the ASCII path against it). */
export function foldSpellingUnicode(name: string): string {
  spellingClasses ??= {
    invisible: /[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu,
    separators: /[\p{P}\p{S}]/gu,
  };
  return caselessKey(name.normalize('NFKC').replace(spellingClasses.invisible, '')).replace(spellingClasses.separators, '');
}
