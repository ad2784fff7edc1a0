import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJwks, generateSigningKey, loadKeyRing } from '../../src/keys/index.js';
import { tempDir, ward } from '../cli/run.js';
import { referenceVerify } from './helpers.js';

const INTENT = {
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-02-18T00:00:00Z',
  producer_version: 'x',
  tool_name: 'tool.write',
  args: { path: '/tmp/approve-valid.txt' },
  targets: [{ kind: 'path', value: '/tmp/approve-valid.txt', operation: 'write' }],
  arg_provenance: [{ arg_path: '$.path', source: 'user' }],
  context: { identity: 'agent.scenario', workspace: '/repo/gait', risk_class: 'high', session_id: 'sess-tier11' },
};
const INTENT_DIGEST = '4b53bb79e35105ac9170963ac6f84ed0ed15530c68f06a46fc1233c5ec766913';
const POLICY_DIGEST = '07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9';

function setup(): string {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'p.yaml'), 'default_verdict: require_approval\n');
  writeFileSync(join(cwd, 'i.json'), JSON.stringify(INTENT));
  return cwd;
}

const approve = (cwd: string, extra: string[]) =>
  ward(
    ['approve', '--intent-digest', INTENT_DIGEST, '--policy-digest', POLICY_DIGEST, '--scope', 'tool:tool.write', '--approver', 'alice', '--reason-code', 'ticket_1', '--json', ...extra],
    { cwd },
  );

describe('ward approve + gate eval', () => {
  it('mints a token with the default key that verifies under the reference construction and grants approval', () => {
    const cwd = setup();
    const minted = JSON.parse(approve(cwd, ['--ttl', '1h']).stdout);
    expect(minted.token_path).toBe(join(cwd, `approval_${minted.token_id}.json`));
    const token = JSON.parse(readFileSync(minted.token_path, 'utf8'));
    expect(referenceVerify(token, loadKeyRing(join(cwd, '.ward'))[0]!.publicKey)).toBe(true);
    const r = ward(['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json', '--approval-token', minted.token_path, '--json'], { cwd });
    expect(r.code).toBe(0);
    // The same trace_id as the reference's approval-token-valid scenario (gate.md §5.2).
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'allow', approval_ref: minted.token_id, trace_id: '8a640148677956eba29ff9cf' });
  });

  it('keeps an expired token expired even with an old --evaluation-time (wall clock)', async () => {
    const cwd = setup();
    const minted = JSON.parse(approve(cwd, ['--ttl', '1ms']).stdout);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const r = ward(
      ['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json', '--approval-token', minted.token_path, '--evaluation-time', '2020-01-01T00:00:00Z', '--json'],
      { cwd },
    );
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout).reason_codes).toContain('approval_token_expired');
  });

  it('rejects bad mint input as usage errors (exit 6)', () => {
    const cwd = setup();
    expect(approve(cwd, ['--ttl', '1 day']).code).toBe(6);
    expect(approve(cwd, ['--ttl', '1h', '--max-ops', '-1']).code).toBe(6);
    expect(approve(cwd, ['--ttl', '1h', '--key-mode', 'prod']).code).toBe(6);
  });

  it('refuses a scope entry without a kind prefix, which could never match, and suggests the prefix', () => {
    const cwd = setup();
    const r = approve(cwd, ['--ttl', '1h', '--scope', 'tool.write,phase:apply']);
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout)).toMatchObject({
      error: '--scope "tool.write" can never match: scope entries are tool:<tool_name>, phase:apply, destructive:apply or *',
      hint: 'did you mean --scope tool:tool.write,phase:apply?',
    });
  });
});

describe('one-use approval tokens and the 24h cap (CLI)', () => {
  const evalWith = (cwd: string, token: string, extra: string[] = []) =>
    ward(['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json', '--approval-token', token, '--json', ...extra], { cwd });

  it('a token grants one gate eval; the second is refused with approval_token_consumed (exit 4)', () => {
    const cwd = setup();
    const minted = JSON.parse(approve(cwd, ['--ttl', '1h']).stdout);
    expect(evalWith(cwd, minted.token_path).code).toBe(0);
    const again = evalWith(cwd, minted.token_path);
    expect(again.code).toBe(4);
    expect(JSON.parse(again.stdout)).toMatchObject({ verdict: 'require_approval', required_approvals: 1 });
    expect(JSON.parse(again.stdout).reason_codes).toContain('approval_token_consumed');
    expect(readdirSync(join(cwd, '.ward', 'token_ledger'))).toHaveLength(1);
    // The audit record says why the token did not count.
    const audit = JSON.parse(readFileSync(JSON.parse(again.stdout).approval_audit_path, 'utf8'));
    expect(audit.entries[0]).toMatchObject({ token_id: minted.token_id, valid: false, error_code: 'approval_token_consumed' });
  });

  it('--approval-token-reuse ttl opts into reuse until expiry; other values are usage errors', () => {
    const cwd = setup();
    const minted = JSON.parse(approve(cwd, ['--ttl', '1h']).stdout);
    expect(evalWith(cwd, minted.token_path, ['--approval-token-reuse', 'ttl']).code).toBe(0);
    expect(evalWith(cwd, minted.token_path, ['--approval-token-reuse', 'ttl']).code).toBe(0);
    expect(existsSync(join(cwd, '.ward', 'token_ledger'))).toBe(false);
    // Reuse-mode decisions do not consume it, so a one-use decision may still use it, once.
    expect(evalWith(cwd, minted.token_path).code).toBe(0);
    expect(evalWith(cwd, minted.token_path).code).toBe(4);
    const bad = evalWith(cwd, minted.token_path, ['--approval-token-reuse', 'forever']);
    expect(bad.code).toBe(6);
    expect(bad.stderr + bad.stdout).toContain('--approval-token-reuse');
  });

  it('approve refuses a TTL over 24h (876000h was accepted before) and accepts 24h', () => {
    const cwd = setup();
    for (const ttl of ['876000h', '24h1ns', '25h']) {
      const r = approve(cwd, ['--ttl', ttl]);
      expect(r.code, ttl).toBe(6);
      expect(r.stderr + r.stdout, ttl).toContain('ttl must be at most 24h');
    }
    expect(approve(cwd, ['--ttl', '24h']).code).toBe(0);
  });
});

