import { isZeroTime, type GoTime } from '../canon/index.js';
import type { ContextEnvelope } from './types.js';

/** Go's time.Duration saturates at maxInt64 nanoseconds; `Duration.Seconds()` then truncates to this. */
const MAX_DURATION_SECONDS = 9223372036;

/**
 * `envelopeContextAgeSeconds` (`gate.md` §4.4): the age of the oldest evidence, in whole seconds.
 * It is the maximum over records of floor(now − retrieved_at); a record retrieved in the future or
 * at the zero time counts 0. With no records the envelope's `created_at` is used the same way (a
 * missing created_at was normalized to 1980, so such an envelope is very stale).
 */
export function envelopeContextAgeSeconds(envelope: ContextEnvelope, now: GoTime): number {
  if (envelope.records.length === 0) return ageSeconds(envelope.created_at, now);
  let age = 0;
  for (const record of envelope.records) age = Math.max(age, ageSeconds(record.retrieved_at, now));
  return age;
}

/**
 * Whole seconds from `then` to `now`, floored, never negative. Computed on (sec, nsec) integers:
 * going through a float nanosecond count would lose precision for spans of decades and could be
 * one second off.
 */
function ageSeconds(then: GoTime, now: GoTime): number {
  if (isZeroTime(then)) return 0;
  let seconds = now.sec - then.sec;
  if (now.nsec < then.nsec) seconds -= 1;
  if (seconds < 0) return 0;
  return Math.min(seconds, MAX_DURATION_SECONDS);
}

/**
 * How far in the future (in seconds) an envelope's evidence may be dated and still be bound:
 * five minutes of clock skew between the producer that stamped `retrieved_at` and the gate.
 */
export const CONTEXT_CLOCK_SKEW_SECONDS = 300;

/** A timestamp that freshness would be computed from, dated after `now` + skew. */
export interface FutureEvidence {
  /** `retrieved_at` of a record, or the envelope's `created_at` when it has no records. */
  field: 'retrieved_at' | 'created_at';
  /** The record's `ref_id` ("" for `created_at`). */
  refId: string;
  time: GoTime;
}

/**
 * The first timestamp the age is computed from that lies more than `skewSeconds` after `now`:
 * every record's `retrieved_at`, or `created_at` when there are no records (records in sorted
 * order, so the answer does not depend on the input order). Such evidence would count as age 0,
 * i.e. perfectly fresh forever; `bindContextEvidence` refuses it.
 */
export function futureEvidence(envelope: ContextEnvelope, now: GoTime, skewSeconds = CONTEXT_CLOCK_SKEW_SECONDS): FutureEvidence | undefined {
  const limit = { sec: now.sec + skewSeconds, nsec: now.nsec };
  const after = (t: GoTime) => t.sec > limit.sec || (t.sec === limit.sec && t.nsec > limit.nsec);
  if (envelope.records.length === 0) {
    return after(envelope.created_at) ? { field: 'created_at', refId: '', time: envelope.created_at } : undefined;
  }
  for (const record of envelope.records) {
    if (after(record.retrieved_at)) return { field: 'retrieved_at', refId: record.ref_id, time: record.retrieved_at };
  }
  return undefined;
}
