import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addSeconds, formatRFC3339Nano } from '../../src/canon/index.js';
import {
  bindContextEvidence,
  CONTEXT_CLOCK_SKEW_SECONDS,
  futureEvidence,
  parseContextEnvelope,
  type ContextEnvelope,
} from '../../src/context/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { parseKillSwitchState } from '../../src/gate/kill-switch.js';
import { parseWrkrInventory } from '../../src/gate/wrkr.js';
import { fixture, t, v1Intent } from './helpers.js';

const V7 = fixture('envelopes/v7-envelope.json');

function wardError(fn: () => unknown): WardError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WardError);
    return err as WardError;
  }
  throw new Error('expected a WardError');
}

describe('parseContextEnvelope: repeated keys', () => {
  it('refuses a key repeated at the top, in a record or inside retrieval_params', () => {
    const cases: [string, string, string][] = [
      [V7.replace('"evidence_mode": "REQUIRED"', '"evidence_mode": "REQUIRED", "evidence_mode": "best_effort"'), 'evidence_mode', '$'],
      [V7.replace('"retrieved_at": "2026-03-12T11:59:55Z"', '"retrieved_at": "2026-03-12T11:59:55Z", "retrieved_at": "2099-01-01T00:00:00Z"'), 'retrieved_at', '$.records[1]'],
      [V7.replace('{"top_k": 5, "q": "x<y"}', '{"top_k": 5, "q": "x<y", "q": "other"}'), 'q', '$.records[0].retrieval_params'],
    ];
    for (const [text, key, path] of cases) {
      const err = wardError(() => parseContextEnvelope(text));
      expect(err.code).toBe(ERROR_CODES.ENVELOPE_INVALID);
      expect(err.exitCode).toBe(6);
      expect(err.message).toBe(`parse context envelope: duplicate key ${JSON.stringify(key)} at ${path}`);
      expect(err.details).toMatchObject({ duplicate_key: key });
    }
  });

  it('also from bytes, and the same envelope without the repeat still verifies', () => {
    const text = V7.replace('"context_set_id": "ctx-set-1"', '"context_set_id": "ctx-set-1", "context_set_id": "ctx-set-2"');
    expect(wardError(() => parseContextEnvelope(Buffer.from(text))).message).toContain('duplicate key "context_set_id" at $');
    expect(parseContextEnvelope(Buffer.from(V7)).context_set_id).toBe('ctx-set-1');
  });

  it('Wrkr inventories and kill-switch state (same strict decoder) refuse repeats too', () => {
    const wrkr = wardError(() => parseWrkrInventory('[{"tool_name":"a","data_class":"public","data_class":"secret"}]'));
    expect(wrkr.code).toBe(ERROR_CODES.WRKR_INVENTORY_INVALID);
    expect(wrkr.message).toContain('duplicate key "data_class" at $[0]');
    const ks = wardError(() => parseKillSwitchState('{"schema_id":"a","schema_id":"b"}'));
    expect(ks.code).toBe(ERROR_CODES.KILL_SWITCH_INVALID);
    expect(ks.message).toContain('duplicate key "schema_id" at $');
  });
});

/** V7 with its newest record (ctx-a, 11:59:55Z) moved to `retrievedAt`. */
function envelopeRetrievedAt(retrievedAt: string): ContextEnvelope {
  return parseContextEnvelope(V7.replace('"retrieved_at": "2026-03-12T11:59:55Z"', `"retrieved_at": ${JSON.stringify(retrievedAt)}`));
}

describe('bindContextEvidence: evidence dated in the future', () => {
  const NOON = t('2026-03-12T12:00:00Z');

  it('refuses a retrieved_at more than five minutes after the evaluation time, with a stable message and details', () => {
    const err = wardError(() => bindContextEvidence(v1Intent(), envelopeRetrievedAt('2026-03-12T12:05:00.000000001Z'), NOON));
    expect(err.code).toBe(ERROR_CODES.ENVELOPE_BINDING);
    expect(err.exitCode).toBe(6);
    expect(err.message).toBe(
      'context envelope retrieved_at is in the future: record "ctx-a" retrieved_at 2026-03-12T12:05:00.000000001Z is after the evaluation time 2026-03-12T12:00:00Z by more than the allowed clock skew (300s)',
    );
    expect(err.details).toEqual({
      envelope_problem: 'retrieved_at_in_future',
      ref_id: 'ctx-a',
      retrieved_at: '2026-03-12T12:05:00.000000001Z',
      evaluation_time: '2026-03-12T12:00:00Z',
      clock_skew_seconds: 300,
    });
  });

  it('binds a record up to exactly five minutes ahead (age 0: the other record is 3659 s old)', () => {
    const bound = bindContextEvidence(v1Intent(), envelopeRetrievedAt('2026-03-12T13:05:00+01:00'), NOON);
    expect(bound.intent.context.auth_context).toEqual({ context_age_seconds: 3659 });
  });

  it('without records, created_at (what the age is then computed from) is checked instead', () => {
    const empty = (createdAt: string) =>
      parseContextEnvelope(JSON.stringify({ context_set_id: 'x', evidence_mode: 'required', created_at: createdAt, records: [] }));
    const err = wardError(() => bindContextEvidence(v1Intent(), empty('2026-03-12T12:10:00Z'), NOON));
    expect(err.message).toBe(
      'context envelope created_at is in the future: created_at (no records) 2026-03-12T12:10:00Z is after the evaluation time 2026-03-12T12:00:00Z by more than the allowed clock skew (300s)',
    );
    expect(err.details).toMatchObject({ envelope_problem: 'created_at_in_future', created_at: '2026-03-12T12:10:00Z' });
    expect(bindContextEvidence(v1Intent(), empty('2026-03-12T12:04:00Z'), NOON).intent.context.auth_context).toEqual({ context_age_seconds: 0 });
    // With records, created_at is not used for freshness and is not checked.
    const future = parseContextEnvelope(V7.replace('"created_at": "2026-03-12T11:59:55Z"', '"created_at": "2030-01-01T00:00:00Z"'));
    expect(bindContextEvidence(v1Intent(), future, NOON).intent.context.auth_context).toEqual({ context_age_seconds: 3659 });
  });

  it('property: bound exactly when every record is at most the skew ahead of now, whatever the record order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -100_000, max: 1_000 }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 999_999_999 }), (offsets, nanos) => {
        const now = { ...t('2026-06-01T00:00:00Z'), nsec: nanos };
        const records = offsets.map((offset, i) => ({
          ref_id: `r${i}`,
          source_type: 'doc',
          source_locator: `docs://${i}`,
          query_digest: 'a'.repeat(64),
          content_digest: 'b'.repeat(64),
          retrieved_at: formatRFC3339Nano(addSeconds(now, offset)),
          redaction_mode: 'hashes',
        }));
        const envelope = parseContextEnvelope(JSON.stringify({ context_set_id: 'p', records }));
        const expectRefused = offsets.some((o) => o > CONTEXT_CLOCK_SKEW_SECONDS);
        expect(futureEvidence(envelope, now) !== undefined).toBe(expectRefused);
        if (expectRefused) expect(() => bindContextEvidence(v1Intent(), envelope, now)).toThrow(/retrieved_at is in the future/);
        else expect(bindContextEvidence(v1Intent(), envelope, now).intent.context.auth_context).toEqual({ context_age_seconds: Math.max(0, ...offsets.map((o) => -o)) });
      }),
      { numRuns: 300 },
    );
  });
});
