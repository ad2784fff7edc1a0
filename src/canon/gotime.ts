import { ERROR_CODES, WardError } from '../errors.js';

/**
 * A Go `time.Time` as far as serialization is concerned: an instant with nanosecond precision and
 * the zone offset it was written with. JS `Date` keeps only milliseconds and no offset, so digests
 * over times must go through this type (`gate.md` §0.2).
 */
export interface GoTime {
  /** Unix seconds (an integer; year 1 is -62135596800, well inside float64's exact range). */
  readonly sec: number;
  /** Nanoseconds within the second, 0..999999999. */
  readonly nsec: number;
  /** Offset east of UTC in seconds; 0 renders as `Z`. */
  readonly offset: number;
}

const ZERO_SEC = -62135596800;
export const ZERO_TIME: GoTime = Object.freeze({ sec: ZERO_SEC, nsec: 0, offset: 0 });
/** The reference's stand-in for a missing created_at. */
export const EPOCH_1980: GoTime = Object.freeze({ sec: 315532800, nsec: 0, offset: 0 });

export function isZeroTime(t: GoTime): boolean {
  return t.sec === ZERO_SEC && t.nsec === 0;
}

export function toUTC(t: GoTime): GoTime {
  return t.offset === 0 ? t : { sec: t.sec, nsec: t.nsec, offset: 0 };
}

/** Compare instants (offsets ignored). */
export function compareTime(a: GoTime, b: GoTime): number {
  if (a.sec !== b.sec) return a.sec < b.sec ? -1 : 1;
  return a.nsec === b.nsec ? 0 : a.nsec < b.nsec ? -1 : 1;
}

// Go's Duration is an int64 of nanoseconds; Time.Sub saturates at these bounds (about ±292 years).
const MAX_DURATION_SEC = 9223372036;
const MAX_DURATION_NSEC = 854775807;
const MIN_DURATION_NSEC = -854775808;

/**
 * Whole seconds from a to b exactly as Go's `int(b.Sub(a).Seconds())`: the difference is an int64
 * of nanoseconds (saturating at ±292 years), `Seconds()` is `float64(d/1e9) + float64(d%1e9)/1e9`
 * and the int conversion truncates toward zero. Computed on (seconds, nanoseconds) parts so that
 * no precision is lost for spans beyond 2^53 ns (~104 days).
 */
export function secondsBetween(a: GoTime, b: GoTime): number {
  let sec = b.sec - a.sec;
  let nsec = b.nsec - a.nsec;
  // Give both parts the same sign, as Go's truncating `d / Second` and `d % Second` do.
  if (sec > 0 && nsec < 0) {
    sec -= 1;
    nsec += 1e9;
  } else if (sec < 0 && nsec > 0) {
    sec += 1;
    nsec -= 1e9;
  }
  if (sec > MAX_DURATION_SEC || (sec === MAX_DURATION_SEC && nsec > MAX_DURATION_NSEC)) {
    sec = MAX_DURATION_SEC;
    nsec = MAX_DURATION_NSEC;
  } else if (sec < -MAX_DURATION_SEC || (sec === -MAX_DURATION_SEC && nsec < MIN_DURATION_NSEC)) {
    sec = -MAX_DURATION_SEC;
    nsec = MIN_DURATION_NSEC;
  }
  return Math.trunc(sec + nsec / 1e9) + 0;
}

