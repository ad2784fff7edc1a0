import { caselessKey } from '../../canon/index.js';

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
