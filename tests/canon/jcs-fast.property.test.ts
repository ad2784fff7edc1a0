import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jcs, MAX_JCS_DEPTH } from '../../src/canon/index.js';
import { jcsChecked } from '../../src/canon/jcs.js';

/**
 * `jcs` serializes in a fast pass and falls back to the checked pass (`jcsChecked`, the serializer
 * it had before) for anything the fast pass refuses. The two must agree on every input: the same
 * text, or the same error (code and message, with its path).
 */
function outcome(f: (v: unknown) => string, value: unknown): { text: string } | { code: unknown; message: string } {
  try {
    return { text: f(value) };
  } catch (err) {
    return { code: (err as { code?: unknown }).code, message: (err as Error).message };
  }
}

/** Code units that stress quoting: controls, quote, backslash, surrogates (paired and lone), U+2028, DEL. */
const unit = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0, max: 0x1f }),
  fc.constantFrom(0x22, 0x5c, 0x7f, 0x2028, 0x2029, 0xfeff, 0xffff),
  fc.integer({ min: 0xd800, max: 0xdfff }),
  fc.integer({ min: 0, max: 0xffff }),
);
const text = fc.array(unit, { maxLength: 10 }).map((units) => String.fromCharCode(...units));
const key = fc.oneof(text, fc.constantFrom('0', '1', '10', '9', '01', '-1', '__proto__', 'a', 'A', 'é', '\u{1f600}', ''), fc.nat(40).map(String));
const scalar = fc.oneof(
  text,
  fc.boolean(),
  fc.constant(null),
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, 1e21, 1e-7, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity),
);
/** Mostly JSON, sometimes not (undefined, functions, bigint, class instances, dates, sparse arrays). */
const oddity = fc.constantFrom<unknown>(undefined, () => 1, 10n, Symbol('s'), new Date(0), new Map(), Object.create(null), [, 1], new (class X {})());

const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('arr'), tie('obj'), tie('big'), oddity),
  arr: fc.array(tie('v'), { maxLength: 5 }),
  obj: fc.array(fc.tuple(key, tie('v')), { maxLength: 6 }).map(toObject),
  // More keys than the fast pass insertion-sorts.
  big: fc.array(fc.tuple(key, scalar), { minLength: 30, maxLength: 80 }).map(toObject),
})).v;

function toObject(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

function nested(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

describe('jcs fast pass', () => {
  it('gives the checked pass its text or its error on any input', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(outcome(jcs, v)).toEqual(outcome(jcsChecked, v));
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees at the depth limit and past it', () => {
    for (const depth of [MAX_JCS_DEPTH - 1, MAX_JCS_DEPTH, MAX_JCS_DEPTH + 1]) {
      for (const leaf of [1, 'x', NaN, {}, []]) {
        const v = nested(depth, leaf);
        expect(outcome(jcs, v)).toEqual(outcome(jcsChecked, v));
      }
    }
  });

  it('sorts many keys and numeric-looking keys by UTF-16 code units', () => {
    const keys = Array.from({ length: 100 }, (_, i) => String((i * 37) % 101));
    const obj = toObject(keys.map((k) => [k, k]));
    expect(jcs(obj)).toBe(jcsChecked(obj));
    expect(jcs({ b: 1, a: 2, '\u{1f600}': 3, '\uffff': 4, 10: 5, 9: 6 })).toBe('{"10":5,"9":6,"a":2,"b":1,"\u{1f600}":3,"\uffff":4}');
  });
});
