import { MAX_JCS_DEPTH, foldSpelling, goTrim, isJsonObject, type JsonObject, type JsonValue } from '../canon/index.js';
import { canonicalTarget } from './canonical.js';
import { invalidIntent } from './invalid.js';
import { inferEndpointClass, normalizeTarget } from './targets.js';
import type { NormalizedIntent, ScriptStep, Target } from './types.js';

/**
 * Which argument values are targets (docs/canonical-targets.md "Targets Ward finds in the
 * arguments"). One function for every host: the MCP proxy builds its intent's targets with it, and
 * the gate adds what it finds to the targets every intent declares (CLI, SDK, daemon, the Claude
 * Code hook), so a call is checked on the same values whichever way it arrives.
 *
 * Conservative by default. Every string at any depth (arrays and nested objects too) that reads as
 * a URL, an absolute, `~` or `file:` path is a target whatever its argument is called; a relative
 * path is a target when the argument's name says it takes paths (the name heuristic below, or an
 * explicit map). Command arguments are one opaque command target. A map refines the kind of a
 * named argument but never removes what the value itself shows.
 */

/** How the values of one named argument become targets. */
export interface ArgTargetRule {
  kind: string;
  /** Overrides the operation inferred from the tool name. */
  operation?: string;
  endpoint_class?: string;
  sensitivity?: string;
}

/** Argument name → rule; `null` says the name does not take targets (what a value shows still counts). */
export type ArgTargetRules = ReadonlyMap<string, ArgTargetRule | null>;

export interface TargetMapping {
  args: ArgTargetRules;
  /** Per-tool rules, keyed by the call's own tool name (the MCP name, without prefix). */
  tools: ReadonlyMap<string, ArgTargetRules>;
}

/** No explicit rules: the name heuristic and the value shapes alone. */
export const DEFAULT_TARGET_MAPPING: TargetMapping = { args: new Map(), tools: new Map() };

/** A command argument: what it runs. Opaque (its text is not searched for paths). */
export const EXECUTE_RULE: ArgTargetRule = { kind: 'other', operation: 'execute', endpoint_class: 'proc.exec' };

/** A target found in the arguments, before normalization: what the proxy writes into its intent. */
export interface ArgTarget {
  kind: string;
  value: string;
  /** "" when neither the rule nor the tool name gives one. */
  operation: string;
  endpoint_class?: string;
  sensitivity?: string;
  /** Where it was found: `$.options.path`, `$.paths[0]`. */
  arg_path: string;
}

/** Bounds of the walk; past them the call is not evaluable (it fails closed, never unchecked). */
/** `depth` is JCS's own bound (an intent nested deeper is refused anyway), so the walk never refuses an intent the digests accept for depth. */
export const DISCOVERY_LIMITS = { depth: MAX_JCS_DEPTH, nodes: 100_000, targets: 1_000 } as const;

// ---------------------------------------------------------------------------------------------
// Argument names

const PATH_WORDS = new Set([
  'path', 'paths', 'file', 'files', 'filename', 'filenames', 'filepath', 'filepaths',
  'dir', 'dirs', 'directory', 'directories', 'folder', 'folders',
  'src', 'source', 'sources', 'dest', 'destination', 'destinations', 'target', 'targets',
  'input', 'inputs', 'output', 'outputs', 'root', 'roots', 'cwd',
]);
const URL_WORDS = new Set(['url', 'urls', 'uri', 'uris', 'href', 'endpoint', 'endpoints']);
const HOST_WORDS = new Set(['host', 'hosts', 'hostname', 'hostnames']);
const COMMAND_WORDS = new Set(['command', 'commands', 'cmd', 'script']);

const PATH_RULE: ArgTargetRule = { kind: 'path' };
const URL_RULE: ArgTargetRule = { kind: 'url' };
const HOST_RULE: ArgTargetRule = { kind: 'host' };

/**
 * Characters a lenient reader drops from a name (as `foldSpelling` does), and what separates words.
 * Built on first use: V8 expands the Unicode property classes when the expressions are created
 * (~0.7 ms), which names in printable ASCII never need.
 */
