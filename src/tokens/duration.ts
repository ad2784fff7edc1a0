import { ERROR_CODES, WardError } from '../errors.js';
import type { GoTime } from '../canon/index.js';

const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n,
  'μs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const TERM = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/y;

/** Go `time.ParseDuration` (`1h`, `30m`, `1h30m`, `1.5h`, `250ms`), in nanoseconds. */
export function parseGoDuration(text: string): bigint {
  const bad = (): WardError => new WardError(ERROR_CODES.USAGE, `time: invalid duration ${JSON.stringify(text)}`);
  let rest = text;
  let sign = 1n;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1n : 1n;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw bad();
  let total = 0n;
  let pos = 0;
  while (pos < rest.length) {
    TERM.lastIndex = pos;
    const m = TERM.exec(rest);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw bad();
    const unit = UNIT_NS[m[3]!]!;
    const frac = m[2] ?? '';
    total += BigInt(m[1] || '0') * unit;
    if (frac !== '') total += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    pos = TERM.lastIndex;
  }
  return sign * total;
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
