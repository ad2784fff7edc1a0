import { describe, expect, it } from 'vitest';
import { WardBlockedError, modelToolError } from '../../src/index.js';

const blocked = (verdict: 'block' | 'require_approval' | 'dry_run') =>
  new WardBlockedError({
    verdict,
    reasonCodes: ['destructive_apply_requires_approval', 'my_policy_code'],
    violations: [],
    toolName: 'fs.delete_file',
    traceId: 't1',
    tracePath: '/state/traces/trace_t1.json',
    intentDigest: 'a'.repeat(64),
    policyDigest: 'b'.repeat(64),
    approval: {
      command: "ward approve --intent-digest aaaa --out '/x'",
    } as never,
  });

describe('modelToolError: what a model reads when a guarded tool was not run', () => {
  it('block: the verdict, what each reason code means (policy codes named as such), and not to retry as is', () => {
    const text = modelToolError(blocked('block'));
    expect(text).toBe(
      'Ward blocked fs.delete_file (destructive_apply_requires_approval: destructive target in apply phase; my_policy_code: a code set by the policy). Do not retry the same call; choose another way or tell the user it is not allowed.',
    );
  });

  it('require_approval: asks for a person, and never hands the model the approve command', () => {
    const text = modelToolError(blocked('require_approval'));
    expect(text).toContain("needs a person's approval");
    expect(text).toContain('retry it unchanged');
    expect(text).not.toContain('ward approve');
    expect(text).not.toContain('/state/');
  });

  it('dry_run says only a plan is allowed', () => {
    expect(modelToolError(blocked('dry_run'))).toContain('allows only a dry run');
  });

  it('any other error gets the generic sentence, never its message (it may hold paths or secrets)', () => {
    const text = modelToolError(new Error('ENOENT: /home/me/.aws/credentials'));
    expect(text).toBe('An error occurred while running the tool. Please try again.');
  });
});