let unicodeWords: { invisible: RegExp; separator: RegExp } | undefined;

const nameRules = new Map<string, ArgTargetRule | null>();

/**
 * The name heuristic: the argument's last word (camelCase, `_`, `-`, `.` split; NFKC and case
 * folded, so `filePath`, `FILE-PATH` and full-width `ｐａｔｈ` read alike), or its last two words
 * joined (`file_name`), says what it takes. `target_branch` ends in `branch`: not a path.
 */
export function ruleForArgName(name: string): ArgTargetRule | null {
  const hit = nameRules.get(name);
  if (hit !== undefined) return hit;
  const words = nameWords(name).map((w) => foldSpelling(w));
  const last = words[words.length - 1] ?? '';
  const lastTwo = words.length > 1 ? words[words.length - 2]! + last : '';
  const is = (set: ReadonlySet<string>) => set.has(last) || set.has(lastTwo);
  const rule = is(COMMAND_WORDS) ? EXECUTE_RULE : is(URL_WORDS) ? URL_RULE : is(HOST_WORDS) ? HOST_RULE : is(PATH_WORDS) ? PATH_RULE : null;
  if (nameRules.size < 10_000) nameRules.set(name, rule);
  return rule;
}

/**
 * An argument name's words: NFKC, invisible characters dropped, split at camelCase humps and at
 * anything but a letter or digit. Printable ASCII (NFKC leaves it as it is; the space is its only
 * invisible character; its letters and digits are A–Z, a–z, 0–9) takes the short way
 * (tests/intent/discover-words.property.test.ts checks it against the general one).
 */
export function nameWords(name: string): string[] {
  if (/^[\x20-\x7e]*$/.test(name)) return splitWords(name.replace(/ /g, ''), /[^A-Za-z0-9]+/);
  return nameWordsUnicode(name);
}

/** nameWords for any string. */
export function nameWordsUnicode(name: string): string[] {
  unicodeWords ??= { invisible: /[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu, separator: /[^\p{L}\p{N}]+/u };
  return splitWords(name.normalize('NFKC').replace(unicodeWords.invisible, ''), unicodeWords.separator);
}

function splitWords(name: string, separator: RegExp): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(separator)
    .filter((w) => w !== '');
}

const folded = new WeakMap<ArgTargetRules, Map<string, ArgTargetRule | null>>();

/** `rules` keyed by folded spelling (the first key wins when two fold alike). */
function foldedRules(rules: ArgTargetRules): Map<string, ArgTargetRule | null> {
  let f = folded.get(rules);
  if (!f) {
    f = new Map();
    for (const [k, v] of rules) {
      const key = foldSpelling(k);
      if (!f.has(key)) f.set(key, v);
    }
    folded.set(rules, f);
  }
  return f;
}

/** The tool's own rules, then the argument rules (exact name, then folded spelling), then the name heuristic. */
function ruleFor(key: string, toolRules: ArgTargetRules | undefined, args: ArgTargetRules): ArgTargetRule | null {
  if (toolRules?.has(key)) return toolRules.get(key) ?? null;
  if (args.has(key)) return args.get(key) ?? null;
  if (toolRules?.size || args.size) {
    const k = foldSpelling(key);
    if (toolRules) {
      const f = foldedRules(toolRules);
      if (f.has(k)) return f.get(k) ?? null;
    }
    const f = foldedRules(args);
    if (f.has(k)) return f.get(k) ?? null;
  }
  return ruleForArgName(key);
}

// ---------------------------------------------------------------------------------------------
// Value shapes

/** A scheme and `//`, or a WHATWG special scheme, which needs no `//` (`http:evil.com`, `file:/etc`). */
const URL_SHAPE = /^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/|(?:https?|wss?|ftp|file):)/i;
/** Tabs and line breaks: the WHATWG parser drops them anywhere. */
const URL_STRIP_INSIDE = /[\t\n\r]/g;

