/**
 * Go `path.Match`: `*` matches any run of non-`/` characters, `?` one non-`/` character, `[...]`
 * a class (with `^` negation and ranges), `\` escapes. A malformed pattern matches nothing, which
 * for an allowlist fails closed and for a denylist is caught by policy review (the reference
 * returns ErrBadPattern and treats it as no match as well).
 */
export function goPathMatch(pattern: string, name: string): boolean {
  const compiled = compile(pattern);
  return compiled !== undefined && compiled.test(name);
}

const cache = new Map<string, RegExp | undefined>();
const deepCache = new Map<string, RegExp | undefined>();

/**
 * A path denylist's reading of a pattern with `**` segments: a whole `**` segment anywhere matches
 * zero or more segments (the pattern /home/STARSTAR/secrets, with STARSTAR for `**`, covers
 * /home/secrets and /home/a/b/secrets), as people who write one mean it; every other segment is a
 * Go `path.Match` glob. Go reads `**` as `*`, one segment: denylists take the wider reading and
 * allowlists keep Go's, so either way a list errs on the side of refusing (docs/policies.md
 * "Glob semantics").
 */
export function deepPathMatch(pattern: string, name: string): boolean {
  let compiled = deepCache.get(pattern);
  if (compiled === undefined && !deepCache.has(pattern)) {
    compiled = compileDeep(pattern);
    if (deepCache.size > 4096) deepCache.clear();
    deepCache.set(pattern, compiled);
  }
  return compiled !== undefined && compiled.test(name);
}

function compileDeep(pattern: string): RegExp | undefined {
  const segments = pattern.split('/');
  let re = '^';
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment === '**') {
      // Zero or more whole segments; at the start of a relative pattern, no leading slash.
      re += i === 0 ? '(?:[^/]+(?:/|$))*' : '(?:/[^/]+)*';
      continue;
    }
    const glob = compile(segment);
    if (glob === undefined) return undefined;
    re += (i === 0 ? '' : i === 1 && segments[0] === '**' ? '' : '/') + glob.source.slice(1, -1);
  }
  return safeRegExp(re + '$');
}

function compile(pattern: string): RegExp | undefined {
  if (cache.has(pattern)) return cache.get(pattern);
  let re = '^';
  let ok = true;
  for (let i = 0; i < pattern.length && ok; i++) {
    const ch = String.fromCodePoint(pattern.codePointAt(i)!);
    if (ch.length === 2) i++;
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else if (ch === '\\') {
      i++;
      if (i >= pattern.length) ok = false;
      else {
        const escaped = String.fromCodePoint(pattern.codePointAt(i)!);
        if (escaped.length === 2) i++;
        re += escapeRe(escaped);
      }
    } else if (ch === '[') {
      const cls = compileClass(pattern, i + 1);
      if (!cls) ok = false;
      else {
        re += cls.source;
        i = cls.end;
      }
    } else re += escapeRe(ch);
  }
  const result = ok ? safeRegExp(re + '$') : undefined;
  if (cache.size > 4096) cache.clear();
  cache.set(pattern, result);
  return result;
}

/** A `[...]` class starting after `[`: literal code points, `a-z` ranges, `\\` escapes, `^` negation. */
function compileClass(pattern: string, from: number): { source: string; end: number } | undefined {
  let i = from;
  let negate = false;
  if (pattern[i] === '^') {
    negate = true;
    i++;
  }
  let body = '';
  let count = 0;
  while (i < pattern.length && pattern[i] !== ']') {
    let cp = pattern.codePointAt(i)!;
    if (cp === 0x5c) {
      i++;
      if (i >= pattern.length) return undefined;
      cp = pattern.codePointAt(i)!;
    } else if (cp === 0x2d) return undefined;
    i += cp > 0xffff ? 2 : 1;
    body += `\\u{${cp.toString(16)}}`;
    if (pattern[i] === '-' && pattern[i + 1] !== ']' && i + 1 < pattern.length) {
      i++;
      let hi = pattern.codePointAt(i)!;
      if (hi === 0x5c) {
        i++;
        if (i >= pattern.length) return undefined;
        hi = pattern.codePointAt(i)!;
      }
      i += hi > 0xffff ? 2 : 1;
      if (hi < cp) return undefined;
      body += `-\\u{${hi.toString(16)}}`;
    }
    count++;
  }
  if (i >= pattern.length || count === 0) return undefined;
  return { source: `(?!/)[${negate ? '^' : ''}${body}]`, end: i };
}

function safeRegExp(source: string): RegExp | undefined {
  try {
    return new RegExp(source, 'su');
  } catch {
    return undefined;
  }
}

function escapeRe(ch: string): string {
  return `\\u{${ch.codePointAt(0)!.toString(16)}}`;
}

export function hasGlobMeta(pattern: string): boolean {
  return /[*?[\\]/.test(pattern);
}
