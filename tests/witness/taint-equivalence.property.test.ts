import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldForMatch } from '../../src/witness/normalize.js';
import { base64Tokens, decodeBase64Utf8, DEFAULT_TAINT_LIMITS, TaintMemory, type TaintHit, type TaintLimits } from '../../src/witness/taint.js';
import { TaintMemory as ReferenceTaintMemory } from './taint-reference.js';

/**
 * The witness's taint memory against the implementation it replaced (taint-reference.ts, kept
 * verbatim with its walk): with the same key, the same results remembered and the same arguments
 * matched, every argument the reference found carrying a result's value (trace, tool, path) is
 * found (issue 27 made the memory normalize and decode more, so it finds more; its own property
 * tests are in taint-transforms.property.test.ts).
 */

/** Values a tool might return: tokens, paths, URLs, lines with JSON-hostile and non-ASCII characters. */
const unit = fc.constantFrom(...Array.from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:+=%"\\ \n\r\té€😀'), '\ud800', '\udc00');
const valueArb = fc.string({ unit, minLength: 10, maxLength: 48 });

function utf8Base64(text: string, url: boolean): string {
  return Buffer.from(text).toString(url ? 'base64url' : 'base64');
}

/** One way an argument might carry (part of) a remembered value. */
const carrier = fc.oneof(
  fc.constant('raw'),
  fc.constant('json1'),
  fc.constant('json2'),
  fc.constant('json3'),
  fc.constant('url'),
  fc.constant('form'),
  fc.constant('base64'),
  fc.constant('base64url'),
  fc.constant('url-of-json'),
  fc.constant('json-of-url'),
  fc.constant('crlf'),
);

function carry(value: string, how: string): string {
  switch (how) {
    case 'json1':
      return JSON.stringify({ v: value });
    case 'json2':
      return JSON.stringify({ p: JSON.stringify({ v: value }) });
    case 'json3':
      return JSON.stringify(JSON.stringify(JSON.stringify(value)));
    case 'url':
      return `https://x.example/?q=${encodeURIComponent(value.toWellFormed())}`;
    case 'form':
      return new URLSearchParams({ d: value.toWellFormed() }).toString();
    case 'base64':
      return `payload=${utf8Base64(`x ${value} y`, false)}`;
    case 'base64url':
      return `p.${utf8Base64(value, true)}.sig`;
    case 'url-of-json':
      return encodeURIComponent(JSON.stringify({ v: value }).toWellFormed());
    case 'json-of-url':
      return JSON.stringify({ u: `https://x/?a=${encodeURIComponent(value.toWellFormed())}` });
    case 'crlf':
      return value.replace(/\n/g, '\r\n');
    default:
      return value;
  }
}

interface Op {
  kind: 'remember' | 'match';
  trace: number;
  tool: number;
  shape: number;
  picks: number[];
  hows: string[];
  noise: string[];
  slice: [number, number];
}

const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom('remember', 'match', 'match'),
  trace: fc.nat({ max: 30 }),
  tool: fc.nat({ max: 2 }),
  shape: fc.nat({ max: 9 }),
  picks: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
  hows: fc.array(carrier, { minLength: 1, maxLength: 4 }),
  noise: fc.array(fc.string({ maxLength: 20 }), { minLength: 1, maxLength: 3 }),
  slice: fc.tuple(fc.nat({ max: 6 }), fc.nat({ max: 6 })),
});

/** A tool result holding some of the values, in one of several shapes. */
function resultOf(values: string[], op: Op): unknown {
  const text = values.join(op.shape % 2 ? '\n' : ' ');
  switch (op.shape % 5) {
    case 0:
      return { content: [{ type: 'text', text }] };
    case 1:
      return { content: values.map((v) => ({ type: 'text', text: v })), structuredContent: { n: 1234567890123456, s: values[0] } };
    case 2:
      return { content: [{ type: 'text', text: JSON.stringify({ k: text, list: values }) }] };
    case 3:
      return { code: -32000, message: `failed: ${text}`, data: { lines: values } };
    default:
      return { content: [{ type: 'text', text: values.map((v, i) => `KEY_${i}=${v}`).join('\n') }] };
  }
}