/**
 * The kind of target a string is by its shape alone: `url`, `path` (`file:` URLs too: the path
 * rules read them as the path they name), or undefined. Leading and trailing C0 controls and
 * spaces are ignored, as the WHATWG parser ignores them. A multi-line string is text, not a path
 * (no file tool opens a name with a line break in it); URLs are read as the WHATWG parser reads
 * them, which drops tabs and line breaks anywhere. `/x`, `\x` (and `\\server\share`), `C:\x`,
 * `C:/x`, `~`, `~/x` and `~user/x` are paths.
 */
export function valueShape(value: string): 'url' | 'path' | undefined {
  let start = 0;
  let end = value.length;
  while (start < end && value.charCodeAt(start) <= 0x20) start++;
  while (end > start && value.charCodeAt(end - 1) <= 0x20) end--;
  if (start === end) return undefined;
  const first = value.charCodeAt(start);
  if (first === 0x2f /* / */ || first === 0x5c /* \ */) return oneLine(value, start, end) ? 'path' : undefined;
  if (first === 0x7e /* ~ */) return oneLine(value, start, end) && isHomePath(value.slice(start, end)) ? 'path' : undefined;
  const isLetter = (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7a;
  if (!isLetter) return undefined;
  const colon = value.indexOf(':', start);
  if (colon < 0 || colon >= end) return undefined; // neither a scheme nor a drive
  if (colon === start + 1) {
    const next = value.charCodeAt(colon + 1);
    if ((next === 0x2f || next === 0x5c) && oneLine(value, start, end)) return 'path'; // C:\ or C:/
  }
  const text = value.slice(start, end).replace(URL_STRIP_INSIDE, '');
  if (!URL_SHAPE.test(text)) return undefined;
  return /^file:/i.test(text) ? 'path' : 'url'; // a file: URL names a local path
}

function oneLine(value: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) return false;
  }
  return true;
}

/** `~`, or `~` and a user name (no spaces) followed by a separator. */
function isHomePath(text: string): boolean {
  return /^~(?:$|[^\s/\\]*[/\\])/.test(text);
}

// ---------------------------------------------------------------------------------------------
// The walk

/** The part of a tool name that says what it does: `tool.mcp__fs__read_file` → `read_file`, `fs.move_file` → `move_file`. */
export function bareToolName(toolName: string): string {
  const afterDot = toolName.slice(toolName.lastIndexOf('.') + 1);
  const sep = afterDot.lastIndexOf('__');
  return sep >= 0 ? afterDot.slice(sep + 2) : afterDot;
}

/**
 * The operation a tool name makes obvious (mcp.md): `read_*`, `list_*`, `get_*` read; `write_*`,
 * `edit_*`, `create_*`, `move_*` write; `delete_*`, `remove_*` delete. Anything else: none.
 */
export function operationFromToolName(name: string): string {
  const base = name.toLowerCase();
  const verb = /^([a-z]+)(?:[_\-.]|$)/.exec(base)?.[1] ?? '';
  switch (verb) {
    case 'read':
    case 'list':
    case 'get':
      return 'read';
    case 'write':
    case 'edit':
    case 'create':
    case 'move':
      return 'write';
    case 'delete':
    case 'remove':
      return 'delete';
    default:
      return '';
  }
}

export interface ArgTargetOptions {
  mapping?: TargetMapping;
  /** The name `mapping.tools` is keyed by (the MCP tool name); default the bare tool name. */
  mappingToolName?: string;
}

/**
 * The targets in a call's arguments, in argument order. `toolName` is the intent's tool name (the
 * operation comes from its bare part). Throws `ERR_INTENT_INVALID` past `DISCOVERY_LIMITS`.
 */
