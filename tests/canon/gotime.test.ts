import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addSeconds,
  civilFromDays,
  compareTime,
  daysFromCivil,
  EPOCH_1980,
  formatRFC3339Nano,
  formatRFC3339Seconds,
  fromEpochMillis,
  isZeroTime,
  nowUTC,
  parseJsonTime,
  parseRFC3339,
  secondsBetween,
  toEpochMillis,
  toUTC,
  ZERO_TIME,
  type GoTime,
} from '../../src/canon/gotime.js';
import * as canon from '../../src/canon/index.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';

function t(sec: number, nsec = 0, offset = 0): GoTime {
  return { sec, nsec, offset };
}

function expectTimeError(fn: () => unknown): WardError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, 'expected a WardError').toBeInstanceOf(WardError);
  expect((caught as WardError).code).toBe(ERROR_CODES.TIME_INVALID);
  return caught as WardError;
}

const YEAR1_SEC = -62135596800; // 0001-01-01T00:00:00Z
const YEAR10000_SEC = 253402300800; // 10000-01-01T00:00:00Z

describe('formatRFC3339Nano (Go time.RFC3339Nano)', () => {
  it('trims trailing zeros of the fraction and drops an all-zero fraction', () => {
    const base = Date.UTC(2026, 2, 12, 10, 59, 0) / 1000;
    expect(formatRFC3339Nano(t(base))).toBe('2026-03-12T10:59:00Z');
    expect(formatRFC3339Nano(t(base, 500_000_000))).toBe('2026-03-12T10:59:00.5Z');
    expect(formatRFC3339Nano(t(base, 120_000_000))).toBe('2026-03-12T10:59:00.12Z');
    expect(formatRFC3339Nano(t(base, 1))).toBe('2026-03-12T10:59:00.000000001Z');
    expect(formatRFC3339Nano(t(base, 100))).toBe('2026-03-12T10:59:00.0000001Z');
    expect(formatRFC3339Nano(t(base, 999_999_999))).toBe('2026-03-12T10:59:00.999999999Z');
  });

  it('writes Z for a zero offset and ±hh:mm otherwise', () => {
    const utc = parseRFC3339('2026-03-12T10:59:00.5Z');
    expect(formatRFC3339Nano({ ...utc, offset: 0 })).toBe('2026-03-12T10:59:00.5Z');
    expect(formatRFC3339Nano({ ...utc, offset: -0 })).toBe('2026-03-12T10:59:00.5Z');
    expect(formatRFC3339Nano({ ...utc, offset: 3600 })).toBe('2026-03-12T11:59:00.5+01:00');
    expect(formatRFC3339Nano({ ...utc, offset: 5 * 3600 + 1800 })).toBe('2026-03-12T16:29:00.5+05:30');
    expect(formatRFC3339Nano({ ...utc, offset: -8 * 3600 })).toBe('2026-03-12T02:59:00.5-08:00');
    expect(formatRFC3339Nano({ ...utc, offset: -(9 * 3600 + 30 * 60) })).toBe('2026-03-12T01:29:00.5-09:30');
    // Go truncates the offset to whole minutes toward zero before printing it.
    expect(formatRFC3339Nano({ ...utc, offset: -30 })).toBe('2026-03-12T10:58:30.5+00:00');
    expect(formatRFC3339Nano({ ...utc, offset: 24 * 3600 })).toBe('2026-03-13T10:59:00.5+24:00');
  });

  it('writes the zero time as 0001-01-01T00:00:00Z, and it is the zero time', () => {
    expect(formatRFC3339Nano(ZERO_TIME)).toBe('0001-01-01T00:00:00Z');
    expect(ZERO_TIME.sec).toBe(YEAR1_SEC);
    expect(isZeroTime(ZERO_TIME)).toBe(true);
    expect(isZeroTime(parseRFC3339('0001-01-01T00:00:00Z'))).toBe(true);
    // The same instant written with an offset is still Go's zero time (IsZero ignores the zone).
    expect(isZeroTime(parseRFC3339('0001-01-01T01:00:00+01:00'))).toBe(true);
    expect(isZeroTime(t(YEAR1_SEC, 1))).toBe(false);
    expect(Object.isFrozen(ZERO_TIME)).toBe(true);
  });

  it('writes EPOCH_1980 as 1980-01-01T00:00:00Z', () => {
    expect(formatRFC3339Nano(EPOCH_1980)).toBe('1980-01-01T00:00:00Z');
    expect(isZeroTime(EPOCH_1980)).toBe(false);
  });

  it('pads years like Go: 4 digits, a sign for negative years, more digits past 9999', () => {
    expect(formatRFC3339Nano(parseRFC3339('0000-01-01T00:00:00Z'))).toBe('0000-01-01T00:00:00Z');
    expect(formatRFC3339Nano(parseRFC3339('0999-12-31T23:59:59Z'))).toBe('0999-12-31T23:59:59Z');
    expect(formatRFC3339Nano(parseRFC3339('9999-12-31T23:59:59.999999999Z'))).toBe('9999-12-31T23:59:59.999999999Z');
    expect(formatRFC3339Nano(t(YEAR10000_SEC))).toBe('10000-01-01T00:00:00Z');
    // One day before 0000-01-01 is 31 December of year -1 (proleptic Gregorian, astronomical years).
    const year0 = parseRFC3339('0000-01-01T00:00:00Z');
    expect(formatRFC3339Nano(addSeconds(year0, -86400))).toBe('-0001-12-31T00:00:00Z');
  });

  it('formatRFC3339Seconds drops the fraction and the zone', () => {
    const x = parseRFC3339('2026-03-12T11:59:00.5+01:00');
    expect(formatRFC3339Seconds(x)).toBe('2026-03-12T10:59:00Z');
  });
});

