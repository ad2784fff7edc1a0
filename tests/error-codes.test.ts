import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, WardError } from '../src/errors.js';

describe('docs/exit-codes.md', () => {
  const doc = readFileSync(new URL('../docs/exit-codes.md', import.meta.url), 'utf8');
  const rows = new Map(
    doc
      .split('\n')
      .map((line) => /^\| `(ERR_[A-Z0-9_]+)` \| (\d) \|/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, Number(m[2])]),
  );

  it('documents every error code with its default exit code, and no other', () => {
    for (const code of Object.values(ERROR_CODES)) {
      expect(rows.has(code), `${code} has no row`).toBe(true);
      expect(rows.get(code), code).toBe(new WardError(code, '').exitCode);
    }
    expect([...rows.keys()].sort()).toEqual(Object.values(ERROR_CODES).sort());
  });
});
