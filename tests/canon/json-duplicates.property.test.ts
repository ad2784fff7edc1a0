import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonDuplicateKeyError, parseJsonText } from '../../src/canon/json.js';
import { parseStrictJson } from '../../src/canon/strict-json.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { seeded } from '../support/seeded.js';

/**
 * JSON text of `value` written the way other producers may write it: random whitespace, and each
 * string character sometimes as a \uXXXX escape (upper or lower case hex), so colons appear as `:`
 * or `\u003a`/`\u003A` inside strings and keys.
 */
function write(value: unknown, rnd: () => number, dup?: { node: object; name: string; extra: unknown }): string {
  const ws = () => [' ', '\n', '\t', '', '', ''][Math.floor(rnd() * 6)]!;
  const str = (s: string) => {
    let out = '"';
    for (const ch of s) {
      const code = ch.codePointAt(0)!;
      if (ch === '"' || ch === '\\' || code < 0x20 || (code <= 0xffff && rnd() < 0.25)) {
        const units = ch.length === 1 ? [code] : [ch.charCodeAt(0), ch.charCodeAt(1)];
        for (const u of units) {
          const hex = u.toString(16).padStart(4, '0');
          out += `\\u${rnd() < 0.5 ? hex : hex.toUpperCase()}`;
        }
      } else out += ch;
    }
    return `${out}"`;
  };
  const go = (v: unknown): string => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${go(x)}${ws()}`).join(`,${ws()}`)}]`;
    if (v !== null && typeof v === 'object') {
      const member = ([k, x]: [string, unknown]) => `${ws()}${str(k)}${ws()}:${ws()}${go(x)}${ws()}`;
      const members = Object.entries(v).map(member);
      if (dup && v === dup.node) {
        // The repeat goes after the first occurrence, anywhere up to the end of the object.
        const first = Object.keys(v).indexOf(dup.name);
        const at = first + 1 + Math.floor(rnd() * (members.length - first));
        members.splice(at, 0, member([dup.name, dup.extra]));
      }
      return `{${members.join(',')}}`;
    }
    return JSON.stringify(v);
  };
  return go(value);
}

