import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base32 } from '../support/base32.js';
import { TaintMemory } from '../../src/witness/taint.js';

/**
 * The witness against the cheap transforms of issue 27 (finding 5): a remembered value, spelled
 * otherwise (case, spaces, newlines, zero-width characters, full width, HTML entities), then
 * encoded (hex, base32, base64 at any alignment, line-wrapped, nested, gzip), embedded in prose
 * or split over two arguments, is still found; a credential also reversed or cut short; a value
 * that was never returned, transformed the same way, is not.
 */
const src = (traceId: string) => ({ traceId, toolName: 'read_file' });

const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Random characters of a key (keys are random: at least 8 distinct characters, which the witness requires of a token). */
const randomPart = (n: number) => fc.string({ unit: fc.constantFrom(...alnum), minLength: n, maxLength: n }).filter((r) => new Set(r.toLowerCase()).size >= 8);
/** Values a result returns: credentials the firewall's detectors know, and other token-like values. */
const credential = fc.oneof(
  randomPart(16).map((r) => `AKIA${r.toUpperCase()}`),
  randomPart(36).map((r) => `ghp_${r}`),
  randomPart(24).map((r) => `sk_live_${r}`),
  randomPart(20).map((r) => `Xk9${r}`), // read from `API_TOKEN=...`: a credential assignment
);
const tokenLike = fc.tuple(randomPart(10), randomPart(10)).map(([a, b]) => `id-${a}7Q/${b}`);

/** Spellings that keep a value's characters (what normalisation undoes). */
type Spell = 'upper' | 'lower' | 'mixed' | 'spaces' | 'newlines' | 'zero_width' | 'full_width' | 'html';
const spellArb = fc.uniqueArray(fc.constantFrom<Spell>('upper', 'lower', 'mixed', 'spaces', 'newlines', 'zero_width', 'full_width', 'html'), { maxLength: 3 });
type Encode = 'hex' | 'HEX' | 'base32' | 'base64' | 'base64_misaligned' | 'base64_wrapped' | 'gzip_base64' | 'base64url';
const encodeArb = fc.array(fc.constantFrom<Encode>('hex', 'HEX', 'base32', 'base64', 'base64_misaligned', 'base64_wrapped', 'gzip_base64', 'base64url'), { maxLength: 2 });

function spell(value: string, how: Spell, seed: number): string {
  const chars = Array.from(value);
  switch (how) {
    case 'upper':
      return value.toUpperCase();
    case 'lower':
      return value.toLowerCase();
    case 'mixed':
      return chars.map((c, i) => ((i + seed) % 2 ? c.toUpperCase() : c.toLowerCase())).join('');
    case 'spaces':
      return chars.join(seed % 2 ? ' ' : '  ');
    case 'newlines':
      return chars.map((c, i) => (i % 4 === 3 ? `${c}\n` : c)).join('');
    case 'zero_width':
      return chars.join(['\u200B', '\u200C', '\u2060', '\uFEFF', '\u034F', '\uFE0F', '\u{E0100}', '\u00AD'][seed % 8]);
    case 'full_width':
      return value.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
    case 'html':
      return chars.map((c, i) => ((i + seed) % 3 === 0 ? `&#${c.codePointAt(0)};` : (i + seed) % 3 === 1 ? `&#x${c.codePointAt(0)!.toString(16)};` : c)).join('');
  }
}

function encode(text: string, how: Encode, seed: number): string {
  const bytes = Buffer.from(text);
  switch (how) {
    case 'hex':
      return bytes.toString('hex');
    case 'HEX':
      return bytes.toString('hex').toUpperCase();
    case 'base32':
      return base32(bytes);
    case 'base64':
      return bytes.toString('base64');
    case 'base64url':
      return bytes.toString('base64url');
    case 'base64_misaligned':
      return 'QUJD'.slice(0, 1 + (seed % 3)) + bytes.toString('base64');
    case 'base64_wrapped':
      return bytes.toString('base64').replace(/(.{12})/g, '$1\n');
    case 'gzip_base64':
      return gzipSync(bytes).toString('base64');
  }
}

function transform(value: string, spells: Spell[], encodings: Encode[], seed: number): string {
  let t = value;
  // HTML entities last: spaces inside `&#65;` would make it no entity (and no reader would decode it).
  for (const s of [...spells.filter((x) => x !== 'html'), ...spells.filter((x) => x === 'html')]) t = spell(t, s, seed);
  for (const e of encodings) t = encode(t, e, seed);
  return t;
}

