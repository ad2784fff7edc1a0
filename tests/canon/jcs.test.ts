import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { digestJcs, jcs, MAX_JCS_DEPTH, sha256Hex } from '../../src/canon/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { bitsToDouble, es6Lines, SERIAL_COUNT, STATIC_COUNT } from './es6-numbers.js';
import {
  fixtureBytes,
  fixtureJson,
  fixtureText,
  jcsFixtures,
  listFiles,
  sharedJcsVectors,
} from './fixtures.js';

/** Assert that `fn` throws a WardError with `code`, and return it. */
function expectWardError(fn: () => unknown, code: string): WardError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, 'expected a WardError').toBeInstanceOf(WardError);
  expect((caught as WardError).code).toBe(code);
  return caught as WardError;
}

const OFFICIAL = ['arrays', 'french', 'structures', 'unicode', 'values', 'weird'];

describe('in-repo JCS fixtures', () => {
  it('contain every vector file', () => {
    const files = listFiles(jcsFixtures);
    expect(files).toContain('SOURCE.txt');
    for (const name of OFFICIAL) {
      expect(files).toContain(`input/${name}.json`);
      expect(files).toContain(`output/${name}.json`);
      expect(files).toContain(`outhex/${name}.txt`);
    }
    for (const f of [
      'numbers/appendix-b.json',
      'numbers/edge-cases.json',
      'numbers/es6-testfile-checksums.json',
      'numbers/es6-testfile-first1000.txt',
      'strings/string-cases.json',
    ]) {
      expect(files).toContain(f);
    }
  });


  it('are byte-identical to ../shared/vectors/jcs wherever that copy exists (CI has it beside the clone)', () => {
    const shared = listFiles(sharedJcsVectors);
    const ours = new Set(listFiles(jcsFixtures));
    for (const rel of shared) {
      expect(ours.has(rel), `fixtures/jcs/${rel} is missing`).toBe(true);
      const original = readFileSync(path.join(sharedJcsVectors, rel));
      expect(fixtureBytes(rel).equals(original), `fixtures/jcs/${rel} differs from the shared copy`).toBe(true);
    }
    expect(ours.size).toBeGreaterThanOrEqual(shared.length);
  });
});

describe('RFC 8785 official vectors (cyberphone testdata)', () => {
  it.each(OFFICIAL)('%s: JSON.parse -> jcs is byte-exact with output/ and outhex/', (name) => {
    const input = JSON.parse(fixtureText(`input/${name}.json`)) as unknown;
    const out = Buffer.from(jcs(input), 'utf8');
    expect(out.equals(fixtureBytes(`output/${name}.json`))).toBe(true);
    const hex = fixtureText(`outhex/${name}.txt`).trim().split(/\s+/).join('');
    expect(out.toString('hex')).toBe(hex);
  });
});

interface AppendixB {
  cases: { ieee754: string; expected: string | null; comment?: string }[];
}

describe('RFC 8785 Appendix B number serialization', () => {
  const { cases } = fixtureJson<AppendixB>('numbers/appendix-b.json');

  it('has the 26 RFC samples plus 3 extras', () => {
    expect(cases).toHaveLength(29);
  });

  it.each(cases.map((c) => [c.ieee754, c.expected, c.comment ?? ''] as const))(
    '%s -> %s %s',
    (ieee754, expected) => {
      const value = bitsToDouble(BigInt(`0x${ieee754}`));
      if (expected === null) {
        expectWardError(() => jcs(value), ERROR_CODES.JCS_INVALID_VALUE);
        expectWardError(() => jcs({ n: value }), ERROR_CODES.JCS_INVALID_VALUE);
        expectWardError(() => jcs([value]), ERROR_CODES.JCS_INVALID_VALUE);
        return;
      }
      expect(jcs(value)).toBe(expected);
      expect(jcs([value])).toBe(`[${expected}]`);
      expect(jcs({ n: value })).toBe(`{"n":${expected}}`);
    },
  );
});

interface EdgeCases {
  cases: { json: string; expected: string | null; comment?: string }[];
}

describe('number edge cases (project vectors)', () => {
  const { cases } = fixtureJson<EdgeCases>('numbers/edge-cases.json');

  it('has 27 cases', () => {
    expect(cases).toHaveLength(27);
  });

  it.each(cases.map((c) => [c.json, c.expected] as const))('%s -> %s', (json, expected) => {
    const value = JSON.parse(json) as unknown;
    const nested = JSON.parse(`{"v":[${json}]}`) as unknown;
    if (expected === null) {
      expectWardError(() => jcs(value), ERROR_CODES.JCS_INVALID_VALUE);
      expectWardError(() => jcs(nested), ERROR_CODES.JCS_INVALID_VALUE);
      return;
    }
    expect(jcs(value)).toBe(expected);
    expect(jcs(nested)).toBe(`{"v":[${expected}]}`);
  });
});

