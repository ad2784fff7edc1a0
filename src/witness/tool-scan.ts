import { foldSpelling } from '../canon/index.js';
import { hash } from 'node:crypto';
import { walkStrings } from './walk.js';

/**
 * Tool definitions under suspicion (docs/witness.md "Tool definitions"). A tool's description,
 * input and output schemas (descriptions, titles, defaults, enums, property names) and annotations
 * all reach the model as text; a server can hide instructions there that the user never reads.
 * `scanToolDefinition` looks for instruction-like text addressed to the model and for text a
 * reader cannot see; `findShadowing` for one name offered twice under spellings a model or a
 * lenient client may take for the same tool. Findings carry a reason code, a kind, a JSON path
 * inside the definition and a digest of the matched text (tool definitions are not secret, but a
 * finding is logged, and hostile text has no business in logs).
 *
 * The patterns are phrases that tool documentation has no reason to contain (an instruction to
 * ignore earlier instructions, to keep something from the user, to read a credential file first,
 * a pseudo-tag like `<IMPORTANT>`, an HTML comment): a finding is worth an operator's look, not
 * proof of malice, which is why the proxy hides or blocks the tool until `ward mcp pins accept`.
 */
export const TOOL_SUSPICIOUS = 'mcp_tool_description_suspicious';
export const TOOL_SHADOWED = 'mcp_tool_name_shadowed';

export type ToolScanKind =
  | 'override_instructions'
  | 'conceal_from_user'
  | 'pseudo_tag'
  | 'hidden_precondition'
  | 'model_addressed'
  | 'html_comment'
  | 'invisible_unicode';

export interface ToolScanFinding {
  reason_code: typeof TOOL_SUSPICIOUS;
  kind: ToolScanKind;
  /** JSON path inside the tool definition (`$.description`, `$.inputSchema.properties.path.description`). */
  path: string;
  /** `sha256:<hex>` of the matched text. */
  digest: string;
}

const SENSITIVE =
  String.raw`(?:~\/|\.ssh\b|id_(?:rsa|ed25519|ecdsa)|\.env\b|\.aws\b|credentials?|passwords?|secrets?|tokens?|api[_ -]?keys?|private[_ -]?keys?|mcp\.json|\.cursor|\.config\b|\/etc\/(?:passwd|shadow))`;

const TEXT_PATTERNS: readonly { kind: ToolScanKind; re: RegExp }[] = [
  {
    kind: 'override_instructions',
    re: /\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|all|any|other|system|safety)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|directions|guidelines|messages|policies)\b/gi,
  },
  {
    kind: 'conceal_from_user',
    re: /\b(?:do\s+not|don'?t|never|must\s+not|should\s+not|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|notify(?:ing)?|alert(?:ing)?|show(?:ing)?|let(?:ting)?)\b[^.\n]{0,60}?\b(?:the\s+)?(?:user|human|operator|person)s?\b/gi,
  },
  { kind: 'conceal_from_user', re: /\b(?:user|human)s?\s+(?:must|should|need)\s+(?:not|never)\s+(?:know|see|be\s+(?:told|informed|aware))/gi },
  { kind: 'conceal_from_user', re: /\b(?:keep|remain)\s+(?:this|it|these)\s+(?:secret|hidden|confidential)\b/gi },
  { kind: 'pseudo_tag', re: /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|prompt|context)\b[^>]{0,40}>|\[\s*(?:SYSTEM|INST|IMPORTANT)\s*\]|<\|im_start\|>/gi },
  {
    kind: 'hidden_precondition',
    re: new RegExp(
      String.raw`\b(?:before|prior\s+to)\s+(?:using|calling|invoking|running|executing)\s+(?:this|the|any)\b[^\n]{0,120}?\b(?:read|open|fetch|cat|load|send|include|pass|upload|attach|provide|copy)\b[^\n]{0,80}?${SENSITIVE}`,
      'gi',
    ),
  },
  {
    kind: 'hidden_precondition',
    re: new RegExp(String.raw`\b(?:first|always|must)\s+(?:read|send|include|pass|upload|attach|copy|cat)\b[^.\n]{0,80}?${SENSITIVE}`, 'gi'),
  },
  { kind: 'model_addressed', re: /\b(?:you\s+are\s+now\b|system\s+prompt|as\s+an\s+ai\b|new\s+instructions?\s*:|assistant\s*:\s)/gi },
  { kind: 'html_comment', re: /<!--[\s\S]*?(?:-->|$)/g },
];