export function argTargets(toolName: string, args: JsonObject, options: ArgTargetOptions = {}): ArgTarget[] {
  const mapping = options.mapping ?? DEFAULT_TARGET_MAPPING;
  const bare = bareToolName(toolName);
  const toolRules = mapping.tools.get(options.mappingToolName ?? bare);
  const toolOperation = operationFromToolName(bare);
  const out: ArgTarget[] = [];
  let nodes = 0;

  const push = (rule: ArgTargetRule, value: string, argPath: string) => {
    if (out.length >= DISCOVERY_LIMITS.targets) {
      throw invalidIntent(`arguments hold more than ${DISCOVERY_LIMITS.targets} targets`, 'split the call');
    }
    const t: ArgTarget = { kind: rule.kind, value, operation: rule.operation ?? toolOperation, arg_path: argPath };
    if (rule.endpoint_class) t.endpoint_class = rule.endpoint_class;
    if (rule.sensitivity) t.sensitivity = rule.sensitivity;
    out.push(t);
  };

  const visit = (v: JsonValue, rule: ArgTargetRule | null, argPath: string, depth: number): void => {
    if (++nodes > DISCOVERY_LIMITS.nodes) {
      throw invalidIntent(`arguments have more than ${DISCOVERY_LIMITS.nodes} values to search for targets`, 'split the call');
    }
    if (depth > DISCOVERY_LIMITS.depth) {
      throw invalidIntent(`arguments nest deeper than ${DISCOVERY_LIMITS.depth} levels`, 'flatten the arguments');
    }
    if (typeof v === 'string') {
      if (v.trim() === '') return;
      if (rule === EXECUTE_RULE || (rule && rule.kind === 'other')) {
        push(rule, v, argPath); // a command is opaque: one target, its text not searched
        return;
      }
      const shape = valueShape(v);
      if (rule) push(rule, v, argPath);
      if (shape && shape !== rule?.kind) push(shape === 'url' ? URL_RULE : PATH_RULE, v, argPath);
    } else if (typeof v === 'number') {
      // `"host": 2852039166` is an IPv4 address to anything that formats it into a URL.
      if (rule && (rule.kind === 'host' || rule.kind === 'url') && Number.isFinite(v)) push(rule, String(v), argPath);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) visit(v[i]!, rule, `${argPath}[${i}]`, depth + 1);
    } else if (isJsonObject(v)) {
      for (const key of Object.keys(v)) visit(v[key]!, ruleFor(key, toolRules, mapping.args), `${argPath}.${key}`, depth + 1);
    }
  };
  for (const key of Object.keys(args)) visit(args[key]!, ruleFor(key, toolRules, mapping.args), `$.${key}`, 1);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The gate's view: declared targets plus what the arguments show

/** A discovered target, normalized, with where it was found. */
export interface DiscoveredTarget {
  target: Target;
  arg_path: string;
}

const discoveredSet = new WeakSet<Target>();
const memo = new WeakMap<JsonObject, { toolName: string; found: Found[] }>();

/** Was this target found in the arguments rather than declared (so it is in no digest)? */
export function isDiscoveredTarget(t: Target): boolean {
  return discoveredSet.has(t);
}

/** The declared targets of a list that may hold discovered ones: what digests and bindings cover. */
export function declaredTargets(targets: readonly Target[]): readonly Target[] {
  return targets.some(isDiscoveredTarget) ? targets.filter((t) => !isDiscoveredTarget(t)) : targets;
}

interface Found {
  arg: ArgTarget;
  /** kind, trimmed value and endpoint class: what a declared target must share to cover it. */
  key: string;
  /** Normalized on first use (most found targets are covered by a declared one and never are). */
  target: Target | undefined;
}

function discoverIn(toolName: string, args: JsonObject): Found[] {
  const hit = memo.get(args);
  if (hit && hit.toolName === toolName) return hit.found;
  const found = argTargets(toolName, args).map((arg): Found => {
    const endpointClass = arg.endpoint_class ?? inferEndpointClass(arg.kind, arg.operation, toolName);
    return { arg, key: `${arg.kind}\0${goTrim(arg.value)}\0${endpointClass}`, target: undefined };
  });
  memo.set(args, { toolName, found });
  return found;
}

