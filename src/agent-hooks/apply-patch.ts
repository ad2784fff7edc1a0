import type { JsonObject } from '../canon/index.js';
import type { FieldReader } from './tool-call.js';

// OpenAI's `apply_patch` edit format, which Codex and Copilot both run (codex-rs/apply-patch): the
// files a patch writes, read as Codex's parser reads them, so every file is a write target.

const PATCH_HEADERS = ['*** Add File: ', '*** Update File: ', '*** Delete File: ', '*** Move to: '] as const;

/**
 * Whitespace trimmed as Rust's `str::trim` (Unicode White_Space, which has U+0085 NEL) and as
 * JavaScript's `trim` (which has U+FEFF) would: a NEL before a header or after its path would hide
 * the file from JavaScript's `trim` while Codex's parser reads it.
 */
const trimBoth = (s: string): string => s.replace(/^[\s\u0085]+|[\s\u0085]+$/g, '');

/**
 * The files an `apply_patch` body touches: its `*** Add/Update/Delete File:` and `*** Move to:`
 * headers, read as Codex's parser reads them (codex-rs/apply-patch/src/parser.rs: lines split on
 * `\n`, each trimmed before its header is matched), so padding hides no file. A line that only
 * looks like a header (a context line) adds a file to check, never hides one.
 */
export function applyPatchFiles(patch: string): string[] {
  const files = new Set<string>();
  for (const raw of patch.split('\n')) {
    const line = trimBoth(raw);
    const header = PATCH_HEADERS.find((h) => line.startsWith(h));
    const path = header === undefined ? '' : trimBoth(line.slice(header.length));
    if (path !== '') files.add(path);
  }
  return [...files];
}

/**
 * The files a patch carried inside a shell command writes (`apply_patch <<'EOF'` … or
 * `cd <dir> && apply_patch <<'EOF'` …): Codex intercepts such a command and applies the patch as
 * its `apply_patch` tool does (codex-rs/apply-patch: heredoc invocations, the `cd` naming the
 * directory its paths are relative to), so each file is a write target beside the command. Empty
 * when the command carries no patch; a `cd` anywhere else before the patch throws: Ward cannot tell
 * which directory the patch's relative paths name.
 */
export function shellPatchFiles(command: string, fail: (message: string) => Error): string[] {
  const begin = command.indexOf('*** Begin Patch');
  if (begin < 0) return [];
  const files = applyPatchFiles(command.slice(begin));
  const before = command.slice(0, begin);
  const cd = /^\s*cd\s+(?:'([^']*)'|"([^"$`\\]*)"|([^\s'"$`\\;&|()<>]+))\s*&&/.exec(before);
  const rest = cd ? before.slice(cd[0].length) : before;
  if (/(^|[^\w.-])(cd|pushd|popd)(\s|$|;|&|\|)/.test(rest)) throw fail('a shell command carries an apply_patch body after a change of directory Ward cannot follow; use `cd <dir> && apply_patch` or the apply_patch tool');
  const dir = cd ? (cd[1] ?? cd[2] ?? cd[3] ?? '') : '';
  if (cd && dir === '') throw fail('a shell command carries an apply_patch body after `cd` to an empty directory name');
  return files.map((file) => (dir === '' || file.startsWith('/') ? file : `${dir.replace(/\/+$/, '')}/${file}`));
}

/**
 * An `apply_patch` call as Ward's own tool call (the `mcp` adapter's fields): a write to every file
 * the patch names. Codex and Copilot both run it; a patch that names no file is refused (Ward
 * cannot tell what it writes).
 */
export function applyPatchCall(patch: string, f: FieldReader): JsonObject {
  const files = applyPatchFiles(patch);
  if (files.length === 0) throw f.fail('the apply_patch patch names no file (no "*** Add File:", "*** Update File:" or "*** Delete File:" line)');
  return {
    name: 'tool.write',
    // The hosts carry the patch under `command` or as the bare arguments; the gate's target
    // discovery would read a `command` as a shell command: the argument is named for what it is.
    args: { patch },
    targets: files.map((value) => ({ kind: 'path', value, operation: '' })),
  };
}