/** Arguments carrying some of the values (whole or cut), in strings, keys, arrays, numbers and nesting. */
function argsOf(values: string[], op: Op): unknown {
  const [a, b] = op.slice;
  const carried = values.map((v, i) => {
    const cut = (op.shape + i) % 3 === 0 ? v.slice(a, v.length - b) : v;
    return `${op.noise[i % op.noise.length]}${carry(cut, op.hows[i % op.hows.length] as string)}${op.noise[(i + 1) % op.noise.length]}`;
  });
  switch (op.shape % 6) {
    case 0:
      return { text: carried.join(' ') };
    case 1:
      return { a: carried[0], list: carried.slice(1), n: 4012345678901234, short: 'x' };
    case 2:
      return { headers: Object.fromEntries(carried.map((c, i) => [c, i])) };
    case 3:
      return { nested: { arr: [0, { body: carried }, [[carried.join('\n')]]] } };
    case 4:
      return { [carried[0] as string]: { 'odd key\u202e': carried.slice(1), '': carried[0] } };
    default:
      return carried.join('');
  }
}

/** Hits seen over a test, to show the runs exercise them. */
const seen = { hits: 0, encodings: new Set<string>() };

/** (trace, tool, path) of each hit: what a decision uses (the encoding names only the first way found). */
const keysOf = (hits: { traceId: string; toolName: string; argPath: string }[]) => new Set(hits.map((h) => `${h.traceId} ${h.toolName} ${h.argPath}`));

/**
 * Every (trace, tool, path) the old implementation reported is reported, unless the new one names
 * `maxSourcesPerValue` (4) or more earlier results at that path: it remembers more (a token-like
 * result of 12 to 15 characters alone, a value spelled otherwise), so a value can have been seen in
 * more results since, and only the 4 most recent are named (docs/witness.md "Limits"). The path is
 * always hit.
 */
function expectSuperset(after: TaintHit[], before: TaintHit[]): void {
  const got = keysOf(after);
  const sourcesAt = new Map<string, Set<string>>();
  for (const h of after) sourcesAt.set(h.argPath, (sourcesAt.get(h.argPath) ?? new Set()).add(`${h.traceId} ${h.toolName}`));
  for (const h of before) {
    const k = `${h.traceId} ${h.toolName} ${h.argPath}`;
    if (!got.has(k)) expect(sourcesAt.get(h.argPath)?.size ?? 0, k).toBeGreaterThanOrEqual(DEFAULT_TAINT_LIMITS.maxSourcesPerValue);
  }
}

function run(limits: Partial<TaintLimits>, pool: string[], ops: Op[]): void {
  const key = new Uint8Array(32).fill(9);
  const before = new ReferenceTaintMemory(limits, key);
  const after = new TaintMemory(limits, key);
  for (const op of ops) {
    const values = op.picks.map((p) => pool[p % pool.length] as string);
    if (op.kind === 'remember') {
      const source = { traceId: `t${op.trace}`, toolName: `tool${op.tool}` };
      const result = resultOf(values, op);
      before.remember(result, source);
      after.remember(result, source);
    } else {
      const args = argsOf(values, op);
      const hits = before.match(args);
      expectSuperset(after.match(args), hits);
      seen.hits += hits.length;
      for (const h of hits) seen.encodings.add(h.encoding);
    }
  }
}

/**
 * Values whose candidates keep enough information once normalized (case folded, spaces removed):
 * the witness no longer remembers a line like `a b c d e f g h i`, which normalizes to 9
 * characters, nor the value of a `NAME=value` line that spaces bring to 12 characters
 * (`X=aa<TAB>aaaacLjaU` normalizes to 11). Both the lines and those values are checked, and so is
 * the text after every `=` or `:` (`=a= aaaaaZ€57` joined after another line is the assignment
 * `…l =a= aaaaaZ€57`, whose value `a= aaaaaZ€57` folds to 11).
 */