/** Findings for one tool definition (`tools/list` entry, any shape). */
export function scanToolDefinition(tool: unknown): ToolScanFinding[] {
  const out: ToolScanFinding[] = [];
  for (const { path, value } of walkStrings(tool, { includeKeys: true }).strings) {
    const here: { at: number; end: number; kind: ToolScanKind; text: string }[] = [];
    for (const { kind, re } of TEXT_PATTERNS) {
      for (const m of value.matchAll(re)) {
        const end = m.index + m[0].length;
        if (here.some((f) => m.index < f.end && end > f.at)) continue;
        here.push({ at: m.index, end, kind, text: m[0] });
      }
    }
    for (const run of hiddenRuns(value)) here.push({ ...run, kind: 'invisible_unicode', text: value.slice(run.at, run.end) });
    here.sort((a, b) => a.at - b.at);
    for (const f of here) out.push({ reason_code: TOOL_SUSPICIOUS, kind: f.kind, path, digest: `sha256:${hash('sha256', f.text, 'hex')}` });
  }
  return out;
}

const PLAIN_TEXT = /^[\x20-\x7e\n\t\r]*$/;
const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}]/u;
const EMOJI = /\p{Emoji}/u;
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F]/u;
const LETTER = /[\p{L}\p{M}]/u;
const PICTOGRAPHIC_NEXT = /\p{Extended_Pictographic}/u;

/**
 * Runs of code points a reader of a tool definition does not see: every default-ignorable, format
 * and control code point (zero-width characters, bidi controls, U+034F, tag characters, variation
 * selectors U+FE00–FE0F and U+E0100–E01EF, soft hyphen, fillers...), except newline, tab and
 * carriage return, a zero-width joiner inside an emoji sequence, a ZWNJ between letters, and one
 * U+FE0E/FE0F right after a character that has an emoji form. Stricter than the result
 * firewall's `invisible` detector: a description has no use for an ideographic variation
 * selector, and a run of selectors spells bytes.
 */
export function hiddenRuns(text: string): { at: number; end: number }[] {
  if (PLAIN_TEXT.test(text)) return [];
  const cps = Array.from(text);
  const runs: { at: number; end: number }[] = [];
  let offset = 0;
  cps.forEach((ch, i) => {
    const end = offset + ch.length;
    if (hiddenAt(cps, i)) {
      const last = runs[runs.length - 1];
      if (last !== undefined && last.end === offset) last.end = end;
      else runs.push({ at: offset, end });
    }
    offset = end;
  });
  return runs;
}

function hiddenAt(cps: readonly string[], i: number): boolean {
  const ch = cps[i] as string;
  if (ch === '\n' || ch === '\t' || ch === '\r' || !HIDDEN.test(ch)) return false;
  const prev = cps[i - 1] ?? '';
  const next = cps[i + 1] ?? '';
  if (ch === '\u200D') return !(PICTOGRAPHIC.test(prev) && PICTOGRAPHIC_NEXT.test(next));
  if (ch === '\u200C') return !(LETTER.test(prev) && LETTER.test(next));
  if (ch === '\uFE0E' || ch === '\uFE0F') return !(EMOJI.test(prev) && prev !== '\uFE0E' && prev !== '\uFE0F');
  return true;
}

export interface ShadowFinding {
  reason_code: typeof TOOL_SHADOWED;
  /** The name as Ward folds it (src/canon/fold.ts). */
  folded: string;
  /** Every (server, name) that folds to it, sorted by server then name; two or more. */
  tools: { server: string; name: string }[];
}

/**
 * Tool names that collide after Ward's case/width/separator folding, across the servers of one
 * client (or within one server: `read_file` next to `Read-File`). Which of the tools is the
 * impostor cannot be told from names; the proxy decides (e.g. the later-listed one is held until
 * accepted).
 */
export function findShadowing(toolsByServer: ReadonlyMap<string, readonly string[]> | Readonly<Record<string, readonly string[]>>): ShadowFinding[] {
  const entries = toolsByServer instanceof Map ? [...toolsByServer.entries()] : Object.entries(toolsByServer);
  const groups = new Map<string, Map<string, { server: string; name: string }>>();
  for (const [server, names] of entries) {
    for (const name of names) {
      const folded = foldSpelling(name);
      const group = groups.get(folded) ?? new Map<string, { server: string; name: string }>();
      group.set(`${server}\u0000${name}`, { server, name });
      groups.set(folded, group);
    }
  }
  const out: ShadowFinding[] = [];
  for (const [folded, group] of groups) {
    if (group.size < 2) continue;
    const tools = [...group.values()].sort((a, b) => cmp(a.server, b.server) || cmp(a.name, b.name));
    out.push({ reason_code: TOOL_SHADOWED, folded, tools });
  }
  return out.sort((a, b) => cmp(a.folded, b.folded));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
