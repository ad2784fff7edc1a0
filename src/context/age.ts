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
