import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatRFC3339Nano, jcs, sha256Hex, type JsonObject } from '../../src/canon/index.js';
import {
  contextEnvelopeJson,
  contextSetDigest,
  contextSetDigestPayload,
  isVerifiedContextEnvelope,
  normalizeContextEnvelope,
  parseContextEnvelope,
} from '../../src/context/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { fixture } from './helpers.js';

// gate.md §11 V7.
const V7_RECORDS_CANONICAL =
  '[{"content_digest":"2222222222222222222222222222222222222222222222222222222222222222","immutability":"immutable","query_digest":"1111111111111111111111111111111111111111111111111111111111111111","redaction_mode":"hashes","ref_id":"ctx-a","retrieved_at":"2026-03-12T11:59:55Z","source_locator":"file:///repo/context.md","source_type":"doc"},{"content_digest":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","freshness_sla_seconds":300,"immutability":"unknown","query_digest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","redaction_mode":"hashes","ref_id":"ctx-b","retrieval_params":{"q":"x<y","top_k":5},"retrieved_at":"2026-03-12T10:59:00.5Z","sensitivity_label":"internal","source_locator":"docs://b","source_type":"doc_store"}]';
const V7_DIGEST = '793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f';
const EMPTY_RECORDS_DIGEST = '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945';
const HEX_A = 'a'.repeat(64);
const HEX_B = 'b'.repeat(64);


function record(overrides: JsonObject = {}): JsonObject {
  return {
    ref_id: 'r1',
    source_type: 'doc',
    source_locator: 'docs://r1',
    query_digest: HEX_A,
    content_digest: HEX_B,
    retrieved_at: '2026-03-12T11:00:00Z',
    redaction_mode: 'hashes',
    immutability: 'mutable',
    ...overrides,
  };
}

function envelope(overrides: JsonObject = {}, records: JsonObject[] = [record()]): string {
  return JSON.stringify({
    schema_id: 'gait.context.envelope',
    schema_version: '1.0.0',
    created_at: '2026-03-12T11:00:00Z',
    producer_version: 'test',
    context_set_id: 'set-1',
    context_set_digest: '',
    evidence_mode: 'required',
    records,
    ...overrides,
  });
}

function errorOf(fn: () => unknown): WardError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WardError);
    return err as WardError;
  }
  throw new Error('expected a WardError');
}

describe('parseContextEnvelope: the V7 golden vector', () => {
  it('normalizes and sorts the records into the exact canonical digest input', () => {
    const env = parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
    expect(jcs(contextSetDigestPayload(env.records))).toBe(V7_RECORDS_CANONICAL);
    expect(jcs(contextEnvelopeJson(env).records)).toBe(V7_RECORDS_CANONICAL);
  });

  it('computes context_set_digest 793f36e5… when the envelope leaves it empty', () => {
    const env = parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
    expect(env.context_set_digest).toBe(V7_DIGEST);
    expect(sha256Hex(V7_RECORDS_CANONICAL)).toBe(V7_DIGEST);
    expect(contextSetDigest(env.records)).toBe(V7_DIGEST);
  });

  it('normalizes evidence_mode REQUIRED to required and fills the envelope defaults', () => {
    const env = parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
    expect(env.evidence_mode).toBe('required');
    expect(env.context_set_id).toBe('ctx-set-1');
    expect(env.records.map((r) => r.ref_id)).toEqual(['ctx-a', 'ctx-b']);
    expect(formatRFC3339Nano(env.records[1]!.retrieved_at)).toBe('2026-03-12T10:59:00.5Z');
  });

  it('accepts a provided digest in upper case and stores it lower-cased', () => {
    const env = parseContextEnvelope(fixture('envelopes/v7-envelope-digest.json'));
    expect(env.context_set_digest).toBe(V7_DIGEST);
  });

  it('accepts bytes as well as text', () => {
    const env = parseContextEnvelope(new TextEncoder().encode(fixture('envelopes/v7-envelope.json')));
    expect(env.context_set_digest).toBe(V7_DIGEST);
  });

  it('gives the empty-records digest 4f53cda1… for an envelope without records', () => {
    const env = parseContextEnvelope(fixture('envelopes/empty-records.json'));
    expect(env.context_set_digest).toBe(EMPTY_RECORDS_DIGEST);
    expect(contextSetDigest([])).toBe(EMPTY_RECORDS_DIGEST);
    expect(jcs(contextSetDigestPayload([]))).toBe('[]');
    expect(parseContextEnvelope(envelope({}, [])).context_set_digest).toBe(EMPTY_RECORDS_DIGEST);
  });
});

