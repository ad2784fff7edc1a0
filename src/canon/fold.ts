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

/** Characters that change a name's spelling but not how a lenient reader may see it. */
const INVISIBLE = /[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
/** Separators a lenient router or binder may treat alike (`/`, `.`, `_`, `-`, `∕`...): all punctuation and symbols. */
const SEPARATORS = /[\p{P}\p{S}]/gu;

/**
 * A name as a lenient reader may see it: NFKC (full-width letters, compatibility forms), then
 * whitespace, control, format and default-ignorable characters removed anywhere, case folded, and
 * punctuation and symbols removed. `Tools/Call`, `tools/call `, `ｔｏｏｌｓ／ｃａｌｌ` and
 * `tools.call` all fold to `toolscall`; `filePath`, `file_path` and `FILE-PATH` to `filepath`.
 */
export function foldSpelling(name: string): string {
  return caselessKey(name.normalize('NFKC').replace(INVISIBLE, '')).replace(SEPARATORS, '');
}
