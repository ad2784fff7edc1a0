import { parseJsonText, type JsonValue } from './json.js';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Parse a signed artifact. `JSON.parse` silently keeps the last of duplicate keys, so a record
 * could show a reader one value while a verifier hashed another: duplicates are refused outright,
 * with the path of the object that repeats the key.
 */
export function parseStrictJson(text: string): JsonValue {
  let value: JsonValue;
  try {
    value = parseJsonText(text);
  } catch (err) {
    throw new WardError(ERROR_CODES.SIGNATURE_INVALID, `invalid JSON: ${(err as Error).message}`);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate) {
    throw new WardError(ERROR_CODES.SIGNATURE_INVALID, `duplicate key ${JSON.stringify(duplicate.key)} at ${duplicate.path}`);
  }
  return value;
}

interface Frame {
  kind: 'object' | 'array';
  keys: Set<string>;
  expectKey: boolean;
  /** The member name or index this frame holds, for the error path. */
  label: string;
  index: number;
}

/** Scan already-valid JSON text for an object that repeats a key. */
function findDuplicateKey(text: string): { key: string; path: string } | undefined {
  const stack: Frame[] = [];
  let pendingLabel = '$';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const top = stack[stack.length - 1];
    switch (ch) {
      case '{':
      case '[':
        stack.push({ kind: ch === '{' ? 'object' : 'array', keys: new Set(), expectKey: ch === '{', label: pendingLabel, index: 0 });
        if (ch === '[') pendingLabel = '[0]';
        break;
      case '}':
      case ']':
        stack.pop();
        break;
      case ',':
        if (top?.kind === 'object') top.expectKey = true;
        else if (top) pendingLabel = `[${++top.index}]`;
        break;
      case '"': {
        let end = i + 1;
        while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
        if (top?.kind === 'object' && top.expectKey) {
          const key = JSON.parse(text.slice(i, end + 1)) as string;
          if (top.keys.has(key)) return { key, path: stack.map((frame) => frame.label).join('') };
          top.keys.add(key);
          top.expectKey = false;
          pendingLabel = `.${key}`;
        }
        i = end;
        break;
      }
      default:
        break;
    }
  }
  return undefined;
}
