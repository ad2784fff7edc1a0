/** JSON data as it comes out of `JSON.parse`: the only values Ward canonicalizes or digests. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A JSON text that repeats a member name inside one object. `JSON.parse` (like Go's decoder) keeps
 * the last value silently, so a reader and a verifier could see different documents; Ward refuses
 * the text instead. It is a SyntaxError so that every caller which reports "invalid JSON" reports
 * this too; `key` and `path` say where.
 */
export class JsonDuplicateKeyError extends SyntaxError {
  /** The repeated member name (after lone surrogates became U+FFFD, as for every key). */
  readonly key: string;
  /** JSONPath of the object that repeats it: `$`, `$.context`, `$.targets[0]`. */
  readonly path: string;
  /** JSONPath of the repeated member itself: `$.targets`. */
  readonly memberPath: string;

  constructor(key: string, path: string) {
    super(`duplicate key ${JSON.stringify(key)} at ${path}`);
    this.name = 'JsonDuplicateKeyError';
    this.key = key;
    this.path = path;
    this.memberPath = path + pathLabel(key);
  }
}

export function isJsonDuplicateKeyError(err: unknown): err is JsonDuplicateKeyError {
  return err instanceof JsonDuplicateKeyError;
}

/**
 * Parse JSON text the one way Ward reads JSON input: strings decoded the way Go's encoding/json
 * sees them (lone surrogates become U+FFFD) and **duplicate member names refused** at any depth
 * (JsonDuplicateKeyError). Invalid JSON throws the SyntaxError of `JSON.parse`.
 *
 * Cost: one native `JSON.parse`, the walk over the result that already checks every string, and a
 * count of the colons in the text. `JSON.parse` only ever loses a member to a later one with the
 * same name, so the text has a duplicate exactly when it has more members than the result:
 *
 *   colons in the text = members in the text + colons inside its strings,
 *
 * and the walk counts the result's members and the colons inside the strings it visits. Without a
 * duplicate every string of the text is visited, so `colons − colons in visited strings` equals the
 * result's member count; with one, the lost member (and any strings it held) makes the left side
 * larger. This needs each raw `:` inside a string to decode to one `:` and nothing else to: only the
 * escape `\u003a` breaks that, so a text containing it is counted exactly by a string-aware scan
 * instead. Only when the counts differ is the text scanned again, with a set of names per object,
 * to say which key repeats and where.
 *
 * The quick path, taken by most messages (a proxied `tools/call` line, say): when no string of
 * the value can hold a lone surrogate (the text is well-formed and has no `\uD800`–`\uDFFF`
 * escape), nothing needs rewriting, and when moreover the text has exactly as many colons as the
 * value has members, it repeats no name: its colons are at least its members, which are at least
 * the value's. Then only the value's members are counted (no string is visited). When the colons
 * are more (some string holds one: a URL, a time), the colons inside the value's strings are
 * counted as above, without the well-formedness checks. Any text still in doubt (a repeated
 * name, a `\u003a`, a possible lone surrogate) takes the full walk below, which gives it the same
 * result or error as ever.
 */
export function parseJsonText(text: string): JsonValue {
  const value = JSON.parse(text) as JsonValue;
  if (value !== null && typeof value === 'object' && noLoneSurrogates(text)) {
    const valueMembers = memberCount(value);
    const textColons = countColons(text);
    if (textColons === valueMembers) return value;
    if (!(text.includes('\\u003') && /\\u003a/i.test(text)) && textColons - colonsInStringsOf(value) === valueMembers) return value;
  }
  members = 0;
  colonsInStrings = 0;
  const out = wellFormed(value);
  const colonEscape = text.includes('\\u003') && /\\u003a/i.test(text);
  const textMembers = colonEscape ? countMembers(text) : countColons(text) - colonsInStrings;
  if (members !== textMembers) throw duplicateKeyError(text);
  return out;
}

