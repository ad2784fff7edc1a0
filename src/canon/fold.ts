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
