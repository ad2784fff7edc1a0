/**
 * Every string in a JSON-like value, with the JSON path that leads to it. The witness looks at
 * what crossed the wire, so it reads values the way a JSON reader would: own enumerable keys,
 * arrays by index, nothing else. Depth and count are bounded so a hostile result cannot make the
 * walk itself the problem; callers learn when a bound cut the walk short and fail closed.
 */
export interface StringAt {
  path: string;
  value: string;
  /** The object key the string is the value of ("" at the root); array items inherit their array's. */
  key: string;
}

export interface WalkLimits {
  /** Nesting levels followed (deeper values are not visited). */
  maxDepth: number;
  /** Strings visited. */
  maxStrings: number;
}

export const DEFAULT_WALK_LIMITS: WalkLimits = { maxDepth: 64, maxStrings: 100_000 };

export interface Walked {
  strings: StringAt[];
  /** A bound stopped the walk before every string was seen. */
  truncated: boolean;
}

/**
 * `includeKeys`: object keys count as strings too (an argument can hide a value in a key).
 * `includeNumbers`: numbers count as their JSON text (an id or account number passed as a number).
 */
export function walkStrings(value: unknown, options: { includeKeys?: boolean; includeNumbers?: boolean; limits?: WalkLimits } = {}): Walked {
  const limits = options.limits ?? DEFAULT_WALK_LIMITS;
  const strings: StringAt[] = [];
  let truncated = false;
  const visit = (node: unknown, path: string, depth: number, key: string): void => {
    if (strings.length >= limits.maxStrings) {
      truncated = true;
      return;
    }
    if (typeof node === 'string') {
      strings.push({ path, value: node, key });
      return;
    }
    if (options.includeNumbers && typeof node === 'number' && Number.isFinite(node)) {
      strings.push({ path, value: JSON.stringify(node), key });
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth >= limits.maxDepth) {
      truncated = true;
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, `${path}[${i}]`, depth + 1, key));
      return;
    }
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      const childPath = jsonPathChild(path, key);
      if (options.includeKeys && key.length > 0) {
        if (strings.length >= limits.maxStrings) {
          truncated = true;
          return;
        }
        strings.push({ path: `${childPath}#key`, value: key, key: '' });
      }
      visit(child, childPath, depth + 1, key);
    }
  };
  visit(value, '$', 0, '');
  return { strings, truncated };
}

/**
 * The strings of `walkStrings(value, { limits })` (no keys, no numbers), in the same order and
 * with the same `truncated`, without their paths: for a caller that only reads the values (the
 * taint memory remembering a result).
 */
export function walkStringValues(value: unknown, limits: WalkLimits = DEFAULT_WALK_LIMITS, withKeys = false): { values: string[]; keys: string[]; truncated: boolean } {
  const values: string[] = [];
  // The object key each string is the value of ("" at the root; array items inherit their array's), when asked.
  const keys: string[] = [];
  let truncated = false;
  const visit = (node: unknown, depth: number, key: string): void => {
    if (values.length >= limits.maxStrings) {
      truncated = true;
      return;
    }
    if (typeof node === 'string') {
      values.push(node);
      if (withKeys) keys.push(key);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth >= limits.maxDepth) {
      truncated = true;
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((item: unknown) => visit(item, depth + 1, key));
      return;
    }
    const object = node as Record<string, unknown>;
    for (const k of Object.keys(object)) visit(object[k], depth + 1, k);
  };
  visit(value, 0, '');
  return { values, keys, truncated };
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Paths go into findings, traces and logs, and keys come from hostile documents: anything outside
 * printable ASCII is written as a `\uXXXX` escape (still a JSON string), so a path never carries
 * an invisible or control character.
 */
export function jsonPathChild(path: string, key: string): string {
  if (PLAIN_KEY.test(key)) return `${path}.${key}`;
  const quoted = JSON.stringify(key).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${path}[${quoted}]`;
}