describe('parseContextEnvelope: verification failures', () => {
  it('rejects a provided digest that differs from the recomputed one', () => {
    const err = errorOf(() => parseContextEnvelope(fixture('envelopes/mismatch.json')));
    expect(err.message).toBe('context_set_digest mismatch');
    expect(err.code).toBe(ERROR_CODES.ENVELOPE_INVALID);
    expect(err.exitCode).toBe(6);
  });

  it('rejects payloads larger than 1 MiB before decoding them', () => {
    const big = envelope({ producer_version: 'x'.repeat(1048576) });
    expect(errorOf(() => parseContextEnvelope(big)).message).toBe('context envelope exceeds size limit (1048576 bytes)');
    expect(errorOf(() => parseContextEnvelope(Buffer.from(big))).message).toBe(
      'context envelope exceeds size limit (1048576 bytes)',
    );
    // Not even JSON: the limit is checked first.
    expect(errorOf(() => parseContextEnvelope('{'.repeat(1048577))).message).toBe(
      'context envelope exceeds size limit (1048576 bytes)',
    );
  });

  it('measures the limit in UTF-8 bytes, not UTF-16 units', () => {
    const base = envelope({ producer_version: '' });
    const fill = Math.floor((1048576 - Buffer.byteLength(base)) / 3) + 1; // each "€" is 3 bytes
    const text = envelope({ producer_version: '€'.repeat(fill) });
    expect(text.length).toBeLessThan(1048576);
    expect(errorOf(() => parseContextEnvelope(text)).message).toBe('context envelope exceeds size limit (1048576 bytes)');
  });

  it('accepts an envelope of exactly 1048576 bytes', () => {
    const base = envelope();
    const text = base + ' '.repeat(1048576 - Buffer.byteLength(base));
    expect(Buffer.byteLength(text)).toBe(1048576);
    expect(parseContextEnvelope(text).records).toHaveLength(1);
  });

  const cases: Array<[string, string, string]> = [
    ['schema_id', envelope({ schema_id: 'gait.other' }), 'unsupported context envelope schema_id: gait.other'],
    ['schema_version', envelope({ schema_version: '2.0.0' }), 'unsupported context envelope schema_version: 2.0.0'],
    ['context_set_id', envelope({ context_set_id: '   ' }), 'context_set_id is required'],
    ['context_set_id absent', envelope({ context_set_id: null }), 'context_set_id is required'],
    ['digest format', envelope({ context_set_digest: 'abc' }), 'context_set_digest must be sha256 hex'],
    ['digest prefixed', envelope({ context_set_digest: `sha256:${HEX_A}` }), 'context_set_digest must be sha256 hex'],
    ['evidence_mode', envelope({ evidence_mode: 'strict' }), 'context evidence mode must be best_effort or required'],
    ...(['ref_id', 'source_type', 'source_locator', 'redaction_mode'].map((field) => [
      `record ${field}`,
      envelope({}, [record({ [field]: ' ' })]),
      'context record fields ref_id/source_type/source_locator/redaction_mode are required',
    ]) as Array<[string, string, string]>),
    ['record query_digest', envelope({}, [record({ query_digest: 'xyz' })]), 'context record digests must be sha256 hex'],
    ['record content_digest', envelope({}, [record({ content_digest: '' })]), 'context record digests must be sha256 hex'],
    [
      'record immutability',
      envelope({}, [record({ immutability: 'frozen' })]),
      'context record immutability must be unknown|mutable|immutable',
    ],
    [
      'record freshness',
      envelope({}, [record({ freshness_sla_seconds: -1 })]),
      'context record freshness_sla_seconds must be >= 0',
    ],
    [
      'null record',
      envelope({}, [null as unknown as JsonObject]),
      'context record fields ref_id/source_type/source_locator/redaction_mode are required',
    ],
  ];
  it.each(cases)('rejects an invalid %s with the contract message', (_name, text, message) => {
    const err = errorOf(() => parseContextEnvelope(text));
    expect(err.message).toBe(message);
    expect(err.code).toBe(ERROR_CODES.ENVELOPE_INVALID);
  });

  const typeCases: Array<[string, string, string]> = [
    [
      'a string field given a number',
      envelope({ context_set_id: 7 }),
      'parse context envelope: json: cannot unmarshal number into Go struct field Envelope.context_set_id of type string',
    ],
    [
      'a record string field given a bool',
      envelope({}, [record({ ref_id: true })]),
      'parse context envelope: json: cannot unmarshal bool into Go struct field Envelope.records.ref_id of type string',
    ],
    [
      'a fractional freshness_sla_seconds',
      envelope({}, [record({ freshness_sla_seconds: 1.5 })]),
      'parse context envelope: json: cannot unmarshal number 1.5 into Go struct field Envelope.records.freshness_sla_seconds of type int64',
    ],
    [
      'records given an object',
      envelope({ records: {} }),
      'parse context envelope: json: cannot unmarshal object into Go struct field Envelope.records of type []ReferenceRecord',
    ],
    [
      'retrieval_params given an array',
      envelope({}, [record({ retrieval_params: [1] })]),
      'parse context envelope: json: cannot unmarshal array into Go struct field Envelope.records.retrieval_params of type map[string]interface {}',
    ],
    [
      'a space-separated time',
      envelope({ created_at: '2026-03-12 11:00:00Z' }),
      'parse context envelope: created_at: parsing time "2026-03-12 11:00:00Z" as RFC 3339 failed',
    ],
    [
      'an empty time string',
      envelope({}, [record({ retrieved_at: '' })]),
      'parse context envelope: records.retrieved_at: parsing time "" as RFC 3339 failed',
    ],
    [
      'a numeric time',
      envelope({ created_at: 1741777200 }),
      'parse context envelope: created_at: Time.UnmarshalJSON: input is not a JSON string',
    ],
    ['a JSON array document', '[]', 'parse context envelope: json: cannot unmarshal array into Go value of type Envelope'],
  ];
  it.each(typeCases)('rejects %s (strict types)', (_name, text, message) => {
    const err = errorOf(() => parseContextEnvelope(text));
    expect(err.message).toBe(message);
    expect(err.code).toBe(ERROR_CODES.ENVELOPE_INVALID);
  });

  it('rejects malformed JSON, trailing data and a byte-order mark with the parse prefix', () => {
    for (const text of ['{', envelope() + ' {}', '\ufeff' + envelope()]) {
      expect(errorOf(() => parseContextEnvelope(text)).message).toMatch(/^parse context envelope: /);
    }
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(envelope())]);
    expect(errorOf(() => parseContextEnvelope(bom)).message).toMatch(/^parse context envelope: /);
  });
});