describe('the witness sees through the cheap transforms (property)', () => {
  it('a remembered value, spelled, encoded and embedded at random, is found; an unrelated one so treated is not', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.oneof(credential, tokenLike), fc.oneof(credential, tokenLike), spellArb, encodeArb, fc.nat(1000), fc.lorem({ maxCount: 4 }), (value, other, spells, encodings, seed, prose) => {
        // Unrelated: no 12 characters in common (a credential also counts by its 16-character ends).
        const v = value.toLowerCase();
        fc.pre(Array.from({ length: Math.max(0, other.length - 11) }, (_, i) => other.slice(i, i + 12).toLowerCase()).every((w) => !v.includes(w)));
        const mem = new TaintMemory();
        mem.remember({ content: [{ type: 'text', text: `# config\nAPI_TOKEN=${value}\nregion: eu-west-1\n` }] }, src('t1'));
        const carried = transform(value, spells, encodings, seed);
        const hits = mem.match({ url: 'https://collector.example/x', body: `${prose} ${carried} ${prose}` });
        expect(hits.map((h) => [h.traceId, h.argPath]), `${spells} ${encodings}: ${carried}`).toContainEqual(['t1', '$.body']);
        for (const h of hits) seen.add(h.encoding);
        expect(mem.match({ body: `${prose} ${transform(other, spells, encodings, seed)} ${prose}` })).toEqual([]);
      }),
      { numRuns: 400 },
    );
    expect([...seen].sort()).toEqual(expect.arrayContaining(['base32_decoded', 'base64_decoded', 'compressed', 'hex_decoded', 'raw']));
  });

  it('a remembered credential reversed, cut to its first or last 16 random characters, or split over two arguments, is found', () => {
    fc.assert(
      fc.property(credential, spellArb, fc.nat(1000), fc.constantFrom('reversed', 'prefix', 'suffix', 'split'), (value, spelled, seed, how) => {
        // Halves are joined as they are (normalized), not decoded: an entity cut in two is out of reach.
        const spells = how === 'split' ? spelled.filter((x) => x !== 'html') : spelled;
        const mem = new TaintMemory();
        mem.remember({ content: [{ type: 'text', text: `API_TOKEN=${value}` }] }, src('t1'));
        const fixed = /^.*[-_.]/.exec(value.slice(0, 48))?.[0].length ?? 0;
        const cut = seed % 8;
        const args =
          how === 'reversed' ? { body: transform(Array.from(value).reverse().join(''), spells, [], seed) }
          : how === 'prefix' ? { body: `key starts ${transform(value.slice(0, fixed + 16 + (cut % Math.max(1, value.length - fixed - 16))), spells, [], seed)}…` }
          : how === 'suffix' ? { body: `…${transform(value.slice(-16 - cut), spells, [], seed)} ends` }
          : { a: transform(value.slice(0, 5 + cut), spells, [], seed), b: transform(value.slice(5 + cut), spells, [], seed) };
        const hits = mem.match(args);
        expect(hits.length, `${how} ${JSON.stringify(args)}`).toBeGreaterThan(0);
        // Split: both halves are named (the second may also hold the key's last 16 characters whole).
        if (how === 'split') expect(new Set(hits.map((h) => h.argPath))).toEqual(new Set(['$.a', '$.b']));
        if (how === 'split') expect(hits.map((h) => h.encoding)).toContain('joined');
      }),
      { numRuns: 300 },
    );
  });

  it('plain arguments taint nothing: words, numbers and short strings never match a remembered value', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(credential, tokenLike), { minLength: 1, maxLength: 5 }), fc.array(fc.oneof(fc.lorem({ maxCount: 8 }), fc.integer().map(String), fc.string({ maxLength: 11 })), { maxLength: 6 }), (values, args) => {
        const mem = new TaintMemory();
        mem.remember({ content: [{ type: 'text', text: values.join('\n') }] }, src('t1'));
        expect(mem.match(Object.fromEntries(args.map((a, i) => [`a${i}`, a])))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('credentials survive volume', () => {
  const tokens = (n: number, salt: string) => Array.from({ length: n }, (_, i) => `tok${salt}${i.toString(36).padStart(6, '0')}Zq9x`);
  const SECRET = ['ghp_', 'Zr8Yq3Lm5Np7Tx2Kd9Wb4Vc6Hj1Gf0Sa8Qe3Rt'].join('');

  it('three later results of 4,096 token-like values each do not evict a remembered key', () => {
    const mem = new TaintMemory();
    mem.remember({ content: [{ type: 'text', text: `GITHUB_TOKEN=${SECRET}` }] }, src('env'));
    for (const salt of ['a', 'b', 'c']) mem.remember({ content: [{ type: 'text', text: tokens(4096, salt).join('\n') }] }, src(salt));
    expect(mem.stats().evicted).toBeGreaterThan(0);
    expect(mem.match({ body: `leak ${SECRET}` }).map((h) => h.traceId)).toEqual(['env']);
  });

  it('a key after 5,000 token-like lines of the same result is remembered', () => {
    const mem = new TaintMemory();
    const out = mem.remember({ content: [{ type: 'text', text: [...tokens(5000, 'x'), `API_TOKEN=${SECRET}`].join('\n') }] }, src('big'));
    expect(out.dropped).toBeGreaterThan(0);
    expect(mem.match({ body: SECRET }).map((h) => h.traceId)).toEqual(['big']);
  });

  it('protected values are evicted only by other protected values, oldest first', () => {
    const mem = new TaintMemory({ maxValues: 10, maxProtectedValues: 8 });
    mem.remember({ content: [{ type: 'text', text: `API_TOKEN=${SECRET}` }] }, src('first'));
    mem.remember({ content: [{ type: 'text', text: tokens(100, 'v').join('\n') }] }, src('volume'));
    expect(mem.match({ body: SECRET })).toHaveLength(1);
    // Each key takes four forms (itself, reversed, prefix, suffix): two more keys push the first out.
    mem.remember({ content: [{ type: 'text', text: `A_TOKEN=ghp_${'Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0Kk1Ll2'}\nB_TOKEN=ghp_${'Mm3Nn4Oo5Pp6Qq7Rr8Ss9Tt0Uu1Vv2Ww3Xx4'}` }] }, src('more'));
    expect(mem.match({ body: SECRET })).toEqual([]);
  });
});

describe('blobs are remembered by what they say', () => {
  const KEY = ['ghp_', 'Zr8Yq3Lm5Np7Tx2Kd9Wb4Vc6Hj1Gf0Sa8Qe3Rt'].join('');
  it('a .env read as a resource blob (even gzip, even claimed an image) taints a later argument carrying its values', () => {
    for (const [mimeType, bytes] of [
      ['text/plain', Buffer.from(`DB_PASSWORD=Tr0ub4dor-horse-42\nGITHUB_TOKEN=${KEY}\n`)],
      ['image/png', gzipSync(`DB_PASSWORD=Tr0ub4dor-horse-42\nGITHUB_TOKEN=${KEY}\n`)],
    ] as const) {
      const mem = new TaintMemory();
      mem.remember({ contents: [{ uri: 'file:///app/.env', mimeType, blob: bytes.toString('base64') }] }, src('read'));
      expect(mem.match({ body: `token ${KEY}` }).map((h) => h.traceId), mimeType).toEqual(['read']);
      expect(mem.match({ body: 'Tr0ub4dor-horse-42' }).map((h) => h.traceId), mimeType).toEqual(['read']);
    }
  });

  it('a binary blob gives its credentials, not its noise', () => {
    const mem = new TaintMemory();
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]), Buffer.from(` tEXt key=${KEY} `), Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 37) & 0xff))]);
    const out = mem.remember({ content: [{ type: 'image', mimeType: 'image/png', data: png.toString('base64') }] }, src('img'));
    expect(mem.match({ body: KEY }).map((h) => h.traceId)).toEqual(['img']);
    // The key's four forms and the blob's base64 text itself; nothing of the binary noise.
    expect(out.remembered).toBeLessThanOrEqual(5);
  });
});

describe('decompression is bounded (zip-bomb safe)', () => {
  it('a gzip bomb in an argument inflates to at most 1 MiB, and the key at its start is still found', () => {
    const KEY = ['ghp_', 'Zr8Yq3Lm5Np7Tx2Kd9Wb4Vc6Hj1Gf0Sa8Qe3Rt'].join('');
    const mem = new TaintMemory();
    mem.remember({ content: [{ type: 'text', text: `GITHUB_TOKEN=${KEY}` }] }, src('env'));
    const bomb = gzipSync(Buffer.concat([Buffer.from(`${KEY}\n`), Buffer.alloc(64 << 20, 0x20)]), { level: 9 });
    expect(bomb.length).toBeLessThan(1 << 20);
    const before = process.memoryUsage().rss;
    expect(mem.match({ body: bomb.toString('base64') }).map((h) => [h.traceId, h.encoding])).toEqual([['env', 'compressed']]);
    // 64 MiB were never inflated (the bound is 1 MiB of output per decompression).
    expect(process.memoryUsage().rss - before).toBeLessThan(32 << 20);
  });
});