interface StringCases {
  cases: { name: string; json: string; expected: string | null }[];
}

describe('string cases (project vectors)', () => {
  const { cases } = fixtureJson<StringCases>('strings/string-cases.json');

  it('has 14 cases, 6 of which must be rejected', () => {
    expect(cases).toHaveLength(14);
    expect(cases.filter((c) => c.expected === null)).toHaveLength(6);
  });

  it.each(cases.map((c) => [c.name, c.json, c.expected] as const))('%s', (_name, json, expected) => {
    const value = JSON.parse(json) as unknown;
    if (expected === null) {
      const err = expectWardError(() => jcs(value), ERROR_CODES.JCS_INVALID_VALUE);
      expect(err.message).toMatch(/^canonicalize: (string|key) with a lone surrogate is not JSON at \$/);
      return;
    }
    expect(jcs(value)).toBe(expected);
  });

  it('rejects lone surrogates that JS string literals can produce directly', () => {
    for (const bad of ['\ud800', 'x\udfff', '\ude02\ud83d', '\ud83d']) {
      expectWardError(() => jcs(bad), ERROR_CODES.JCS_INVALID_VALUE);
      expectWardError(() => jcs({ [bad]: 1 }), ERROR_CODES.JCS_INVALID_VALUE);
      expectWardError(() => jcs([[bad]]), ERROR_CODES.JCS_INVALID_VALUE);
    }
  });
});

interface Checksums {
  checksums: { lines: number; bytes: number; sha256: string }[];
}

describe('ES6 number test file (cyberphone es6testfile100m.txt prefixes)', () => {
  const { checksums } = fixtureJson<Checksums>('numbers/es6-testfile-checksums.json');
  /**
   * Published prefixes checked: 10^3, 10^4 and 10^5 lines (10^5 takes ~0.1 s). Set
   * WARD_JCS_ES6_LINES=1000000 (or up to 100000000, ~2 min) to check longer prefixes.
   */
  const MAX_LINES = Math.max(100_000, Number(process.env.WARD_JCS_ES6_LINES ?? 0) || 0);

  it('regenerates the first 1000 lines exactly', () => {
    const expected = fixtureText('numbers/es6-testfile-first1000.txt');
    let text = '';
    let n = 0;
    for (const line of es6Lines(jcs)) {
      text += line;
      if (++n === 1000) break;
    }
    expect(STATIC_COUNT).toBe(168);
    expect(SERIAL_COUNT).toBe(2000);
    expect(text).toBe(expected);
  });

  it(`matches the published SHA-256 of the first 10^3 … ${MAX_LINES} lines`, { timeout: 600_000 }, () => {
    const targets = checksums.filter((c) => c.lines <= MAX_LINES).sort((a, b) => a.lines - b.lines);
    expect(targets.map((c) => c.lines).slice(0, 3)).toEqual([1000, 10_000, 100_000]);
    const hash = createHash('sha256');
    let lines = 0;
    let bytes = 0;
    let next = 0;
    for (const line of es6Lines(jcs)) {
      hash.update(line);
      bytes += line.length; // the lines are ASCII
      lines++;
      const target = targets[next]!;
      if (lines === target.lines) {
        expect({ lines, bytes, sha256: hash.copy().digest('hex') }).toEqual(target);
        if (++next === targets.length) break;
      }
    }
    expect(next).toBe(targets.length);
  });
});