describe('parseContextEnvelope: normalization (gate.md §4.1)', () => {
  it('fills defaults for empty schema_id, schema_version, created_at, producer_version, evidence_mode and immutability', () => {
    const env = parseContextEnvelope(
      envelope({ schema_id: '', schema_version: null, created_at: null, producer_version: '', evidence_mode: '' }, [
        record({ immutability: '' }),
      ]),
    );
    expect(env.schema_id).toBe('gait.context.envelope');
    expect(env.schema_version).toBe('1.0.0');
    expect(formatRFC3339Nano(env.created_at)).toBe('1980-01-01T00:00:00Z');
    expect(env.producer_version).toBe('0.0.0-dev');
    expect(env.evidence_mode).toBe('best_effort');
    expect(env.records[0]!.immutability).toBe('unknown');
  });

  it('turns a missing retrieved_at into 1980-01-01 and converts offsets to UTC', () => {
    const env = parseContextEnvelope(
      envelope({}, [record({ ref_id: 'a', retrieved_at: null }), record({ ref_id: 'b', retrieved_at: '2026-03-12T13:00:00.250+02:00' })]),
    );
    expect(env.records.map((r) => formatRFC3339Nano(r.retrieved_at))).toEqual([
      '1980-01-01T00:00:00Z',
      '2026-03-12T11:00:00.25Z',
    ]);
  });

  it('trims identifiers, keeps source_type case, keeps sensitivity_label and retrieval_params verbatim', () => {
    const env = parseContextEnvelope(
      envelope({}, [
        record({
          ref_id: ' r1 ',
          source_type: ' Doc_Store ',
          source_locator: ' docs://r1 ',
          redaction_mode: ' hashes ',
          query_digest: ` ${HEX_A.toUpperCase()} `,
          immutability: ' Mutable ',
          sensitivity_label: ' Internal ',
          retrieval_params: { ' k ': ' v ' },
        }),
      ]),
    );
    const json = contextEnvelopeJson(env).records as JsonObject[];
    expect(json[0]).toEqual({
      ref_id: 'r1',
      source_type: 'Doc_Store',
      source_locator: 'docs://r1',
      query_digest: HEX_A,
      content_digest: HEX_B,
      retrieved_at: '2026-03-12T11:00:00Z',
      redaction_mode: 'hashes',
      immutability: 'mutable',
      sensitivity_label: ' Internal ',
      retrieval_params: { ' k ': ' v ' },
    });
  });

  it('omits empty optional record fields from the digest input', () => {
    const env = parseContextEnvelope(
      envelope({}, [record({ sensitivity_label: '', freshness_sla_seconds: 0, retrieval_params: {} })]),
    );
    expect(Object.keys(contextSetDigestPayload(env.records)[0]!).sort()).toEqual([
      'content_digest',
      'immutability',
      'query_digest',
      'redaction_mode',
      'ref_id',
      'retrieved_at',
      'source_locator',
      'source_type',
    ]);
  });

  it('keeps duplicate records (they are not deduplicated) and sorts by ref_id, source_type, locator, content digest', () => {
    const env = parseContextEnvelope(
      envelope({}, [
        record({ ref_id: 'b' }),
        record({ ref_id: 'a', source_type: 'z' }),
        record({ ref_id: 'a', source_type: 'y', content_digest: 'c'.repeat(64) }),
        record({ ref_id: 'a', source_type: 'y' }),
        record({ ref_id: 'b' }),
      ]),
    );
    expect(env.records.map((r) => `${r.ref_id}/${r.source_type}/${r.content_digest[0]}`)).toEqual([
      'a/y/b',
      'a/y/c',
      'a/z/b',
      'b/doc/b',
      'b/doc/b',
    ]);
  });

  it('sorts byte-wise (UTF-8), not by UTF-16 units or locale', () => {
    const env = parseContextEnvelope(
      envelope({}, [record({ ref_id: '\uff5e' }), record({ ref_id: '\u{1f600}' }), record({ ref_id: 'B' }), record({ ref_id: 'a' })]),
    );
    expect(env.records.map((r) => r.ref_id)).toEqual(['B', 'a', '\uff5e', '\u{1f600}']);
  });

  it('returns a frozen, verified envelope; copies of it are not verified', () => {
    const env = parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
    expect(Object.isFrozen(env)).toBe(true);
    expect(Object.isFrozen(env.records)).toBe(true);
    expect(Object.isFrozen(env.records[1]!.retrieval_params)).toBe(true);
    expect(isVerifiedContextEnvelope(env)).toBe(true);
    expect(isVerifiedContextEnvelope({ ...env })).toBe(false);
    expect(() => {
      (env as { context_set_digest: string }).context_set_digest = HEX_A;
    }).toThrow(TypeError);
  });

  it('re-normalizing a normalized envelope is the identity', () => {
    const env = parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
    const again = normalizeContextEnvelope(env);
    expect(contextEnvelopeJson(again)).toEqual(contextEnvelopeJson(env));
    expect(parseContextEnvelope(JSON.stringify(contextEnvelopeJson(env))).context_set_digest).toBe(V7_DIGEST);
  });
});