export function addSeconds(t: GoTime, seconds: number): GoTime {
  const whole = Math.floor(seconds);
  let nsec = t.nsec + Math.round((seconds - whole) * 1e9);
  let sec = t.sec + whole;
  if (nsec >= 1e9) {
    sec += 1;
    nsec -= 1e9;
  }
  return { sec, nsec, offset: t.offset };
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * RFC 3339 exactly as Go accepts it, both in `time.Parse(time.RFC3339Nano, s)` and in
 * `time.Time.UnmarshalJSON`. Go tries a strict fast path first and, when that fails, falls back to
 * its generic layout parser, whose extra leniencies are therefore part of the contract (Go's
 * stricter re-checks, golang/go#54580, are disabled):
 * - uppercase `T` and `Z` only, no space separator, no empty string;
 * - the hour may have one digit (`T9:04:05Z`), the other fields need exactly two;
 * - hour 24, minute 60 and second 60 are rejected, and so are impossible dates (Feb 30);
 * - the fraction may use `.` or `,`, has any number of digits and is truncated (not rounded) to 9;
 * - the offset hour may be 00..24 and the offset minute 00..60 (`+24:00` and `+23:60` parse);
 * - an offset of `+00:00` or `-00:00` is UTC and formats back as `Z`.
 */
export function parseRFC3339(text: string): GoTime {
  const m = RFC3339.exec(text);
  if (!m) throw badTime(text);
  const [, ys, mos, ds, hs, mis, ss, frac, zone] = m as unknown as string[];
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw badTime(text);
  }
  let offset = 0;
  if (zone !== 'Z') {
    const oh = Number(zone!.slice(1, 3));
    const om = Number(zone!.slice(4, 6));
    if (oh > 24 || om > 60) throw badTime(text);
    const abs = oh * 3600 + om * 60;
    offset = zone![0] === '-' && abs !== 0 ? -abs : abs;
  }
  const nsec = frac ? Number(frac.slice(0, 9).padEnd(9, '0')) : 0;
  const local = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return { sec: local - offset, nsec, offset };
}

/** Decode a JSON time field the way Go does: null/absent is the zero time; anything else must parse. */
export function parseJsonTime(value: unknown, field: string): GoTime {
  if (value === undefined || value === null) return ZERO_TIME;
  if (typeof value !== 'string') {
    throw new WardError(ERROR_CODES.TIME_INVALID, `${field}: time must be an RFC 3339 string`);
  }
  try {
    return parseRFC3339(value);
  } catch {
    throw new WardError(ERROR_CODES.TIME_INVALID, `${field}: parsing time ${JSON.stringify(value)} as RFC 3339 failed`);
  }
}

/** Go `t.Format(time.RFC3339Nano)`: trailing fraction zeros trimmed, `Z` for a zero offset. */
export function formatRFC3339Nano(t: GoTime): string {
  const local = t.sec + t.offset;
  const days = Math.floor(local / 86400);
  const secOfDay = local - days * 86400;
  const [y, mo, d] = civilFromDays(days);
  const hh = Math.floor(secOfDay / 3600);
  const mm = Math.floor((secOfDay % 3600) / 60);
  const ss = secOfDay % 60;
  let out = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}`;
  if (t.nsec !== 0) out += '.' + String(t.nsec).padStart(9, '0').replace(/0+$/, '');
  if (t.offset === 0) return out + 'Z';
  // Go: zone := offset / 60 (truncating), then sign, hours and minutes of |zone|.
  const zone = Math.trunc(t.offset / 60);
  const absZone = Math.abs(zone);
  return `${out}${zone < 0 ? '-' : '+'}${pad(Math.floor(absZone / 60), 2)}:${pad(absZone % 60, 2)}`;
}

/** Format in UTC with second precision (`time.RFC3339` of a UTC time), as used in rate-limit keys. */
export function formatRFC3339Seconds(t: GoTime): string {
  return formatRFC3339Nano({ sec: t.sec, nsec: 0, offset: 0 });
}

export function fromEpochMillis(ms: number): GoTime {
  const sec = Math.floor(ms / 1000);
  return { sec, nsec: Math.round((ms - sec * 1000) * 1e6), offset: 0 };
}

export function toEpochMillis(t: GoTime): number {
  return t.sec * 1000 + Math.floor(t.nsec / 1e6);
}

const hrtimeOrigin = process.hrtime.bigint();
const wallOriginNs = BigInt(Date.now()) * 1_000_000n;

/** The wall clock in UTC with nanosecond resolution (monotonic within a process). */
export function nowUTC(): GoTime {
  const ns = wallOriginNs + (process.hrtime.bigint() - hrtimeOrigin);
  return { sec: Number(ns / 1_000_000_000n), nsec: Number(ns % 1_000_000_000n), offset: 0 };
}

function badTime(text: string): WardError {
  return new WardError(ERROR_CODES.TIME_INVALID, `parsing time ${JSON.stringify(text)} as RFC 3339 failed`);
}

/** Go's appendInt: a '-' for negatives, then the magnitude zero-padded to `width`. */
function pad(n: number, width: number): string {
  return n < 0 ? '-' + String(-n).padStart(width, '0') : String(n).padStart(width, '0');
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysIn(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

// Howard Hinnant's civil-date algorithms: exact for the proleptic Gregorian calendar.
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}
