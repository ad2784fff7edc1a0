import { describe, expect, it } from 'vitest';
import * as cli from '../../src/cli/output.js';
import { describeFailure, errorEnvelope, goJsonLine, isGoEmpty, omitEmpty } from '../../src/edge/json-output.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';

describe('JSON output helpers', () => {
  it('goJsonLine sorts keys at every depth, drops undefined and escapes like Go', () => {
    expect(goJsonLine({ b: 1, a: { d: [{ z: 1, y: undefined, x: '<&>' }], c: '\u2028' } })).toBe('{"a":{"c":"\\u2028","d":[{"x":"\\u003c\\u0026\\u003e","z":1}]},"b":1}');
  });

  it('omitEmpty drops Go-empty values except the kept ones', () => {
    expect(omitEmpty({ ok: false, a: '', b: 0, c: [], d: {}, e: null, f: 'x', g: [0] })).toEqual({ ok: false, f: 'x', g: [0] });
    expect(isGoEmpty(false)).toBe(true);
    expect(isGoEmpty('0')).toBe(false);
  });

  it('describeFailure: WardErrors keep their exit code, hint and details; anything else is internal', () => {
    const f = describeFailure(new WardError(ERROR_CODES.USAGE, 'bad flag', { hint: 'fix it', details: { duplicate_key: 'k' } }));
    expect(f.exitCode).toBe(6);
    expect(f.json).toEqual({ ok: false, error: 'bad flag', ...errorEnvelope(6, 'fix it'), duplicate_key: 'k' });
    expect(f.text).toBe('error: bad flag\nhint: fix it');
    expect(describeFailure(new Error('boom'))).toMatchObject({ exitCode: 1, text: 'error: boom' });
  });

  it('the CLI prints through the same helpers', () => {
    expect(cli.goJsonLine).toBe(goJsonLine);
    expect(cli.describeFailure).toBe(describeFailure);
    expect(cli.omitEmpty).toBe(omitEmpty);
  });
});
