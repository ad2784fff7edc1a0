import { describe, expect, it } from 'vitest';
import { goCleanPath } from '../../src/canon/gopath.js';
import { goQuote } from '../../src/policy/go-quote.js';
import { DurationError, formatGoDuration, parseGoDuration } from '../../src/canon/duration.js';

const SECOND = 1_000_000_000n;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;

/** Go's own time.ParseDuration test table (time_test.go). */
const PARSE_OK: readonly (readonly [string, bigint])[] = [
  ['0', 0n],
  ['5s', 5n * SECOND],
  ['30s', 30n * SECOND],
  ['1478s', 1478n * SECOND],
  ['-5s', -5n * SECOND],
  ['+5s', 5n * SECOND],
  ['-0', 0n],
  ['+0', 0n],
  ['5.0s', 5n * SECOND],
  ['5.6s', 5n * SECOND + 600_000_000n],
  ['5.s', 5n * SECOND],
  ['.5s', 500_000_000n],
  ['1.0s', SECOND],
  ['1.00s', SECOND],
  ['1.004s', SECOND + 4_000_000n],
  ['1.0040s', SECOND + 4_000_000n],
  ['100.00100s', 100n * SECOND + 1_000_000n],
  ['10ns', 10n],
  ['11us', 11_000n],
  ['12\u00b5s', 12_000n],
  ['12\u03bcs', 12_000n],
  ['13ms', 13_000_000n],
  ['14s', 14n * SECOND],
  ['15m', 15n * MINUTE],
  ['16h', 16n * HOUR],
  ['3h30m', 3n * HOUR + 30n * MINUTE],
  ['10.5s4m', 4n * MINUTE + 10n * SECOND + 500_000_000n],
  ['-2m3.4s', -(2n * MINUTE + 3n * SECOND + 400_000_000n)],
  ['1h2m3s4ms5us6ns', HOUR + 2n * MINUTE + 3n * SECOND + 4_000_000n + 5_000n + 6n],
  ['39h9m14.425s', 39n * HOUR + 9n * MINUTE + 14n * SECOND + 425_000_000n],
  ['52763797000ns', 52_763_797_000n],
  ['0.3333333333333333333h', 20n * MINUTE],
  ['9007199254740993ns', 9_007_199_254_740_993n],
  ['9223372036854775807ns', 9_223_372_036_854_775_807n],
  ['9223372036854775.807us', 9_223_372_036_854_775_807n],
  ['9223372036s854ms775us807ns', 9_223_372_036_854_775_807n],
  ['-9223372036854775808ns', -9_223_372_036_854_775_808n],
  ['-9223372036854775.808us', -9_223_372_036_854_775_808n],
  ['0.100000000000000000000h', 6n * MINUTE],
  ['0.830103483285477580700h', 49n * MINUTE + 48n * SECOND + 372_539_827n],
];

const PARSE_ERRORS: readonly (readonly [string, string])[] = [
  ['', 'time: invalid duration ""'],
  ['3', 'time: missing unit in duration "3"'],
  ['-', 'time: invalid duration "-"'],
  ['s', 'time: invalid duration "s"'],
  ['.', 'time: invalid duration "."'],
  ['-.', 'time: invalid duration "-."'],
  ['.s', 'time: invalid duration ".s"'],
  ['+.s', 'time: invalid duration "+.s"'],
  ['1d', 'time: unknown unit "d" in duration "1d"'],
  ['\u0085\u0085', 'time: invalid duration "\\xc2\\x85\\xc2\\x85"'],
  ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
  ['9223372036854775.808us', 'time: invalid duration "9223372036854775.808us"'],
  ['9223372036854ms775us808ns', 'time: invalid duration "9223372036854ms775us808ns"'],
  ['-9223372036854775809ns', 'time: invalid duration "-9223372036854775809ns"'],
  ['1\u00e9s', 'time: unknown unit "\\xc3\\xa9s" in duration "1\\xc3\\xa9s"'],
];

/** Go's Duration.String test table. */
const FORMAT: readonly (readonly [bigint, string])[] = [
  [0n, '0s'],
  [1n, '1ns'],
  [1_100n, '1.1\u00b5s'],
  [2_200_000n, '2.2ms'],
  [3_300_000_000n, '3.3s'],
  [4n * MINUTE + 5n * SECOND, '4m5s'],
  [4n * MINUTE + 5_001_000_000n, '4m5.001s'],
  [5n * HOUR + 6n * MINUTE + 7_001_000_000n, '5h6m7.001s'],
  [8n * MINUTE + 1n, '8m0.000000001s'],
  [9_223_372_036_854_775_807n, '2562047h47m16.854775807s'],
  [-9_223_372_036_854_775_808n, '-2562047h47m16.854775808s'],
  [24n * HOUR, '24h0m0s'],
];

describe('Go time.ParseDuration', () => {
  it.each(PARSE_OK)('parses %j', (text, nanos) => {
    expect(parseGoDuration(text)).toBe(nanos);
  });

  it.each(PARSE_ERRORS)('rejects %j with Go\'s message', (text, message) => {
    expect(() => parseGoDuration(text)).toThrow(DurationError);
    expect(() => parseGoDuration(text)).toThrow(message);
  });
});

describe('Go Duration.String', () => {
  it.each(FORMAT)('formats %s ns as %j', (nanos, text) => {
    expect(formatGoDuration(nanos)).toBe(text);
  });
});

describe('Go path.Clean', () => {
  const CASES: readonly (readonly [string, string])[] = [
    ['', '.'],
    ['abc', 'abc'],
    ['abc/def', 'abc/def'],
    ['.', '.'],
    ['..', '..'],
    ['../..', '../..'],
    ['../../abc', '../../abc'],
    ['/abc', '/abc'],
    ['/', '/'],
    ['abc/', 'abc'],
    ['/abc/', '/abc'],
    ['abc//def//ghi', 'abc/def/ghi'],
    ['//abc', '/abc'],
    ['abc/./def', 'abc/def'],
    ['/./abc/def', '/abc/def'],
    ['abc/.', 'abc'],
    ['abc/def/ghi/../jkl', 'abc/def/jkl'],
    ['abc/def/../ghi/../jkl', 'abc/jkl'],
    ['abc/def/..', 'abc'],
    ['abc/def/../..', '.'],
    ['/abc/def/../..', '/'],
    ['abc/def/../../..', '..'],
    ['/abc/def/../../..', '/'],
    ['abc/def/../../../ghi/jkl/../../../mno', '../../mno'],
    ['abc/./../def', 'def'],
    ['abc/../../././../def', '../../def'],
    ['C:\\tmp\\x', 'C:\\tmp\\x'],
  ];
  it.each(CASES)('cleans %j to %j', (input, output) => {
    expect(goCleanPath(input)).toBe(output);
  });
});

describe('Go strconv.Quote', () => {
  it('escapes quotes, backslashes and control characters, keeps printable Unicode', () => {
    expect(goQuote('plain')).toBe('"plain"');
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote('\t\n\u0000\u007f')).toBe('"\\t\\n\\x00\\x7f"');
    expect(goQuote('héllo ☃ 😀')).toBe('"héllo ☃ 😀"');
    expect(goQuote('\u00a0\u200b')).toBe('"\\u00a0\\u200b"');
    expect(goQuote('\u{e0001}')).toBe('"\\U000e0001"');
  });
});