describe('parseContextEnvelope: unknown fields (Ward decision 4)', () => {
  it('ignores unknown fields at every level and never digests them', () => {
    const env = parseContextEnvelope(fixture('envelopes/unknown-fields.json'));
    expect(env.context_set_digest).toBe(V7_DIGEST);
    expect(jcs(contextEnvelopeJson(env))).not.toMatch(/x_producer_note|x_score|extra/);
  });

  it('keeps verifying a provided digest when unknown fields are present', () => {
    const doc = JSON.parse(fixture('envelopes/unknown-fields.json')) as JsonObject;
    doc['context_set_digest'] = V7_DIGEST;
    expect(parseContextEnvelope(JSON.stringify(doc)).context_set_digest).toBe(V7_DIGEST);
    doc['context_set_digest'] = HEX_A;
    expect(errorOf(() => parseContextEnvelope(JSON.stringify(doc))).message).toBe('context_set_digest mismatch');
  });

  it('matches keys exactly: a differently-cased key is unknown, so the real field counts as missing', () => {
    const rec = record();
    delete rec['ref_id'];
    rec['REF_ID'] = 'r1';
    expect(errorOf(() => parseContextEnvelope(envelope({}, [rec]))).message).toBe(
      'context record fields ref_id/source_type/source_locator/redaction_mode are required',
    );
  });
});

