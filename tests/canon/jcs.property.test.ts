import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestJcs, jcs, sha256Hex } from '../../src/canon/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';

const RUNS = { numRuns: 400 };

/** Arbitrary JSON data with full-Unicode keys and strings (astral, U+E000..U+FFFF, controls). */
const json = fc.jsonValue({ stringUnit: 'binary', maxDepth: 8 });
const jsonAscii = fc.jsonValue({ maxDepth: 8 });
const anyJson = fc.oneof(json, jsonAscii);

/** Deterministic PRNG (mulberry32) so a failing permutation can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A deep copy whose objects get their keys inserted in a shuffled order. defineProperty keeps a
 * `__proto__` key an own data property, as JSON.parse makes it.
 */
function permuted(value: unknown, rand: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => permuted(v, rand));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const out = {};
  for (const key of keys) {
    Object.defineProperty(out, key, {
      value: permuted((value as Record<string, unknown>)[key], rand),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Independent reference: sort keys by explicit UTF-16 code-unit comparison, JSON.stringify scalars. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort((a, b) => {
      for (let i = 0; i < Math.min(a.length, b.length); i++) {
        const d = a.charCodeAt(i) - b.charCodeAt(i);
        if (d !== 0) return d;
      }
      return a.length - b.length;
    });
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('jcs properties (fast-check)', () => {
  it('is idempotent: jcs(JSON.parse(jcs(x))) === jcs(x)', () => {
    fc.assert(
      fc.property(anyJson, (x) => {
        const once = jcs(x);
        expect(jcs(JSON.parse(once))).toBe(once);
      }),
      RUNS,
    );
  });

  it('preserves the data: JSON.parse(jcs(x)) deep-equals the JSON round trip of x', () => {
    fc.assert(
      fc.property(anyJson, (x) => {
        expect(JSON.parse(jcs(x))).toEqual(JSON.parse(JSON.stringify(x)));
      }),
      RUNS,
    );
  });

  it('is independent of key insertion order', () => {
    fc.assert(
      fc.property(anyJson, fc.integer(), (x, seed) => {
        const shuffled = permuted(x, prng(seed));
        expect(shuffled).toEqual(x);
        expect(jcs(shuffled)).toBe(jcs(x));
      }),
      RUNS,
    );
  });

  it('digestJcs is stable across key permutations and equals sha256(jcs(x))', () => {
    fc.assert(
      fc.property(anyJson, fc.integer(), fc.integer(), (x, s1, s2) => {
        const digest = digestJcs(x);
        expect(digest).toMatch(/^[0-9a-f]{64}$/);
        expect(digestJcs(permuted(x, prng(s1)))).toBe(digest);
        expect(digestJcs(permuted(x, prng(s2)))).toBe(digest);
        expect(sha256Hex(jcs(x))).toBe(digest);
      }),
      RUNS,
    );
  });

  it('agrees with an independent sorted-keys + JSON.stringify reference', () => {
    fc.assert(
      fc.property(anyJson, (x) => {
        expect(jcs(x)).toBe(reference(x));
      }),
      RUNS,
    );
  });

  it('agrees with canonicalize@4 (the library it replaced), including on lone surrogates, which both refuse', () => {
    // Full UTF-16 code units, so unpaired surrogates occur in keys and strings.
    const units = fc.jsonValue({ stringUnit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxDepth: 6 });
    let refused = 0;
    fc.assert(
      fc.property(fc.oneof(units, anyJson), (x) => {
        let expected: string | undefined;
        try {
          expected = canonicalize(x);
        } catch {
          expected = undefined;
        }
        if (expected === undefined) {
          refused++;
          expect(() => jcs(x)).toThrow(expect.objectContaining({ code: ERROR_CODES.JCS_INVALID_VALUE }));
        } else expect(jcs(x)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
    expect(refused).toBeGreaterThan(0);
  });

  it('writes every finite double as ECMAScript Number::toString and reads back the same double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const text = jcs(d);
        expect(text).toBe(String(d));
        expect(Object.is(Number(text), d === 0 ? 0 : d)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips any well-formed string and rejects exactly the ill-formed ones', () => {
    const codeUnit = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }),
      fc.integer({ min: 0xd800, max: 0xdfff }),
      fc.integer({ min: 0, max: 0x7f }),
    );
    const utf16 = fc.array(codeUnit, { maxLength: 12 }).map((units) => String.fromCharCode(...units));
    fc.assert(
      fc.property(utf16, (s) => {
        if (s.isWellFormed()) {
          expect(JSON.parse(jcs(s))).toBe(s);
          expect(JSON.parse(jcs({ [s]: s }))).toEqual({ [s]: s });
        } else {
          for (const value of [s, { [s]: 1 }, [s]]) {
            let caught: unknown;
            try {
              jcs(value);
            } catch (err) {
              caught = err;
            }
            expect(caught).toBeInstanceOf(WardError);
            expect((caught as WardError).code).toBe(ERROR_CODES.JCS_INVALID_VALUE);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
