import { daysFromCivil, type GoTime } from '../canon/index.js';

const formatters = new Map<string, Intl.DateTimeFormat | null>();

/** An IANA zone Go's `time.LoadLocation` would accept, as an Intl formatter; null when unknown. */
function formatterFor(zone: string): Intl.DateTimeFormat | null {
  let f = formatters.get(zone);
  if (f !== undefined) return f;
  const name = zone === 'Local' ? Intl.DateTimeFormat().resolvedOptions().timeZone : zone === '' ? 'UTC' : zone;
  try {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    f = null;
  }
  formatters.set(zone, f);
  return f;
}

export function isLoadableTimezone(zone: string): boolean {
  return formatterFor(zone) !== null;
}

/** Offset of `zone` from UTC, in seconds, at the given unix second. */
function offsetAt(f: Intl.DateTimeFormat, unixSec: number): number {
  const parts = f.formatToParts(new Date(unixSec * 1000));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const local = daysFromCivil(get('year'), get('month'), get('day')) * 86400 + get('hour') * 3600 + get('minute') * 60 + get('second');
  return local - unixSec;
}

const LOCAL_WALL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/**
 * `time.ParseInLocation("2006-01-02T15:04:05", text, zone)`: the instant of a local wall time, or
 * undefined when the text does not parse or the zone is unknown.
 */
export function parseLocalWallTime(text: string, zone: string): GoTime | undefined {
  const f = formatterFor(zone);
  const m = LOCAL_WALL.exec(text);
  if (!f || !m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate() || h > 23 || mi > 59 || s > 59) {
    return undefined;
  }
  const wall = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  let offset = offsetAt(f, wall);
  const second = offsetAt(f, wall - offset);
  if (second !== offset) offset = second;
  return { sec: wall - offset, nsec: 0, offset: 0 };
}
