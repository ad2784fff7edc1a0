import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonDuplicateKeyError, parseJsonText } from '../../src/canon/json.js';
import { JsonDuplicateKeyError as ReferenceDuplicateKeyError, parseJsonText as referenceParse } from './json-reference.js';
import { seeded } from '../support/seeded.js';

/**
 * parseJsonText against the implementation its quick path was added to (json-reference.ts, kept
 * verbatim): every text gives the same value (same keys in the same order, same strings, -0 kept,
 * own `__proto__` members) or the same error (class, message, key, path), on random texts written
 * with random whitespace and escapes, repeated names, colons, lone surrogates, deep nesting and
 * invalid input.
 */

/**
 * A flat structural dump that tells apart what toEqual might not: -0, key order, prototypes, lone
 * surrogates. Iterative, so values nested 100,000 deep compare too.
 */
function dump(root: unknown): string[] {
  const out: string[] = [];
  const pending: unknown[] = [root];
  const END = Symbol('end');
  while (pending.length > 0) {
    const value = pending.pop();
    if (value === END) out.push('end');
    else if (typeof value === 'number') out.push(Object.is(value, -0) ? '-0' : `n${value}`);
    else if (typeof value === 'string') out.push(`s${Array.from({ length: value.length }, (_, i) => value.charCodeAt(i).toString(16)).join(',')}`);
    else if (Array.isArray(value)) {
      out.push(`array${value.length}`);
      pending.push(END);
      for (let i = value.length - 1; i >= 0; i--) pending.push(value[i]);
    } else if (value !== null && typeof value === 'object') {
      out.push(`object${Object.getPrototypeOf(value) === Object.prototype}`);
      pending.push(END);
      const keys = Object.keys(value);
      // Popped as key 0, value 0, key 1, ...
      for (let i = keys.length - 1; i >= 0; i--) pending.push((value as Record<string, unknown>)[keys[i] as string], keys[i]);
    } else out.push(String(value));
  }
  return out;
}

function outcome(parse: (text: string) => unknown, text: string): unknown {
  const duplicateClass = parse === referenceParse ? ReferenceDuplicateKeyError : JsonDuplicateKeyError;
  try {
    return { ok: dump(parse(text)) };
  } catch (err) {
    const e = err as Error & Partial<JsonDuplicateKeyError>;
    return { error: e.constructor.name, name: e.name, message: e.message, key: e.key, path: e.path, memberPath: e.memberPath, duplicate: e instanceof duplicateClass, syntax: e instanceof SyntaxError };
  }
}

function same(text: string): void {
  expect(outcome(parseJsonText, text)).toEqual(outcome(referenceParse, text));
}

/** JSON text of `value` with random whitespace, any character sometimes \u-escaped, and sometimes a member written twice. */
function write(value: unknown, rnd: () => number, duplicates: number): string {
  const ws = () => [' ', '\n', '\t', '\r', '', '', '', ''][Math.floor(rnd() * 8)]!;
  const str = (s: string) => {
    let out = '"';
    for (let i = 0; i < s.length; i++) {
      const u = s.charCodeAt(i);
      if (s[i] === '"' || s[i] === '\\' || u < 0x20 || rnd() < 0.15) {
        const hex = u.toString(16).padStart(4, '0');
        out += rnd() < 0.2 && s[i] === '"' ? '\\"' : `\\u${rnd() < 0.5 ? hex : hex.toUpperCase()}`;
      } else out += s[i];
    }
    return `${out}"`;
  };
  const go = (v: unknown): string => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${go(x)}${ws()}`).join(`,${ws()}`)}]`;
    if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      const members = entries.map(([k, x]) => `${ws()}${str(k)}${ws()}:${ws()}${go(x)}${ws()}`);
      if (entries.length > 0 && rnd() < duplicates) {
        const [k] = entries[Math.floor(rnd() * entries.length)]!;
        // The same name again, written with other escapes (or a name that only becomes equal once decoded).
        members.splice(Math.floor(rnd() * (members.length + 1)), 0, `${str(k)}:${go(rnd() < 0.5 ? null : v)}`);
      }
      return `{${members.join(',')}}`;
    }
    if (typeof v === 'number' && rnd() < 0.2) return ['1e400', '-0', '123456789012345678901234567890', '-0.0e-0', '5e-324', '1E+2'][Math.floor(rnd() * 6)]!;
    return JSON.stringify(v);
  };
  return go(value);
}

const unit = fc.constantFrom(...Array.from('ab:"\\/ é€\u0000\n'), '😀', '\ud800', '\udbff', '\udc00', '\ufeff', '\u2028');
const str = fc.string({ unit, maxLength: 6 });
const key = fc.oneof(fc.constantFrom('a', 'b', 'a:b', '__proto__', 'constructor', '0', '1', 'toString', '\ud800', '\udc00', '\ufffd', 'ü', 'u\u0308'), str);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    str,
    fc.integer(),
    fc.double(),
    fc.constantFrom(null, true, false),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(key, tie('v'), { maxKeys: 4 }),
  ),
})).v;

