import { describe, expect, it } from 'vitest';
import { closestMatch, oneOfHint } from '../../src/canon/suggest.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import type { WardError } from '../../src/errors.js';

const hintOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return (err as WardError).hint;
  }
  throw new Error('expected an error');
};

describe('closestMatch', () => {
  it('finds typos within two edits and ignores unrelated words', () => {
    expect(closestMatch('efect', ['effect', 'name', 'match'])).toBe('effect');
    expect(closestMatch('alow', ['allow', 'block'])).toBe('allow');
    expect(closestMatch('banana', ['allow', 'block'])).toBeUndefined();
    expect(closestMatch('ab', ['xy'])).toBeUndefined();
  });
  it('lists every valid value, sorted, with the likely one first', () => {
    expect(oneOfHint('blok', ['block', 'allow'])).toBe('did you mean "block"? valid values: allow, block');
    expect(oneOfHint('zzz', ['block', 'allow'])).toBe('valid values: allow, block');
  });
});

describe('errors a new user hits name the fix', () => {
  it('a misspelled policy key suggests the field', () => {
    expect(hintOf(() => parsePolicyYaml('default_verdict: block\nrules:\n  - name: x\n    efect: allow\n'))).toBe('did you mean "effect"?');
    expect(hintOf(() => parsePolicyYaml('zzzz: 1\n'))).toMatch(/^fields at the top level: .*default_verdict/);
  });
  it('a bad default verdict lists the verdicts', () => {
    expect(hintOf(() => parsePolicyYaml('default_verdict: alow\n'))).toContain('did you mean "allow"?');
  });
  it('an unknown target kind lists the kinds', () => {
    const intent = { tool_name: 't', args: {}, targets: [{ kind: 'file', value: '/x' }], context: { identity: 'a', workspace: '/w', risk_class: 'low' } };
    expect(hintOf(() => normalizeIntent(intent))).toContain('valid values: bucket, host, other, path');
  });
});