describe('parseRFC3339 (Go time.Parse(RFC3339Nano) / Time.UnmarshalJSON)', () => {
  it.each([
    '2026-11-21T21:11:28.455778037Z',
    '2026-02-18T00:00:00Z',
    '2026-03-12T10:59:00.5Z',
    '2026-03-12T11:59:00.5+01:00',
    '2026-03-12T11:59:55+05:30',
    '2026-03-12T11:59:55-09:30',
    '0001-01-01T00:00:00Z',
    '1970-01-01T00:00:00.000000001Z',
    '1969-12-31T23:59:59.999999999Z',
    '9999-12-31T23:59:59.999999999-23:59',
    '2024-02-29T12:00:00Z',
    '2000-02-29T12:00:00Z',
  ])('round-trips %s', (text) => {
    expect(formatRFC3339Nano(parseRFC3339(text))).toBe(text);
  });

  it('keeps nanosecond precision and the written offset', () => {
    expect(parseRFC3339('2026-11-21T21:11:28.455778037Z')).toEqual({
      sec: Date.UTC(2026, 10, 21, 21, 11, 28) / 1000,
      nsec: 455778037,
      offset: 0,
    });
    const ist = parseRFC3339('2026-03-12T11:59:55+05:30');
    expect(ist.offset).toBe(19800);
    expect(ist.sec).toBe(Date.UTC(2026, 2, 12, 6, 29, 55) / 1000);
    expect(parseRFC3339('2026-03-12T11:59:55-05:30').offset).toBe(-19800);
  });

  it('treats +00:00 and -00:00 as UTC (formatted back as Z, offset +0)', () => {
    for (const text of ['2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00-00:00']) {
      const parsed = parseRFC3339(text);
      expect(Object.is(parsed.offset, 0)).toBe(true);
      expect(formatRFC3339Nano(parsed)).toBe('2026-01-01T00:00:00Z');
    }
  });

  it('truncates (never rounds) fractions longer than 9 digits, like Go', () => {
    expect(parseRFC3339('2026-01-01T00:00:00.1234567899Z').nsec).toBe(123456789);
    expect(parseRFC3339('2026-01-01T00:00:00.9999999999999Z').nsec).toBe(999999999);
    expect(parseRFC3339('2026-01-01T00:00:00.0000000009Z').nsec).toBe(0);
    expect(formatRFC3339Nano(parseRFC3339('2026-01-01T00:00:00.50000000000000Z'))).toBe('2026-01-01T00:00:00.5Z');
    expect(parseRFC3339('2026-01-01T00:00:00.000Z').nsec).toBe(0);
  });

  it('accepts a comma as the decimal separator, like Go', () => {
    const parsed = parseRFC3339('2026-01-01T00:00:00,25Z');
    expect(parsed.nsec).toBe(250_000_000);
    expect(formatRFC3339Nano(parsed)).toBe('2026-01-01T00:00:00.25Z');
  });

  it("accepts a one-digit hour, like Go's fallback layout parser", () => {
    expect(formatRFC3339Nano(parseRFC3339('2026-01-01T9:04:05Z'))).toBe('2026-01-01T09:04:05Z');
    expect(formatRFC3339Nano(parseRFC3339('2026-01-01T0:00:00.5+01:00'))).toBe('2026-01-01T00:00:00.5+01:00');
  });

  it("accepts offset hour 24 and offset minute 60, like Go's fallback layout parser", () => {
    expect(parseRFC3339('2026-01-02T00:00:00+24:00').offset).toBe(86400);
    expect(formatRFC3339Nano(parseRFC3339('2026-01-02T00:00:00+24:00'))).toBe('2026-01-02T00:00:00+24:00');
    expect(parseRFC3339('2026-01-02T00:00:00-23:60').offset).toBe(-86400);
    expect(formatRFC3339Nano(parseRFC3339('2026-01-02T00:00:00+23:60'))).toBe('2026-01-02T00:00:00+24:00');
    expect(toUTC(parseRFC3339('2026-01-02T00:00:00+24:00'))).toEqual(parseRFC3339('2026-01-01T00:00:00Z'));
  });

  it('handles leap years of the proleptic Gregorian calendar', () => {
    for (const year of ['2024', '2000', '1600', '0400', '0004', '0000']) {
      expect(() => parseRFC3339(`${year}-02-29T00:00:00Z`)).not.toThrow();
    }
    for (const year of ['2023', '1900', '2100', '1700', '0100', '0001']) {
      expectTimeError(() => parseRFC3339(`${year}-02-29T00:00:00Z`));
    }
    expect(formatRFC3339Nano(addSeconds(parseRFC3339('2024-02-28T12:00:00Z'), 86400))).toBe('2024-02-29T12:00:00Z');
    expect(formatRFC3339Nano(addSeconds(parseRFC3339('2023-02-28T12:00:00Z'), 86400))).toBe('2023-03-01T12:00:00Z');
  });

  it.each([
    ['empty string', ''],
    ['lowercase t', '2026-01-01t00:00:00Z'],
    ['lowercase z', '2026-01-01T00:00:00z'],
    ['space separator', '2026-01-01 00:00:00Z'],
    ['no zone', '2026-01-01T00:00:00'],
    ['no seconds', '2026-01-01T00:00Z'],
    ['date only', '2026-01-01'],
    ['Feb 30', '2026-02-30T00:00:00Z'],
    ['Apr 31', '2026-04-31T00:00:00Z'],
    ['day 00', '2026-01-00T00:00:00Z'],
    ['day 32', '2026-01-32T00:00:00Z'],
    ['month 00', '2026-00-10T00:00:00Z'],
    ['month 13', '2026-13-10T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['minute 60', '2026-01-01T00:60:00Z'],
    ['second 60 (leap second)', '2016-12-31T23:59:60Z'],
    ['three-digit hour', '2026-01-01T001:00:00Z'],
    ['one-digit minute', '2026-01-01T00:0:00Z'],
    ['one-digit month', '2026-1-01T00:00:00Z'],
    ['two-digit year', '26-01-01T00:00:00Z'],
    ['five-digit year', '12026-01-01T00:00:00Z'],
    ['negative year', '-0001-01-01T00:00:00Z'],
    ['offset without colon', '2026-01-01T00:00:00+0530'],
    ['offset hours only', '2026-01-01T00:00:00+05'],
    ['offset with seconds', '2026-01-01T00:00:00+05:30:00'],
    ['offset hour 25', '2026-01-01T00:00:00+25:00'],
    ['offset minute 61', '2026-01-01T00:00:00+01:61'],
    ['Z and offset', '2026-01-01T00:00:00Z+01:00'],
    ['fraction without digits', '2026-01-01T00:00:00.Z'],
    ['fraction separator only before the zone', '2026-01-01T00:00:00.+01:00'],
    ['fraction on minutes', '2026-01-01T00:00.5Z'],
    ['leading space', ' 2026-01-01T00:00:00Z'],
    ['trailing space', '2026-01-01T00:00:00Z '],
    ['trailing newline', '2026-01-01T00:00:00Z\n'],
    ['non-ASCII digits', '２０２６-01-01T00:00:00Z'],
    ['UTC name', '2026-01-01T00:00:00UTC'],
  ])('rejects %s', (_label, text) => {
    const err = expectTimeError(() => parseRFC3339(text));
    expect(err.message).toBe(`parsing time ${JSON.stringify(text)} as RFC 3339 failed`);
  });
});

describe('parseJsonTime (Go JSON decoding of a time.Time field)', () => {
  it('maps null and absent to the zero time', () => {
    expect(parseJsonTime(null, 'created_at')).toBe(ZERO_TIME);
    expect(parseJsonTime(undefined, 'created_at')).toBe(ZERO_TIME);
  });

  it('parses strings strictly and names the field on failure', () => {
    expect(formatRFC3339Nano(parseJsonTime('2026-02-18T00:00:00Z', 'created_at'))).toBe('2026-02-18T00:00:00Z');
    expect(expectTimeError(() => parseJsonTime('', 'created_at')).message).toBe(
      'created_at: parsing time "" as RFC 3339 failed',
    );
    expect(expectTimeError(() => parseJsonTime('2026-02-18 00:00:00Z', 'x.y')).message).toMatch(/^x\.y: /);
  });

  it.each([[0], [1700000000], [true], [{}], [[]]])('rejects the non-string %j', (value) => {
    expect(expectTimeError(() => parseJsonTime(value, 'created_at')).message).toBe(
      'created_at: time must be an RFC 3339 string',
    );
  });
});

describe('toUTC, compareTime, addSeconds', () => {
  it('toUTC keeps the instant and sets the offset to 0 (Z)', () => {
    const local = parseRFC3339('2026-03-12T11:59:00.5+01:00');
    const utc = toUTC(local);
    expect(utc).toEqual({ sec: local.sec, nsec: local.nsec, offset: 0 });
    expect(formatRFC3339Nano(utc)).toBe('2026-03-12T10:59:00.5Z');
    expect(local.offset).toBe(3600); // not mutated
    const already = parseRFC3339('2026-03-12T10:59:00Z');
    expect(toUTC(already)).toBe(already);
  });

  it('compareTime orders instants and ignores offsets', () => {
    const a = parseRFC3339('2026-03-12T11:00:00+01:00');
    const b = parseRFC3339('2026-03-12T10:00:00Z');
    expect(compareTime(a, b)).toBe(0);
    expect(compareTime(b, parseRFC3339('2026-03-12T10:00:00.000000001Z'))).toBe(-1);
    expect(compareTime(parseRFC3339('2026-03-12T10:00:01Z'), b)).toBe(1);
    expect(compareTime(ZERO_TIME, EPOCH_1980)).toBe(-1);
  });

  it('addSeconds handles fractions, negatives and carries, and keeps the offset', () => {
    const x = parseRFC3339('2026-03-12T10:59:59.75+01:00');
    expect(formatRFC3339Nano(addSeconds(x, 1))).toBe('2026-03-12T11:00:00.75+01:00');
    expect(formatRFC3339Nano(addSeconds(x, 0.25))).toBe('2026-03-12T11:00:00+01:00');
    expect(formatRFC3339Nano(addSeconds(x, -0.75))).toBe('2026-03-12T10:59:59+01:00');
    expect(formatRFC3339Nano(addSeconds(x, -86400))).toBe('2026-03-11T10:59:59.75+01:00');
    expect(formatRFC3339Nano(addSeconds(x, 3600 * 24 * 365))).toBe('2027-03-12T10:59:59.75+01:00');
  });
});

/** Go's int(b.Sub(a).Seconds()) computed with BigInt int64 arithmetic, as the reference. */
function goSecondsBetween(a: GoTime, b: GoTime): number {
  const MAX = 9223372036854775807n;
  const MIN = -9223372036854775808n;
  let d = (BigInt(b.sec) - BigInt(a.sec)) * 1_000_000_000n + BigInt(b.nsec - a.nsec);
  if (d > MAX) d = MAX;
  if (d < MIN) d = MIN;
  const sec = d / 1_000_000_000n; // BigInt division truncates toward zero, as Go's does
  const nsec = d % 1_000_000_000n;
  return Math.trunc(Number(sec) + Number(nsec) / 1e9) + 0; // Go ints have no -0
}

describe('secondsBetween (Go int(b.Sub(a).Seconds()))', () => {
  it('truncates toward zero', () => {
    const a = parseRFC3339('2026-03-12T10:00:00Z');
    expect(secondsBetween(a, parseRFC3339('2026-03-12T10:00:01.999999999Z'))).toBe(1);
    expect(secondsBetween(a, parseRFC3339('2026-03-12T10:00:00.5Z'))).toBe(0);
    expect(secondsBetween(parseRFC3339('2026-03-12T10:00:01.999999999Z'), a)).toBe(-1);
    expect(Object.is(secondsBetween(parseRFC3339('2026-03-12T10:00:00.5Z'), a), 0)).toBe(true);
    expect(secondsBetween(a, a)).toBe(0);
  });

  it('ignores offsets (instants only)', () => {
    const a = parseRFC3339('2026-03-12T11:59:00.5+01:00');
    const b = parseRFC3339('2026-03-12T12:00:00Z');
    expect(secondsBetween(a, b)).toBe(3659); // spec V7: context_age_seconds
  });

  it('stays exact beyond 2^53 nanoseconds (~104 days)', () => {
    const a = parseRFC3339('2026-01-01T00:00:00Z');
    const b = parseRFC3339('2026-04-26T17:46:40.999999999Z'); // 10^7 s + 0.999999999 s later
    expect(secondsBetween(a, b)).toBe(10_000_000);
    expect(secondsBetween(b, a)).toBe(-10_000_000);
  });

  it('saturates like Go Duration (about ±292 years)', () => {
    expect(secondsBetween(ZERO_TIME, EPOCH_1980)).toBe(9223372036);
    expect(secondsBetween(EPOCH_1980, ZERO_TIME)).toBe(-9223372036);
  });

  it('matches the BigInt reference for arbitrary instants (property)', () => {
    const instant = fc.record({
      sec: fc.integer({ min: YEAR1_SEC, max: YEAR10000_SEC - 1 }),
      nsec: fc.integer({ min: 0, max: 999_999_999 }),
      offset: fc.constant(0),
    });
    const near = (x: GoTime) =>
      fc
        .record({ ds: fc.integer({ min: -20_000_000_000, max: 20_000_000_000 }), nsec: fc.integer({ min: 0, max: 999_999_999 }) })
        .map(({ ds, nsec }) => ({ sec: x.sec + ds, nsec, offset: 0 }));
    fc.assert(
      fc.property(
        instant.chain((a) => fc.tuple(fc.constant(a), fc.oneof(instant, near(a)))),
        ([a, b]) => {
          expect(secondsBetween(a, b)).toBe(goSecondsBetween(a, b));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('epoch millis and nowUTC', () => {
  it('fromEpochMillis / toEpochMillis round-trip, including before 1970', () => {
    for (const ms of [0, 1, -1, 1_700_000_000_123, -62135596800000, Date.UTC(1969, 11, 31, 23, 59, 59, 999)]) {
      const x = fromEpochMillis(ms);
      expect(x.nsec).toBeGreaterThanOrEqual(0);
      expect(x.nsec).toBeLessThan(1e9);
      expect(toEpochMillis(x)).toBe(ms);
    }
    expect(formatRFC3339Nano(fromEpochMillis(-1))).toBe('1969-12-31T23:59:59.999Z');
  });

  it('nowUTC is UTC, close to Date.now() and non-decreasing', () => {
    const before = Date.now();
    const a = nowUTC();
    const b = nowUTC();
    const after = Date.now();
    expect(a.offset).toBe(0);
    expect(Number.isInteger(a.nsec) && a.nsec >= 0 && a.nsec < 1e9).toBe(true);
    expect(toEpochMillis(a)).toBeGreaterThanOrEqual(before - 50);
    expect(toEpochMillis(a)).toBeLessThanOrEqual(after + 50);
    expect(compareTime(a, b)).toBeLessThanOrEqual(0);
    expect(formatRFC3339Nano(a)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
  });
});

// JS Date is exact (integer milliseconds, proleptic Gregorian) for ±8.64e15 ms: about ±273,790 years.
const DATE_MIN_DAY = -100_000_000;
const DATE_MAX_DAY = 100_000_000;

function dateOfDay(z: number): [number, number, number] {
  const d = new Date(z * 86_400_000);
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
}

describe('civil-date algorithm vs JS Date (property)', () => {
  it('civilFromDays agrees with Date over its whole range', () => {
    fc.assert(
      fc.property(fc.integer({ min: DATE_MIN_DAY, max: DATE_MAX_DAY }), (z) => {
        expect(civilFromDays(z)).toEqual(dateOfDay(z));
      }),
      { numRuns: 5000 },
    );
  });

  it('daysFromCivil is the inverse and agrees with Date.UTC for every valid date', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -270_000, max: 270_000 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        (y, m, d) => {
          const probe = new Date(0);
          probe.setUTCFullYear(y, m - 1, d); // not Date.UTC: it maps years 0..99 to 1900..1999
          if (probe.getUTCDate() !== d) return; // e.g. Feb 30: Date rolls over, Go rejects
          const z = daysFromCivil(y, m, d);
          expect(z * 86_400_000).toBe(probe.getTime());
          expect(civilFromDays(z)).toEqual([y, m, d]);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('is exact day by day across every year from 1 to 2100 and around the epoch', () => {
    const start = daysFromCivil(1, 1, 1);
    const end = daysFromCivil(2100, 12, 31);
    for (let z = start; z <= end; z++) {
      const [y, m, d] = civilFromDays(z);
      const [ey, em, ed] = dateOfDay(z);
      if (y !== ey || m !== em || d !== ed) expect([y, m, d]).toEqual([ey, em, ed]);
      if (daysFromCivil(y, m, d) !== z) expect(daysFromCivil(y, m, d)).toBe(z);
    }
  });

  it('formatRFC3339Nano agrees with Date.toISOString for millisecond instants in years 1..9999', () => {
    const minMs = YEAR1_SEC * 1000;
    const maxMs = YEAR10000_SEC * 1000 - 1;
    fc.assert(
      fc.property(fc.integer({ min: minMs, max: maxMs }), (ms) => {
        const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
        const expected = iso.replace(/\.(\d{3})Z$/, (_m, frac: string) => {
          const trimmed = frac.replace(/0+$/, '');
          return trimmed === '' ? 'Z' : `.${trimmed}Z`;
        });
        const x = fromEpochMillis(ms);
        expect(formatRFC3339Nano(x)).toBe(expected);
        expect(parseRFC3339(expected)).toEqual(x);
      }),
      { numRuns: 5000 },
    );
  });

  it('parse(format(t)) === t for arbitrary nanosecond instants and minute offsets', () => {
    const arb = fc.record({
      sec: fc.integer({ min: YEAR1_SEC + 86_400 * 2, max: YEAR10000_SEC - 86_400 * 2 }),
      nsec: fc.integer({ min: 0, max: 999_999_999 }),
      offset: fc.integer({ min: -24 * 60, max: 24 * 60 }).map((minutes) => minutes * 60 + 0),
    });
    fc.assert(
      fc.property(arb, (x) => {
        const text = formatRFC3339Nano(x);
        expect(parseRFC3339(text)).toEqual(x);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('public surface', () => {
  it('re-exports the time helpers from src/canon/index', () => {
    expect(canon.parseRFC3339).toBe(parseRFC3339);
    expect(canon.formatRFC3339Nano).toBe(formatRFC3339Nano);
    expect(canon.secondsBetween).toBe(secondsBetween);
    expect(canon.ZERO_TIME).toBe(ZERO_TIME);
  });
});