const robust = (v: string) =>
  // Every text after an `=` or `:` of a line: a line of one value joined to another's (`x =a= …`) has its assignment value there.
  [v, ...v.split(/\r\n|\r|\n/)].flatMap((l) => [l, ...l.split(/[=:]/).slice(1), ...[...l.matchAll(/[=:]/g)].map((m) => l.slice(m.index + 1))]).every((part) => {
    const t = part.trim();
    return t.length < 12 || (foldForMatch(t).length >= 12 && new Set(foldForMatch(t)).size >= 6);
  });

describe('TaintMemory finds at least what the implementation it replaced found (normalisation and decodings only add)', () => {
  it('on random results and arguments that carry their values (raw, escaped, percent- and base64-encoded, cut, in keys)', () => {
    fc.assert(
      fc.property(fc.array(valueArb.filter(robust), { minLength: 1, maxLength: 12 }), fc.array(opArb, { minLength: 1, maxLength: 25 }), fc.boolean(), (pool, ops, huge) => {
        // A memory allowed more values than 16 bits count keeps 32-bit anchor counts.
        run(huge ? { maxValues: 100_000 } : {}, pool, ops);
      }),
      { numRuns: 300 },
    );
    expect(seen.hits).toBeGreaterThan(500);
    expect([...seen.encodings].sort()).toEqual(['base64_decoded', 'json_unescaped', 'raw', 'url_decoded']);
  });

  it('on deep and wide arguments and results (the walk bounds)', () => {
    const key = new Uint8Array(32).fill(5);
    const before = new ReferenceTaintMemory({}, key);
    const after = new TaintMemory({}, key);
    const secret = 'sk_live_51HxYzAbCdEf0123';
    before.remember({ content: [{ type: 'text', text: secret }] }, { traceId: 't', toolName: 'x' });
    after.remember({ content: [{ type: 'text', text: secret }] }, { traceId: 't', toolName: 'x' });
    for (const depth of [62, 63, 64, 65, 70]) {
      let deep: unknown = secret;
      for (let i = 0; i < depth; i++) deep = i % 2 ? [deep] : { [`k${i}`]: deep };
      expect(keysOf(after.match(deep))).toEqual(keysOf(before.match(deep)));
      expect(keysOf(after.match({ [secret]: deep }))).toEqual(keysOf(before.match({ [secret]: deep })));
    }
    // Results at and past the walk's bounds (depth 64, 100,000 strings): the same `dropped`.
    for (const depth of [62, 63, 64, 65, 70]) {
      let deep: unknown = `${secret}-${depth}`;
      for (let i = 0; i < depth; i++) deep = i % 2 ? [deep, null] : { [`k${i}`]: deep, n: 1 };
      expect(after.remember(deep, { traceId: `d${depth}`, toolName: 'x' }).dropped).toBe(before.remember(deep, { traceId: `d${depth}`, toolName: 'x' }).dropped);
    }
    for (const [count, tail] of [
      [99_999, []],
      [100_000, []],
      [100_000, [null]],
      [100_000, [7]],
      [100_001, []],
    ] as [number, unknown[]][]) {
      const wide = [...Array.from({ length: count }, (_, i) => (i % 1000 === 0 ? `wide-value-${i}-${secret}` : 'x')), ...tail];
      const a = after.remember({ wide }, { traceId: `w${count}`, toolName: 'x' });
      const b = before.remember({ wide }, { traceId: `w${count}`, toolName: 'x' });
      expect(a.dropped > 0).toBe(b.dropped > 0);
    }
    // More base64 tokens than are decoded (256), then the value escaped or percent-encoded after them.
    const tokens = Array.from({ length: 300 }, (_, i) => `Tok${String(i).padStart(13, '0')}`).join(' ');
    const spaced = 'c0rrect horse "battery" staple é';
    before.remember({ content: [{ type: 'text', text: spaced }] }, { traceId: 's', toolName: 'x' });
    after.remember({ content: [{ type: 'text', text: spaced }] }, { traceId: 's', toolName: 'x' });
    for (const tail of [encodeURIComponent(spaced), JSON.stringify({ v: spaced }), `${secret}\r\n`, secret]) {
      const hits = after.match({ q: `${tokens} ${tail}` });
      expect(before.match({ q: `${tokens} ${tail}` })).toHaveLength(1);
      // The key is now also found inside the wide results' values (a credential is remembered by
      // itself), which may take the four source slots.
      expect(hits.length).toBeGreaterThan(0);
      for (const h of hits) expect(h.traceId).toMatch(/^(?:t|s|[wd]\d+)$/);
    }
    const sparse: unknown[] = [];
    sparse[3] = secret;
    expect(before.match({ sparse }).map((h) => h.argPath)).toEqual(['$.sparse[3]']);
    expect(new Set(after.match({ sparse }).map((h) => h.argPath))).toEqual(new Set(['$.sparse[3]']));
    const odd = [Number.NaN, Infinity, -0, 1e21, 4012345678901234, secret];
    expect(before.match(odd).map((h) => h.argPath)).toEqual(['$[5]']);
    expect(new Set(after.match(odd).map((h) => h.argPath))).toEqual(new Set(['$[5]']));
  });
});