describe('parseJsonText equals the implementation it replaced', () => {
  it('on random texts, with and without repeated names, escapes, colons and lone surrogates', () => {
    const seen = { ok: 0, duplicate: 0 };
    fc.assert(
      fc.property(value, fc.integer(), fc.constantFrom(0, 0, 0.3, 1), (v, seed, duplicates) => {
        const text = write(v, seeded(seed), duplicates);
        same(text);
        const o = outcome(parseJsonText, text) as { ok?: unknown; duplicate?: boolean };
        if (o.ok !== undefined) seen.ok++;
        else if (o.duplicate) seen.duplicate++;
      }),
      { numRuns: 4000 },
    );
    expect(seen.ok).toBeGreaterThan(1000);
    expect(seen.duplicate).toBeGreaterThan(150);
  });

  it('on texts cut, spliced or prefixed (invalid JSON, a BOM, whitespace)', () => {
    fc.assert(
      fc.property(value, fc.integer(), fc.nat(), fc.constantFrom('cut', 'bom', 'ws', 'junk', 'trail'), (v, seed, at, how) => {
        const text = write(v, seeded(seed), 0.2);
        const i = text.length === 0 ? 0 : at % text.length;
        const mutated =
          how === 'cut' ? text.slice(0, i) : how === 'bom' ? `\ufeff${text}` : how === 'ws' ? ` \n\t\r${text} \n` : how === 'junk' ? `${text.slice(0, i)},${text.slice(i)}` : `${text}x`;
        same(mutated);
      }),
      { numRuns: 2000 },
    );
  });

  it('on hand-written adversarial texts', () => {
    const texts = [
      '{"a":1,"a":2}',
      '{"a":1,"\\u0061":2}',
      '{"targets":[],"t\\u0061rgets":[1]}',
      '{"a":"x:y","a":1}',
      '{"a":{"k:1":"v:2"},"a":3}',
      '{"x":"\\u003a","a":1,"a":2}',
      '{"x":"\\u003A\\u003a","a":{"b":1},"a":{"b":1}}',
      '{"a":"\\u003a","b":":","c\\u003a":"\\\\u003a"}',
      '{"a":"\\\\ud800","b":1}',
      '{"\\ud800":1,"\\udbff":2}',
      '{"\\ud800":1,"x":"\\udc00"}',
      '{"\\ud83d\\ude00":1,"😀":2}',
      '{"\\ud83d\\ude00":1}',
      '{"__proto__":1,"__proto__":2}',
      '{"__proto__":{"a":1}}',
      '{"constructor":1,"toString":2}',
      '{"1":1,"01":2,"1.0":3,"1":4}',
      '[1e400,-0,123456789012345678901234567890,5e-324]',
      '"\\ud800"',
      '"a:b"',
      '":"',
      '1',
      'null',
      '[]',
      '{}',
      ' \n{"a" : 1 }\t',
      '\ufeff{"a":1}',
      '{"a":1,}',
      '{"a":1 "b":2}',
      '',
      '{"a":"\u2028\u2029"}',
      `{"k":"${'\ud800'}"}`,
      `{"${'\udc00'}":1,"${'\ud800'}":2}`,
      '[{"ok":1},{"t":[{"x":1,"x":1}]}]',
      '{"a b":{"c.d":[0,{"k":1,"k":2}]}}',
      '{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}},"jsonrpc":"2.0","id":1}',
      '{"method":"tools/call","method":"tools/list","params":{},"jsonrpc":"2.0","id":1}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch","arguments":{"url":"https://x.example/a?b=c:d","url":"https://y"}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch","arguments":{"url":"https://x.example/"},"_meta":{"progressToken":1}}}',
    ];
    for (const text of texts) same(text);
  });

  it('on deep nesting, with and without a repeat at the bottom (no stack overflow in either)', () => {
    for (const depth of [100, 1000, 3000, 100_000]) {
      same(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
      same(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
      same(`${'{"a":'.repeat(depth)}{"b":1,"b":2}${'}'.repeat(depth)}`);
      same(`${'{"a":['.repeat(depth)}{"b:":":","\\u0062:":1}${']}'.repeat(depth)}`);
      same(`${'{"a":['.repeat(depth)}{"b:":":","c:":1}${']}'.repeat(depth)}`);
      same(`${'['.repeat(depth)}{"x":"\\ud800"}${']'.repeat(depth)}`);
    }
    expect(() => parseJsonText(`${'['.repeat(100_000)}{"x":1,"x":2}${']'.repeat(100_000)}`)).toThrow('duplicate key "x"');
  });
});