/** Members and colons-inside-strings seen by the current walk (parsing is synchronous). */
let members = 0;
let colonsInStrings = 0;

function colons(s: string): void {
  let at = s.indexOf(':');
  while (at >= 0) {
    colonsInStrings++;
    at = s.indexOf(':', at + 1);
  }
}

function wellFormedString(s: string): string {
  colons(s);
  return s.isWellFormed() ? s : s.toWellFormed();
}

/**
 * The walk over the parsed value, with an explicit stack rather than recursion: `JSON.parse`
 * accepts any nesting depth, and the walk must not turn deep input into a stack overflow before
 * the intent normalizer can refuse it with its own error (and, under fail-closed risk, a traced
 * block). Each entry is a container and the key in it of an object or array still to visit.
 */
function wellFormed(root: JsonValue): JsonValue {
  if (typeof root === 'string') return wellFormedString(root);
  if (root === null || typeof root !== 'object') return root;
  const holder: JsonObject = { root };
  const pending: [JsonObject | JsonValue[], string | number][] = [[holder, 'root']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [parent, at] = next;
    let value = (parent as Record<string | number, JsonValue>)[at] as JsonObject | JsonValue[];
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item = value[i] as JsonValue;
        if (item !== null && typeof item === 'object') pending.push([value, i]);
        else if (typeof item === 'string') {
          const fixed = wellFormedString(item);
          if (fixed !== item) value[i] = fixed;
        }
      }
      continue;
    }
    let keys = Object.keys(value);
    let rebuild = false;
    for (const key of keys) {
      colons(key);
      if (!key.isWellFormed()) rebuild = true;
    }
    if (rebuild) {
      const rebuilt: JsonObject = {};
      for (const key of keys) {
        // defineProperty, not assignment: a "__proto__" key must stay an own data property (as
        // JSON.parse makes it) instead of replacing the new object's prototype. Two different lone
        // surrogates both become U+FFFD: the later one replaces the earlier, so the member count
        // drops and the text is refused as a duplicate, like any other repeated name.
        Object.defineProperty(rebuilt, key.toWellFormed(), { value: value[key], enumerable: true, writable: true, configurable: true });
      }
      // The slot already holds an own data property, so assignment cannot reach a prototype setter.
      (parent as Record<string | number, JsonValue>)[at] = rebuilt;
      value = rebuilt;
      keys = Object.keys(rebuilt);
    }
    members += keys.length;
    for (const key of keys) {
      const child = value[key] as JsonValue;
      if (child !== null && typeof child === 'object') pending.push([value, key]);
      else if (typeof child === 'string') {
        const fixed = wellFormedString(child);
        if (fixed !== child) value[key] = fixed;
      }
    }
  }
  return holder['root'] as JsonValue;
}

/** Whether no string JSON.parse reads from `text` can hold a lone surrogate (false when unsure). */
function noLoneSurrogates(text: string): boolean {
  return text.isWellFormed() && !(text.includes('\\u') && SURROGATE_ESCAPE.test(text));
}

/** A `\u` escape of a UTF-16 surrogate (or a backslash and such text after an escaped backslash: then only the quick path is lost). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * The members of every object in a parsed value (an explicit stack: JSON.parse accepts any depth).
 * Object.keys, not Object.values: in the proxy, cold, the parse was ~1 µs slower with the latter.
 */
function memberCount(root: JsonObject | JsonValue[]): number {
  let count = 0;
  const pending: (JsonObject | JsonValue[])[] = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item = node[i] as JsonValue;
        if (item !== null && typeof item === 'object') pending.push(item);
      }
      continue;
    }
    const keys = Object.keys(node);
    count += keys.length;
    for (let i = 0; i < keys.length; i++) {
      const item = node[keys[i] as string] as JsonValue;
      if (item !== null && typeof item === 'object') pending.push(item);
    }
  }
  return count;
}