describe('spec vectors (gate.md §11 V7)', () => {
  it('the context-envelope records canonicalize to the spec bytes and digest', () => {
    const canonical =
      '[{"content_digest":"2222222222222222222222222222222222222222222222222222222222222222","immutability":"immutable","query_digest":"1111111111111111111111111111111111111111111111111111111111111111","redaction_mode":"hashes","ref_id":"ctx-a","retrieved_at":"2026-03-12T11:59:55Z","source_locator":"file:///repo/context.md","source_type":"doc"},{"content_digest":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","freshness_sla_seconds":300,"immutability":"unknown","query_digest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","redaction_mode":"hashes","ref_id":"ctx-b","retrieval_params":{"q":"x<y","top_k":5},"retrieved_at":"2026-03-12T10:59:00.5Z","sensitivity_label":"internal","source_locator":"docs://b","source_type":"doc_store"}]';
    expect(jcs(JSON.parse(canonical))).toBe(canonical);
    expect(digestJcs(JSON.parse(canonical))).toBe('793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f');
    expect(digestJcs([])).toBe('4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
  });

  it('the signed trace minus its signature hashes to signed_digest', () => {
    const trace = JSON.parse(
      '{"schema_id":"gait.gate.trace","schema_version":"1.0.0","created_at":"2026-02-18T00:00:00Z","observed_at":"2026-11-21T21:11:28.455778037Z","producer_version":"0.0.0-dev","trace_id":"98c069640be42974e73b8b6b","event_id":"5db2362d8eb9b75a9265737a","correlation_id":"abc","tool_name":"tool.write","args_digest":"3ce5713f41f9b6812880cac570b0f8ce318c7afff371873f241884729e518370","intent_digest":"5a851409b8a555437e75559fdae924b969b53b3e9d5dce1806ac4e005ebd8d2b","policy_digest":"a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666","policy_id":"gait.gate.policy","policy_version":"1.0.0","verdict":"block","context_set_digest":"793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f","context_evidence_mode":"required","context_ref_count":2,"context_source":"context_envelope","violations":["context_freshness_violation"],"latency_ms":1.25,"relationship":{"parent_ref":{"kind":"session","id":"sess-tier11"},"entity_refs":[{"kind":"agent","id":"agent.scenario"},{"kind":"policy","id":"a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666"},{"kind":"tool","id":"tool.write"},{"kind":"trace","id":"98c069640be42974e73b8b6b"}],"policy_ref":{"policy_id":"gait.gate.policy","policy_version":"1.0.0","policy_digest":"a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666"},"agent_chain":[{"identity":"agent.scenario","role":"requester"}],"edges":[{"kind":"calls","from":{"kind":"agent","id":"agent.scenario"},"to":{"kind":"tool","id":"tool.write"}},{"kind":"governed_by","from":{"kind":"tool","id":"tool.write"},"to":{"kind":"policy","id":"a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666"}}],"related_entity_ids":["98c069640be42974e73b8b6b","a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666","agent.scenario","tool.write"]},"signature":{"alg":"ed25519","key_id":"65b60673d6ed884bf01c2c222d82ada0740f29ac3355d6a925c81f17f47a27b8","sig":"zoA53VOSgtzfjvgnWq9G4rm5vBWAM8i/djnGbcd34/1y3DQmbtYePaB5g5TeoyTP/N5f9jxRp1k5Fq2TjcqZDA==","signed_digest":"f831a095c92c132b02f706164393b7c87f870bb548f5619c9ecf341873713e03"}}',
    ) as Record<string, unknown>;
    const { signature, ...unsigned } = trace;
    expect(digestJcs(unsigned)).toBe((signature as { signed_digest: string }).signed_digest);
    expect(sha256Hex(jcs(unsigned))).toBe('f831a095c92c132b02f706164393b7c87f870bb548f5619c9ecf341873713e03');
  });
});

/** `levels` nested containers around `inner`: nest(2, 0, 'array') is [[0]]. */
function nest(levels: number, inner: unknown, kind: 'array' | 'object'): unknown {
  let value = inner;
  for (let i = 0; i < levels; i++) value = kind === 'array' ? [value] : { k: value };
  return value;
}

describe('jcs() wrapper: only plain JSON data is canonicalized', () => {
  it('returns a string, with keys sorted by UTF-16 code units and -0 written as 0', () => {
    const out = jcs({ b: [true, null, -0, 1.5], a: 'x', '\u20ac': 1, '\ud83d\ude02': 2, '\ufb33': 3 });
    expect(typeof out).toBe('string');
    expect(out).toBe('{"a":"x","b":[true,null,0,1.5],"\u20ac":1,"\ud83d\ude02":2,"\ufb33":3}');
    expect(jcs('plain')).toBe('"plain"');
    expect(jcs(null)).toBe('null');
    expect(jcs(false)).toBe('false');
    expect(jcs([])).toBe('[]');
    expect(jcs({})).toBe('{}');
  });

  it('accepts null-prototype objects', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.b = 1;
    o.a = 2;
    expect(jcs(o)).toBe('{"a":2,"b":1}');
  });

  it('does not mutate its input', () => {
    const input = { z: 1, a: { y: [3, 2, 1], b: 'c' } };
    const before = JSON.stringify(input);
    jcs(input);
    expect(JSON.stringify(input)).toBe(before);
    expect(Object.keys(input)).toEqual(['z', 'a']);
  });

  it.each([
    ['a function', () => 1],
    ['a function in an object (canonicalize@4 would emit "b":undefined)', { a: 1, b: () => 1 }],
    ['a function in an array (canonicalize@4 would emit [,1])', [() => 1, 1]],
    ['an object with a toJSON method', { toJSON: () => 'x' }],
    ['undefined', undefined],
    ['an undefined property (JSON.stringify would drop it)', { a: undefined }],
    ['an undefined array element (JSON.stringify would write null)', [undefined]],
    ['a bigint', 10n],
    ['a nested bigint', { n: [1n] }],
    ['a symbol', Symbol('s')],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', { x: -Infinity }],
    ['a sparse array', [1, , 3]], // eslint-disable-line no-sparse-arrays
    ['an array of holes', new Array(2)],
    ['a Date', new Date(0)],
    ['a nested Date (JSON.stringify would call toJSON)', { at: new Date(0) }],
    ['a Map', new Map([['a', 1]])],
    ['a Set', new Set([1])],
    ['a class instance', new (class Point {
      x = 1;
    })()],
    ['a boxed string', new String('s')],
    ['a boxed number', new Number(1)],
    ['a RegExp', /x/],
    ['a Uint8Array', new Uint8Array([1])],
    ['a Buffer', Buffer.from('x')],
    ['an Error', new Error('x')],
  ])('rejects %s with ERR_JCS_INVALID_VALUE', (_label, value) => {
    const err = expectWardError(() => jcs(value), ERROR_CODES.JCS_INVALID_VALUE);
    expect(err.message).toMatch(/^canonicalize: /);
  });

  it('says where the offending value is', () => {
    expect(expectWardError(() => jcs({ a: [1, { b: () => 1 }] }), ERROR_CODES.JCS_INVALID_VALUE).message).toBe(
      'canonicalize: function is not JSON at $.a[1].b',
    );
    expect(expectWardError(() => jcs([0, [1, , 3]]), ERROR_CODES.JCS_INVALID_VALUE).message).toBe( // eslint-disable-line no-sparse-arrays
      'canonicalize: sparse array is not JSON at $[1][1]',
    );
    expect(expectWardError(() => jcs({ x: new Map() }), ERROR_CODES.JCS_INVALID_VALUE).message).toBe(
      'canonicalize: not a plain object is not JSON at $.x',
    );
    expect(expectWardError(() => jcs(NaN), ERROR_CODES.JCS_INVALID_VALUE).message).toBe(
      'canonicalize: non-finite number is not JSON at $',
    );
  });

  it(`accepts ${MAX_JCS_DEPTH} nested containers and rejects ${MAX_JCS_DEPTH + 1} with ERR_JCS_TOO_DEEP`, () => {
    expect(MAX_JCS_DEPTH).toBe(128);
    for (const kind of ['array', 'object'] as const) {
      for (const inner of [0, 'x', null]) {
        expect(() => jcs(nest(MAX_JCS_DEPTH, inner, kind))).not.toThrow();
        expectWardError(() => jcs(nest(MAX_JCS_DEPTH + 1, inner, kind)), ERROR_CODES.JCS_TOO_DEEP);
      }
      // The innermost container counts even when empty.
      expect(() => jcs(nest(MAX_JCS_DEPTH - 1, kind === 'array' ? [] : {}, kind))).not.toThrow();
      expectWardError(() => jcs(nest(MAX_JCS_DEPTH, kind === 'array' ? [] : {}, kind)), ERROR_CODES.JCS_TOO_DEEP);
    }
    expect(jcs(nest(3, 7, 'array'))).toBe('[[[7]]]');
    expect(jcs(nest(MAX_JCS_DEPTH, 1, 'array'))).toBe('['.repeat(128) + '1' + ']'.repeat(128));
  });

  it('counts mixed array/object nesting and reports the path of the first container too deep', () => {
    let value: unknown = {};
    for (let i = 0; i < MAX_JCS_DEPTH; i++) value = i % 2 ? { k: value } : [value];
    const err = expectWardError(() => jcs(value), ERROR_CODES.JCS_TOO_DEEP);
    expect(err.message).toMatch(/^canonicalize: nesting deeper than 128 at \$(\[0\]|\.k)+$/);
    expect(err.exitCode).toBe(6);
  });

  it('rejects far deeper input (where canonicalize@4 itself would overflow the stack) cleanly', () => {
    expectWardError(() => jcs(nest(100_000, 1, 'array')), ERROR_CODES.JCS_TOO_DEEP);
    expectWardError(() => jcs(JSON.parse('['.repeat(5000) + ']'.repeat(5000))), ERROR_CODES.JCS_TOO_DEEP);
  });

  it('rejects circular structures instead of recursing forever', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expectWardError(() => jcs(a), ERROR_CODES.JCS_TOO_DEEP);
    const arr: unknown[] = [];
    arr.push(arr);
    expectWardError(() => jcs(arr), ERROR_CODES.JCS_TOO_DEEP);
  });

  it('accepts a shared (non-circular) subobject and writes it each time', () => {
    const shared = { b: 1 };
    expect(jcs({ x: shared, y: [shared, shared] })).toBe('{"x":{"b":1},"y":[{"b":1},{"b":1}]}');
  });
});
