import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { checkProfile, parsePolicyYaml } from '../../src/policy/index.js';

function check(yaml: string, profile: 'standard' | 'oss-prod' = 'oss-prod'): void {
  checkProfile(parsePolicyYaml(yaml).policy, profile);
}

function profileFailure(yaml: string): WardError {
  try {
    check(yaml);
  } catch (err) {
    if (err instanceof WardError) return err;
    throw err;
  }
  throw new Error('expected the profile check to fail');
}

describe('oss-prod profile (gate.md §2.5)', () => {
  it('rejects default_verdict allow', () => {
    const err = profileFailure('default_verdict: allow\n');
    expect(err.message).toBe('oss-prod profile rejects policy default_verdict=allow; use default_verdict: block or require_approval');
    expect(err.code).toBe(ERROR_CODES.POLICY_PROFILE);
    expect(err.exitCode).toBe(EXIT.INVALID_INPUT);
  });

  it('rejects a high-risk allow or approval rule without a brokered credential', () => {
    for (const effect of ['allow', 'require_approval', 'dry_run']) {
      const err = profileFailure(`default_verdict: block\nrules:\n  - {name: r, effect: ${effect}, match: {risk_classes: [Critical]}}\n`);
      expect(err.message).toBe('oss-prod profile requires high-risk allow/approval rules to set require_broker_credential: true');
    }
  });

  it('accepts block rules, brokered rules and rules without high-risk classes', () => {
    expect(() =>
      check(
        [
          'default_verdict: require_approval',
          'rules:',
          '  - {name: a, effect: block, match: {risk_classes: [high]}}',
          '  - {name: b, effect: allow, require_broker_credential: true, match: {risk_classes: [high]}}',
          '  - {name: c, effect: allow, match: {risk_classes: [low, medium]}}',
          '',
        ].join('\n'),
      ),
    ).not.toThrow();
  });

  it('the standard profile adds no requirement', () => {
    expect(() => check('default_verdict: allow\nrules:\n  - {name: r, effect: allow, match: {risk_classes: [high]}}\n', 'standard')).not.toThrow();
  });
});
