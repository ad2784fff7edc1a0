import { describe, expect, it } from 'vitest';
import { ZERO_TIME, type JsonObject } from '../../src/canon/index.js';
import { envelopeContextAgeSeconds, parseContextEnvelope, type ContextEnvelope } from '../../src/context/index.js';
import { fixture, t } from './helpers.js';

function envelopeWith(retrievedAts: Array<string | null>, createdAt: string | null = '2026-03-12T11:00:00Z'): ContextEnvelope {
  const records: JsonObject[] = retrievedAts.map((retrieved_at, i) => ({
    ref_id: `r${i}`,
    source_type: 'doc',
    source_locator: `docs://${i}`,
    query_digest: 'a'.repeat(64),
    content_digest: 'b'.repeat(64),
    retrieved_at,
    redaction_mode: 'hashes',
  }));
  return parseContextEnvelope(JSON.stringify({ context_set_id: 'set', created_at: createdAt, records }));
}

describe('envelopeContextAgeSeconds (gate.md §4.4)', () => {
  it('gives 3659 for the V7 envelope at 2026-03-12T12:00:00Z (the oldest record dominates)', () => {
    const env = parseContextEnvelope(fixture('envelopes/v7-envelope.json'));
    expect(envelopeContextAgeSeconds(env, t('2026-03-12T12:00:00Z'))).toBe(3659);
    expect(envelopeContextAgeSeconds(env, t('2026-03-12T13:00:00Z'))).toBe(7259);
  });

  it('floors partial seconds', () => {
    const env = envelopeWith(['2026-03-12T11:00:00Z']);
    expect(envelopeContextAgeSeconds(env, t('2026-03-12T11:00:00.999999999Z'))).toBe(0);
    expect(envelopeContextAgeSeconds(env, t('2026-03-12T11:00:01Z'))).toBe(1);
    expect(envelopeContextAgeSeconds(env, t('2026-03-12T11:00:01.5Z'))).toBe(1);
  });

  it('counts a record retrieved in the future as 0', () => {
    expect(envelopeContextAgeSeconds(envelopeWith(['2026-03-12T12:00:01Z']), t('2026-03-12T12:00:00Z'))).toBe(0);
    const mixed = envelopeWith(['2026-03-12T13:00:00Z', '2026-03-12T11:59:30Z']);
    expect(envelopeContextAgeSeconds(mixed, t('2026-03-12T12:00:00Z'))).toBe(30);
  });

  it('compares instants, not wall-clock text (offsets are honoured)', () => {
    const env = envelopeWith(['2026-03-12T13:00:00+01:00']);
    expect(envelopeContextAgeSeconds(env, t('2026-03-12T12:00:10Z'))).toBe(10);
    expect(envelopeContextAgeSeconds(env, t('2026-03-12T13:00:10+01:00'))).toBe(10);
  });

  it('counts a zero retrieved_at as 0 in an envelope that was never normalized', () => {
    const parsed = envelopeWith(['2026-03-12T11:00:00Z']);
    const handMade: ContextEnvelope = { ...parsed, records: [{ ...parsed.records[0]!, retrieved_at: ZERO_TIME }] };
    expect(envelopeContextAgeSeconds(handMade, t('2026-03-12T12:00:00Z'))).toBe(0);
  });

  it('treats a missing retrieved_at as 1980 after normalization, so the record is very stale', () => {
    const env = envelopeWith([null]);
    expect(envelopeContextAgeSeconds(env, t('1980-01-02T00:00:00Z'))).toBe(86400);
  });

  it('uses created_at when there are no records', () => {
    expect(envelopeContextAgeSeconds(envelopeWith([], '2026-03-12T11:59:00Z'), t('2026-03-12T12:00:00Z'))).toBe(60);
    expect(envelopeContextAgeSeconds(envelopeWith([], '2026-03-12T12:05:00Z'), t('2026-03-12T12:00:00Z'))).toBe(0);
  });

  it('treats a missing created_at without records as 1980-01-01', () => {
    const env = envelopeWith([], null);
    const now = t('2026-03-12T12:00:00Z');
    expect(envelopeContextAgeSeconds(env, now)).toBe(now.sec - t('1980-01-01T00:00:00Z').sec);
  });

  it('is exact across decades at nanosecond boundaries (no float rounding)', () => {
    const env = envelopeWith(['1980-01-01T00:00:00.000000001Z']);
    const now = t('2026-03-12T12:00:00Z');
    const exact = (BigInt(now.sec) * 1_000_000_000n - (BigInt(env.records[0]!.retrieved_at.sec) * 1_000_000_000n + 1n)) / 1_000_000_000n;
    expect(envelopeContextAgeSeconds(env, now)).toBe(Number(exact));
  });

  it("saturates like Go's time.Duration for spans beyond ~292 years", () => {
    const env = envelopeWith(['1980-01-01T00:00:00Z']);
    expect(envelopeContextAgeSeconds(env, t('2400-01-01T00:00:00Z'))).toBe(9223372036);
  });
});