function normalized(f: Found, toolName: string): Target {
  if (f.target) return f.target;
  const raw: JsonObject = { kind: f.arg.kind, value: f.arg.value };
  if (f.arg.operation) raw['operation'] = f.arg.operation;
  if (f.arg.endpoint_class) raw['endpoint_class'] = f.arg.endpoint_class;
  const target = normalizeTarget(raw, toolName, `discovered target at ${f.arg.arg_path}: `);
  discoveredSet.add(target);
  f.target = target;
  return target;
}

const coverKey = (t: Target) => `${t.kind}\0${t.value}\0${t.endpoint_class}`;

/**
 * The targets the arguments show that the declared ones do not already cover (same kind, value
 * and endpoint class). A declared target keeps its own fields; a discovered one is added beside it.
 */
export function discoveredTargets(toolName: string, args: JsonObject, declared: readonly Target[]): DiscoveredTarget[] {
  const found = discoverIn(toolName, args);
  if (found.length === 0) return [];
  const have = new Set(declared.map(coverKey));
  const out: DiscoveredTarget[] = [];
  for (const f of found) {
    if (have.has(f.key)) continue;
    have.add(f.key);
    out.push({ target: normalized(f, toolName), arg_path: f.arg.arg_path });
  }
  return out;
}

/**
 * Off only in the benchmark that measures what discovery costs (bench/discovery.bench.js: the same
 * workload with it on and off in one run). Not exported from the package: nothing ships with it off.
 */
const discovery = { enabled: true };
export function setTargetDiscoveryForBenchmark(enabled: boolean): void {
  discovery.enabled = enabled;
}

/**
 * The intent the gate checks: its declared targets plus the discovered ones (script steps too).
 * The same object when there is nothing to add; the declared targets, and so every digest, are
 * never changed.
 */
export function withDiscoveredTargets(intent: NormalizedIntent): NormalizedIntent {
  if (!discovery.enabled) return intent;
  const top = discoveredTargets(intent.tool_name, intent.args, intent.targets);
  let steps: ScriptStep[] | undefined;
  if (intent.script) {
    let changed = false;
    const mapped = intent.script.steps.map((s) => {
      const more = discoveredTargets(s.tool_name, s.args, s.targets);
      if (more.length === 0) return s;
      changed = true;
      return { ...s, targets: [...s.targets, ...more.map((d) => d.target)] };
    });
    if (changed) steps = mapped;
  }
  if (top.length === 0 && !steps) return intent;
  return {
    ...intent,
    targets: top.length ? [...intent.targets, ...top.map((d) => d.target)] : intent.targets,
    script: steps ? { steps } : intent.script,
  };
}

/**
 * What the trace records (`discovered_targets`): each discovered target the declared ones did not
 * cover (top level and script steps), where it was found, and its canonical form when that
 * differs or could not be reduced. Arguments past the walk's bounds give one `problem` note (the
 * call was not evaluable, and its trace still says why).
 */
export function discoveredTargetNotes(intent: NormalizedIntent): JsonObject[] {
  const notes: JsonObject[] = [];
  const workspace = intent.context.workspace;
  const note = (d: DiscoveredTarget, step?: number) => {
    const t = d.target;
    const n: JsonObject = { kind: t.kind, value: t.value, arg_path: d.arg_path, endpoint_class: t.endpoint_class };
    if (step !== undefined) n['step'] = step;
    const c = canonicalTarget(t, workspace);
    if (c.value !== undefined && c.value !== t.value) n['canonical_value'] = c.value;
    if (c.problem !== undefined) n['problem'] = c.problem;
    notes.push(n);
  };
  try {
    for (const d of discoveredTargets(intent.tool_name, intent.args, declaredTargets(intent.targets))) note(d);
    intent.script?.steps.forEach((s, i) => {
      for (const d of discoveredTargets(s.tool_name, s.args, declaredTargets(s.targets))) note(d, i);
    });
  } catch (err) {
    return [{ problem: err instanceof Error ? err.message : String(err) }];
  }
  return notes;
}
