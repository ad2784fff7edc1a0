import { ERROR_CODES, WardError } from '../errors.js';
import type { GoTime } from './gotime.js';

/**
 * Go `time.ParseDuration` and `time.Duration.String`, exactly: `mcp_trust.max_age` is parsed and
 * re-rendered canonically (`24h` → `24h0m0s`), and the rendered text is part of the policy digest;
 * token TTLs (`--ttl 1h30m`) use the same parser. Durations are int64 nanoseconds in Go, so they
 * are bigints here.
 */
export class DurationError extends WardError {
  constructor(message: string) {
    super(ERROR_CODES.USAGE, message);
  }
}

/** `t + d` keeping t's offset. */
export function addDuration(t: GoTime, ns: bigint): GoTime {
  const total = BigInt(t.sec) * 1_000_000_000n + BigInt(t.nsec) + ns;
  let sec = total / 1_000_000_000n;
  let nsec = total % 1_000_000_000n;
  if (nsec < 0n) {
    nsec += 1_000_000_000n;
    sec -= 1n;
  }
  return { sec: Number(sec), nsec: Number(nsec), offset: t.offset };
}

const MAX_INT64 = (1n << 63n) - 1n;
const OVERFLOW = 1n << 63n;

const NANOSECOND = 1n;
const MICROSECOND = 1000n * NANOSECOND;
const MILLISECOND = 1000n * MICROSECOND;
const SECOND = 1000n * MILLISECOND;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', NANOSECOND],
  ['us', MICROSECOND],
  ['\u00b5s', MICROSECOND],
  ['\u03bcs', MICROSECOND],
  ['ms', MILLISECOND],
  ['s', SECOND],
  ['m', MINUTE],
  ['h', HOUR],
]);

/** Parse a Go duration string into nanoseconds; errors carry Go's message text. */
export function parseGoDuration(text: string): bigint {
  const invalid = () => new DurationError('time: invalid duration ' + timeQuote(text));
  let s = text;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0] as string))) throw invalid();
    const before = s.length;
    const whole = leadingInt(s);
    if (whole === undefined) throw invalid();
    let v = whole.value;
    s = whole.rest;
    const pre = before !== s.length;
    let post = false;
    let fraction = 0n;
    let scale = 1;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      const fracStart = s.length;
      const frac = leadingFraction(s);
      fraction = frac.value;
      scale = frac.scale;
      s = frac.rest;
      post = fracStart !== s.length;
    }
    if (!pre && !post) throw invalid();
    let i = 0;
    while (i < s.length && !(s[i] === '.' || isDigit(s[i] as string))) i++;
    if (i === 0) throw new DurationError('time: missing unit in duration ' + timeQuote(text));
    const unitText = s.slice(0, i);
    s = s.slice(i);
    const unit = UNITS.get(unitText);
    if (unit === undefined) {
      throw new DurationError('time: unknown unit ' + timeQuote(unitText) + ' in duration ' + timeQuote(text));
    }
    if (v > OVERFLOW / unit) throw invalid();
    v *= unit;
    if (fraction > 0n) {
      // Go computes the fractional part in float64 (exact to the nanosecond up to hours).
      v += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (v > OVERFLOW) throw invalid();
    }
    total += v;
    if (total > OVERFLOW) throw invalid();
  }
  if (neg) return -total;
  if (total > MAX_INT64) throw invalid();
  return total;
}

/** Go `Duration.String()`: `72h3m0.5s`, `1.5ms`, `0s`. */
export function formatGoDuration(nanos: bigint): string {
  const neg = nanos < 0n;
  let u = neg ? -nanos : nanos;
  let out: string;
  if (u < SECOND) {
    if (u === 0n) return '0s';
    let prec: number;
    let unit: string;
    if (u < MICROSECOND) {
      prec = 0;
      unit = 'ns';
    } else if (u < MILLISECOND) {
      prec = 3;
      unit = '\u00b5s';
    } else {
      prec = 6;
      unit = 'ms';
    }
    const frac = formatFraction(u, prec);
    out = frac.whole.toString() + frac.text + unit;
  } else {
    const frac = formatFraction(u, 9);
    u = frac.whole;
    out = (u % 60n).toString() + frac.text + 's';
    u /= 60n;
    if (u > 0n) {
      out = (u % 60n).toString() + 'm' + out;
      u /= 60n;
      if (u > 0n) out = u.toString() + 'h' + out;
    }
  }
  return neg ? '-' + out : out;
}

function formatFraction(value: bigint, prec: number): { text: string; whole: bigint } {
  let v = value;
  let digits = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print ||= digit !== 0n;
    if (print) digits = digit.toString() + digits;
    v /= 10n;
  }
  return { text: print ? '.' + digits : '', whole: v };
}

function isDigit(ch: string): boolean {
  return ch >= '0' && ch <= '9';
}

function leadingInt(s: string): { value: bigint; rest: string } | undefined {
  let x = 0n;
  let i = 0;
  for (; i < s.length && isDigit(s[i] as string); i++) {
    if (x > OVERFLOW / 10n) return undefined;
    x = x * 10n + BigInt(s.charCodeAt(i) - 48);
    if (x > OVERFLOW) return undefined;
  }
  return { value: x, rest: s.slice(i) };
}

function leadingFraction(s: string): { value: bigint; scale: number; rest: string } {
  let x = 0n;
  let scale = 1;
  let overflow = false;
  let i = 0;
  for (; i < s.length && isDigit(s[i] as string); i++) {
    if (overflow) continue;
    if (x > MAX_INT64 / 10n) {
      overflow = true;
      continue;
    }
    const y = x * 10n + BigInt(s.charCodeAt(i) - 48);
    if (y > OVERFLOW) {
      overflow = true;
      continue;
    }
    x = y;
    scale *= 10;
  }
  return { value: x, scale, rest: s.slice(i) };
}

/**
 * The `time` package's own quoting (not strconv.Quote): ASCII below 0x20 and every non-ASCII
 * byte are written as `\xNN` UTF-8 bytes.
 */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0x80 || cp < 0x20) {
      for (const byte of Buffer.from(ch.isWellFormed() ? ch : '\ufffd', 'utf8')) {
        out += '\\x' + byte.toString(16).padStart(2, '0');
      }
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return out + '"';
}
