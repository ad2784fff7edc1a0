/**
 * Go `strconv.Quote`, used wherever the reference formats a value with `%q` (e.g.
 * `invalid rule effect "x" for N`): printable runes stay as they are, everything else is escaped.
 */
export function goQuote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd';
    else if ((printable ??= /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u).test(ch)) out += ch;
    else out += escapeRune(cp);
  }
  return out + '"';
}

/** Go's printable runes; built on first use (V8 expands the Unicode classes when the expression is created, ~0.4 ms at every load). */
let printable: RegExp | undefined;

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
};

function escapeRune(cp: number): string {
  const short = SHORT_ESCAPES[cp];
  if (short !== undefined) return short;
  if (cp < 0x20 || cp === 0x7f) return '\\x' + hex(cp, 2);
  if (cp < 0x10000) return '\\u' + hex(cp, 4);
  return '\\U' + hex(cp, 8);
}

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}