describe('distinct approvers need distinct keys (CLI)', () => {
  it('two approvers each signing with their own key are granted with --approval-jwks; one key for both is not', () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'p.yaml'),
      'default_verdict: allow\nrules:\n  - name: pairs\n    priority: 1\n    effect: require_approval\n    min_approvals: 2\n    require_distinct_approvers: true\n    match:\n      tool_names: [tool.write]\n',
    );
    writeFileSync(join(cwd, 'i.json'), JSON.stringify(INTENT));
    const first = JSON.parse(ward(['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json', '--json'], { cwd }).stdout);
    const keys = ['alice', 'bob'].map((name) => {
      const key = generateSigningKey();
      writeFileSync(join(cwd, `${name}.pem`), key.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, { mode: 0o600 });
      return key;
    });
    writeFileSync(join(cwd, 'approvers.jwks'), JSON.stringify(buildJwks(keys)));
    const mintFor = (approver: string, keyFile: string, reason: string) =>
      JSON.parse(
        ward(['approve', '--intent-digest', first.intent_digest, '--policy-digest', first.policy_digest, '--scope', 'tool:tool.write', '--ttl', '1h',
          '--approver', approver, '--reason-code', reason, '--private-key', keyFile, '--json'], { cwd }).stdout,
      ).token_path as string;
    const evalChain = (a: string, b: string) =>
      ward(['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json', '--approval-token', a, '--approval-token-chain', b, '--approval-jwks', 'approvers.jwks', '--json'], { cwd });
    // ALICE is alice: one approver, whatever the keys.
    const upper = evalChain(mintFor('alice', 'alice.pem', 'r1'), mintFor('ALICE', 'bob.pem', 'r2'));
    expect(upper.code).toBe(4);
    expect(JSON.parse(upper.stdout).reason_codes).toContain('approval_distinct_approvers_required');
    // alice's key signing for bob too counts once.
    const oneKey = evalChain(mintFor('alice', 'alice.pem', 'r3'), mintFor('bob', 'alice.pem', 'r4'));
    expect(oneKey.code).toBe(4);
    expect(JSON.parse(oneKey.stdout).reason_codes).toContain('approval_distinct_approvers_required');
    const ok = evalChain(mintFor('alice', 'alice.pem', 'r5'), mintFor('bob', 'bob.pem', 'r6'));
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ verdict: 'allow', valid_approvals: 2 });
  });
});

describe('ward delegate', () => {
  it('mints and verifies a delegation token; a wrong expected delegate fails with exit 2', () => {
    const cwd = setup();
    const minted = JSON.parse(
      ward(['delegate', 'mint', '--delegator', 'agent.lead', '--delegate', 'agent.worker', '--scope', 'write', '--ttl', '1h', '--json'], { cwd }).stdout,
    );
    expect(minted.token_path).toBe(join(cwd, `delegation_${minted.token_id}.json`));
    const ok = ward(['delegate', 'verify', minted.token_path, '--delegate', 'agent.worker', '--scope', 'write', '--json'], { cwd });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, token_id: minted.token_id, delegator_identity: 'agent.lead' });
    const bad = ward(['delegate', 'verify', minted.token_path, '--delegate', 'agent.other', '--json'], { cwd });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error_code).toBe('delegation_token_delegate_mismatch');
  });
});

describe('ward approve usage', () => {
  it('names every missing option at once, with a complete example', () => {
    const r = ward(['approve', '--ttl', '1h'], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('missing required options: --intent-digest, --policy-digest, --scope, --approver, --reason-code');
    expect(r.stderr).toMatch(/hint: for example: ward approve --intent-digest/);
  });
});