describe('context_set_digest: record order never matters (ContextSpec v1)', () => {
  const recordArb = fc.record({
    ref_id: fc.constantFrom('a', 'b', 'c'),
    source_type: fc.constantFrom('doc', 'Doc'),
    source_locator: fc.constantFrom('x', 'y'),
    content_digest: fc.constantFrom(HEX_A, HEX_B),
    retrieved_at: fc.constantFrom('2026-03-12T11:00:00Z', '2026-03-12T11:00:00.5Z', '2026-01-01T00:00:00+05:00'),
    sensitivity_label: fc.constantFrom('', 'internal'),
    freshness_sla_seconds: fc.constantFrom(0, 60),
  });

  it('shuffling the records never changes the digest (including records that tie on every sort key)', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 8 }), fc.nat(), (recs, seed) => {
        const records = recs.map((r) => record(r));
        const shuffled = seededShuffle(records, seed);
        const a = parseContextEnvelope(envelope({}, records));
        const b = parseContextEnvelope(envelope({}, shuffled));
        expect(b.context_set_digest).toBe(a.context_set_digest);
        expect(contextSetDigest([...b.records].reverse())).toBe(a.context_set_digest);
      }),
      { numRuns: 300 },
    );
  });

  it('changes the digest when a digested field changes (retrieved_at is covered)', () => {
    const a = parseContextEnvelope(envelope());
    const b = parseContextEnvelope(envelope({}, [record({ retrieved_at: '2026-03-12T11:00:01Z' })]));
    expect(b.context_set_digest).not.toBe(a.context_set_digest);
  });

  it('does not cover created_at, producer_version, context_set_id or evidence_mode', () => {
    const a = parseContextEnvelope(envelope());
    const b = parseContextEnvelope(
      envelope({ created_at: '2020-01-01T00:00:00Z', producer_version: 'other', context_set_id: 'other', evidence_mode: 'best_effort' }),
    );
    expect(b.context_set_digest).toBe(a.context_set_digest);
  });
});

function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