/** Paths of every object in `value`, with the member names it holds (JSONPath, Ward's labels). */
function objects(value: unknown, path = '$', out: { path: string; keys: string[]; node: Record<string, unknown> }[] = []) {
  if (Array.isArray(value)) value.forEach((v, i) => objects(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object') {
    const node = value as Record<string, unknown>;
    out.push({ path, keys: Object.keys(node), node });
    for (const [k, v] of Object.entries(node)) objects(v, path + (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`), out);
  }
  return out;
}

const key = fc.oneof(fc.constantFrom('targets', 'simulate', 'a:b', '__proto__', 'x\\"y', 'ü', '\u003a'), fc.string({ maxLength: 6 }));
const json = fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const withColons = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 8 }).map((s) => s.replace(/a/g, ':')),
    fc.integer(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('parseJsonText: duplicate member names', () => {
  it('accepts any text without a repeated name, whatever its whitespace and escapes (\\u003a included)', () => {
    fc.assert(
      fc.property(fc.oneof(json, withColons), fc.integer(), (v, seed) => {
        const text = write(v, seeded(seed));
        expect(parseJsonText(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 600 },
    );
  });

  it('refuses a name repeated in any object at any depth, naming the key and the object', () => {
    let checked = 0;
    fc.assert(
      fc.property(fc.oneof(json, withColons, fc.dictionary(key, withColons, { minKeys: 1, maxKeys: 3 })), fc.nat(), fc.integer(), fc.oneof(json, withColons), (v, pick, seed, extra) => {
        const all = objects(v).filter((o) => o.keys.length > 0);
        if (all.length === 0) return;
        const target = all[pick % all.length]!;
        const name = target.keys[pick % target.keys.length]!;
        const text = write(v, seeded(seed), { node: target.node, name, extra });
        let thrown: unknown;
        try {
          parseJsonText(text);
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(JsonDuplicateKeyError);
        expect(thrown).toBeInstanceOf(SyntaxError);
        const dup = thrown as JsonDuplicateKeyError;
        // The first repetition in text order is reported: ours (the rest was written from plain
        // objects, and the repeat's own value is complete before any later object starts).
        expect(dup.key).toBe(name);
        expect(dup.path).toBe(target.path);
        expect(dup.message).toBe(`duplicate key ${JSON.stringify(name)} at ${target.path}`);
        checked++;
      }),
      { numRuns: 600 },
    );
    expect(checked).toBeGreaterThan(200);
  });

  it('cannot be hidden by \\u003a escapes, discarded subtrees or colons in strings', () => {
    // Each escaped colon lowers a naive "colons minus colons in strings" count by one.
    expect(() => parseJsonText('{"a":1,"a":2,"x":"\\u003a"}')).toThrow('duplicate key "a" at $');
    expect(() => parseJsonText('{"x":"\\u003A\\u003a","a":{"b":1},"a":{"b":1}}')).toThrow('duplicate key "a" at $');
    expect(() => parseJsonText('{"a":{"k:1":"v:2"},"a":3}')).toThrow('duplicate key "a" at $');
    expect(() => parseJsonText('{"a":{"b":1,"b":2},"a":3}')).toThrow('duplicate key "b" at $.a');
    expect(() => parseJsonText('[{"ok":1},{"t":[{"x":1,"x":1}]}]')).toThrow('duplicate key "x" at $[1].t[0]');
    expect(parseJsonText('{"a":"\\u003a","b":":","c\\u003a":"\\\\u003a"}')).toEqual({ a: ':', b: ':', 'c:': '\\u003a' });
  });

  it('refuses repeats that only a decoder sees: escapes, __proto__ and lone surrogates', () => {
    expect(() => parseJsonText('{"targets":[],"t\\u0061rgets":[1]}')).toThrow('duplicate key "targets" at $');
    expect(() => parseJsonText('{"__proto__":1,"__proto__":2}')).toThrow('duplicate key "__proto__" at $');
    // Two different lone surrogates both decode to U+FFFD, as Go decodes them.
    expect(() => parseJsonText('{"\\ud800":1,"\\udbff":2}')).toThrow(`duplicate key ${JSON.stringify('\ufffd')} at $`);
    expect(parseJsonText('{"\\ud800":1,"x":"\\udc00"}')).toEqual({ '\ufffd': 1, x: '\ufffd' });
  });

  it('labels paths unambiguously and gives the member path', () => {
    let err: JsonDuplicateKeyError | undefined;
    try {
      parseJsonText('{"a b":{"c.d":[0,{"k":1,"k":2}]}}');
    } catch (e) {
      err = e as JsonDuplicateKeyError;
    }
    expect(err?.path).toBe('$["a b"]["c.d"][1]');
    expect(err?.memberPath).toBe('$["a b"]["c.d"][1].k');
  });

  it('leaves invalid JSON to JSON.parse', () => {
    expect(() => parseJsonText('{"a":1,}')).toThrow(SyntaxError);
    expect(() => parseJsonText('{"a":1,}')).not.toThrow(JsonDuplicateKeyError);
  });
});

describe('parseStrictJson: the same parser, mapped to a WardError', () => {
  it('signed artifacts keep ERR_SIGNATURE_INVALID and their messages', () => {
    expect(() => parseStrictJson('{"verdict":"allow","verdict":"block"}')).toThrow('duplicate key "verdict" at $');
    expect(() => parseStrictJson('{')).toThrow(/^invalid JSON: /);
    try {
      parseStrictJson('{"a":1,"a":2}');
    } catch (err) {
      expect((err as WardError).code).toBe(ERROR_CODES.SIGNATURE_INVALID);
    }
  });

  it('takes the code and prefix of the input it reads, with the location as details', () => {
    let err: WardError | undefined;
    try {
      parseStrictJson('{"context":{"risk_class":"low","risk_class":"high"}}', ERROR_CODES.INTENT_PARSE, { prefix: 'parse intent json: ' });
    } catch (e) {
      err = e as WardError;
    }
    expect(err).toBeInstanceOf(WardError);
    expect(err!.code).toBe(ERROR_CODES.INTENT_PARSE);
    expect(err!.exitCode).toBe(6);
    expect(err!.message).toBe('parse intent json: duplicate key "risk_class" at $.context');
    expect(err!.details).toEqual({ duplicate_key: 'risk_class', duplicate_key_path: '$.context.risk_class' });
    expect(err!.hint).toContain('"risk_class"');
  });
});