/** The colons in every string and member name of a parsed value. */
function colonsInStringsOf(root: JsonObject | JsonValue[]): number {
  let count = 0;
  const pending: (JsonObject | JsonValue[])[] = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const isArray = Array.isArray(node);
    const keys = isArray ? undefined : Object.keys(node);
    const n = keys === undefined ? (node as JsonValue[]).length : keys.length;
    for (let i = 0; i < n; i++) {
      let item: JsonValue;
      if (keys === undefined) item = (node as JsonValue[])[i] as JsonValue;
      else {
        const key = keys[i] as string;
        for (let at = key.indexOf(':'); at >= 0; at = key.indexOf(':', at + 1)) count++;
        item = (node as JsonObject)[key] as JsonValue;
      }
      if (typeof item === 'string') for (let at = item.indexOf(':'); at >= 0; at = item.indexOf(':', at + 1)) count++;
      else if (item !== null && typeof item === 'object') pending.push(item);
    }
  }
  return count;
}

/** Every `:` in the text. */
function countColons(text: string): number {
  let count = 0;
  let at = text.indexOf(':');
  while (at >= 0) {
    count++;
    at = text.indexOf(':', at + 1);
  }
  return count;
}

/**
 * The number of object members in valid JSON text: its colons outside strings (the exact count,
 * used when `\u003a` escapes make the quick one unusable). Both searches use `indexOf`; a colon
 * found inside a string is searched again after it, so the text is read about once.
 */
function countMembers(text: string): number {
  let count = 0;
  let colon = text.indexOf(':');
  if (colon < 0) return 0;
  let pos = 0;
  for (;;) {
    const open = text.indexOf('"', pos);
    const stop = open < 0 ? text.length : open;
    while (colon >= 0 && colon < stop) {
      count++;
      colon = text.indexOf(':', colon + 1);
    }
    if (open < 0 || colon < 0) return count;
    let close = text.indexOf('"', open + 1);
    while (escaped(text, close)) close = text.indexOf('"', close + 1);
    pos = close + 1;
    if (colon < pos) colon = text.indexOf(':', pos);
  }
}

/** Whether the quote at `at` is preceded by an odd number of backslashes. */
function escaped(text: string, at: number): boolean {
  let i = at - 1;
  while (text.charCodeAt(i) === 0x5c) i--;
  return (at - 1 - i) % 2 === 1;
}

interface Frame {
  object: boolean;
  keys: Set<string> | undefined;
  expectKey: boolean;
  /** The member name or index this frame holds, for the error path. */
  label: string;
  index: number;
}

/** The slow path: find the first object, in text order, that repeats a name (text known to be valid JSON). */
function duplicateKeyError(text: string): JsonDuplicateKeyError {
  const stack: Frame[] = [];
  let pendingLabel = '$';
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    switch (ch) {
      case 0x7b: // {
      case 0x5b: // [
        stack.push({ object: ch === 0x7b, keys: ch === 0x7b ? new Set() : undefined, expectKey: ch === 0x7b, label: pendingLabel, index: 0 });
        if (ch === 0x5b) pendingLabel = '[0]';
        break;
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        break;
      case 0x2c: // ,
        if (top?.object) top.expectKey = true;
        else if (top) pendingLabel = `[${++top.index}]`;
        break;
      case 0x22: {
        // "
        let end = i + 1;
        while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c ? 2 : 1;
        if (top?.object && top.expectKey) {
          const key = (JSON.parse(text.slice(i, end + 1)) as string).toWellFormed();
          if (top.keys!.has(key)) return new JsonDuplicateKeyError(key, stack.map((frame) => frame.label).join(''));
          top.keys!.add(key);
          top.expectKey = false;
          pendingLabel = pathLabel(key);
        }
        i = end;
        break;
      }
      default:
        break;
    }
  }
  // Unreachable for a text whose member count differed; kept as a refusal, never a silent pass.
  return new JsonDuplicateKeyError('', '$');
}

/** `.name` for identifier-like names, `["any name"]` otherwise, so a path is never ambiguous. */
function pathLabel(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