const BASE64_TOKEN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;

describe('base64 helpers equal what they replaced', () => {
  it('base64Tokens finds what /[A-Za-z0-9+/_-]{16,}={0,2}/g matches (the first 256)', () => {
    // Runs of the alphabet around the 16-character threshold, between separators and `=`.
    const run = fc.string({ unit: fc.constantFrom(...Array.from('Aa9+/_-')), minLength: 12, maxLength: 20 });
    const gap = fc.string({ unit: fc.constantFrom(...Array.from('=.:% é'), '😀'), maxLength: 4 });
    const tokenish = fc.oneof(
      fc.string({ unit: fc.constantFrom(...Array.from('Aa9+/_-=.:% é'), '😀'), maxLength: 120 }),
      fc.array(fc.tuple(gap, run), { maxLength: 8 }).map((parts) => parts.flat().join('')),
    );
    fc.assert(
      fc.property(tokenish, (text) => {
        expect(base64Tokens(text) ?? null).toEqual(text.match(BASE64_TOKEN));
      }),
      { numRuns: 3000 },
    );
    const many = Array.from({ length: 300 }, (_, i) => `Tok${String(i).padStart(13, '0')}`).join(' ');
    expect(base64Tokens(many)).toEqual(many.match(BASE64_TOKEN)!.slice(0, 256));
  });

  it('decodeBase64Utf8 is Buffer.from(token, "base64").toString("utf8"), ill-formed UTF-8 included', () => {
    const edgeBytes = [0x00, 0x0a, 0x0d, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xee, 0xef, 0xf0, 0xf3, 0xf4, 0xf5, 0xff];
    const bytes = fc.oneof(fc.uint8Array({ minLength: 12, maxLength: 60 }), fc.array(fc.constantFrom(...edgeBytes), { minLength: 12, maxLength: 60 }).map((b) => Uint8Array.from(b)));
    fc.assert(
      fc.property(bytes, fc.boolean(), fc.nat({ max: 3 }), fc.nat({ max: 2 }), (b, url, cut, pad) => {
        const encoded = Buffer.from(b).toString(url ? 'base64url' : 'base64').replace(/=+$/, '');
        const token = encoded.slice(0, encoded.length - cut) + '='.repeat(pad);
        expect(decodeBase64Utf8(token)).toBe(Buffer.from(token, 'base64').toString('utf8'));
      }),
      { numRuns: 5000 },
    );
    const alphabet = fc.string({ unit: fc.constantFrom(...Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_')), minLength: 16, maxLength: 80 });
    fc.assert(
      fc.property(alphabet, (token) => {
        expect(decodeBase64Utf8(token)).toBe(Buffer.from(token, 'base64').toString('utf8'));
      }),
      { numRuns: 3000 },
    );
  });
});
