import { describe, expect, it } from 'vitest';
import { addSeconds, nowUTC, parseGoDuration, shortId, type JsonObject } from '../../src/canon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import {
  approvalOpCount,
  approvalTargetCount,
  evaluateApprovals,
  requiredApprovalScope,
  type ApprovalBinding,
  type ParsedToken,
} from '../../src/tokens/index.js';
import { intent, v7Intent } from '../trace/fixtures.js';
import { approvalFixtures, HOUR, INTENT_DIGEST, POLICY_DIGEST, T0, referenceVerify } from './helpers.js';

const key = generateSigningKey();
const { mint, binding, codeOf } = approvalFixtures(key);




describe('approval token minting', () => {
  it('normalizes scope, computes token_id per §7.1 and expires_at = created_at + ttl', () => {
    const token = mint({ now: T0, scope: [' Tool:tool.write', 'phase:apply', 'tool:tool.write', ''], maxTargets: 2 });
    expect(token['scope']).toEqual(['phase:apply', 'tool:tool.write']);
    expect(token['created_at']).toBe('2026-03-12T12:00:00.123456789Z');
    expect(token['expires_at']).toBe('2026-03-12T13:00:00.123456789Z');
    expect(token['token_id']).toBe(
      shortId(`${INTENT_DIGEST}:${POLICY_DIGEST}:alice:change_ticket_42:phase:apply,tool:tool.write:2:0:2026-03-12T13:00:00.123456789Z`),
    );
    expect(token['max_targets']).toBe(2);
    expect('max_ops' in token).toBe(false);
    expect('delegation_binding_digest' in token).toBe(false);
  });

  it('signs per §6.2: an independent node:crypto check verifies the token', () => {
    const token = mint();
    expect(referenceVerify(token, key.publicKey)).toBe(true);
    expect(referenceVerify({ ...token, approver_identity: 'mallory' }, key.publicKey)).toBe(false);
  });

  it('rejects bad inputs at mint time', () => {
    expect(() => mint({ intentDigest: 'abc' })).toThrow('intent digest must be sha256 hex');
    expect(() => mint({ scope: [' ', ''] })).toThrow('scope is required');
    expect(() => mint({ ttlNs: 0n })).toThrow('ttl must be > 0');
    expect(() => mint({ approver: ' ' })).toThrow('approver is required');
  });

  it('parses Go durations', () => {
    expect(parseGoDuration('1h')).toBe(HOUR);
    expect(parseGoDuration('1h30m')).toBe(HOUR + HOUR / 2n);
    expect(parseGoDuration('1.5h')).toBe(HOUR + HOUR / 2n);
    expect(parseGoDuration('250ms')).toBe(250_000_000n);
    expect(() => parseGoDuration('1d')).toThrow('time: unknown unit "d" in duration "1d"');
    expect(() => parseGoDuration('')).toThrow('invalid duration');
  });
});

describe('approval token validation: every code, in the reference order', () => {
  it('accepts a matching token', () => {
    expect(codeOf(mint())).toBe('ok');
  });

  it('approval_token_invalid for anything normalization rejects', () => {
    expect(codeOf('not an object')).toBe('approval_token_invalid');
    expect(codeOf({ ...mint(), schema_id: 'gait.gate.delegation_token' })).toBe('approval_token_invalid');
    expect(codeOf({ ...mint(), scope: [] })).toBe('approval_token_invalid');
    expect(codeOf({ ...mint(), max_ops: -1 })).toBe('approval_token_invalid');
    expect(codeOf({ ...mint(), max_ops: 'x' })).toBe('approval_token_invalid');
    expect(codeOf({ ...mint(), expires_at: null })).toBe('approval_token_invalid');
  });

  it('approval_token_signature_invalid without a verify key, even before a missing signature', () => {
    const { signature: _s, ...unsigned } = mint();
    expect(codeOf(mint(), binding({ verifyKeys: [] }))).toBe('approval_token_signature_invalid');
    expect(codeOf(unsigned, binding({ verifyKeys: [] }))).toBe('approval_token_signature_invalid');
    expect(codeOf(unsigned)).toBe('approval_token_signature_missing');
  });

  it('approval_token_signature_invalid for the wrong key or an edited token', () => {
    expect(codeOf(mint(), binding({ verifyKeys: [generateSigningKey()] }))).toBe('approval_token_signature_invalid');
    expect(codeOf({ ...mint(), reason_code: 'other' })).toBe('approval_token_signature_invalid');
  });

  it('verifies over the normalized token (whitespace and case in the file do not matter)', () => {
    const token = mint();
    expect(codeOf({ ...token, approver_identity: '  alice ', intent_digest: INTENT_DIGEST.toUpperCase() })).toBe('ok');
  });

  it('intent, policy and delegation binding mismatches', () => {
    expect(codeOf(mint(), binding({ intentDigest: 'f'.repeat(64) }))).toBe('approval_token_intent_mismatch');
    expect(codeOf(mint(), binding({ policyDigest: 'f'.repeat(64) }))).toBe('approval_token_policy_mismatch');
    expect(codeOf(mint(), binding({ delegationDigest: 'c'.repeat(64) }))).toBe('approval_token_delegation_binding_mismatch');
    expect(codeOf(mint({ delegationBindingDigest: 'd'.repeat(64) }), binding({ delegationDigest: 'c'.repeat(64) }))).toBe(
      'approval_token_delegation_binding_mismatch',
    );
    expect(codeOf(mint({ delegationBindingDigest: 'c'.repeat(64) }), binding({ delegationDigest: 'c'.repeat(64) }))).toBe('ok');
  });

  it('approval_token_expired against the wall clock, at and after expires_at', () => {
    const token = mint({ now: T0 });
    const expires = addSeconds(T0, 3600);
    expect(codeOf(token, binding({ now: addSeconds(T0, 3599) }))).toBe('ok');
    expect(codeOf(token, binding({ now: expires }))).toBe('approval_token_expired');
    // A token minted in the past is expired now, whatever time a caller would like to evaluate at.
    expect(codeOf(token)).toBe('approval_token_expired');
  });

  it('approval_token_scope_mismatch unless every required scope (or *) is held', () => {
    const destructive = ['tool:tool.write', 'phase:apply', 'destructive:apply'];
    expect(codeOf(mint(), binding({ requiredScope: destructive }))).toBe('approval_token_scope_mismatch');
    expect(codeOf(mint({ scope: destructive }), binding({ requiredScope: destructive }))).toBe('ok');
    expect(codeOf(mint({ scope: ['*'] }), binding({ requiredScope: destructive }))).toBe('ok');
    expect(codeOf(mint({ scope: ['tool.write'] }))).toBe('approval_token_scope_mismatch');
  });

  it('max_targets and max_ops bounds', () => {
    expect(codeOf(mint({ maxTargets: 1 }), binding({ targetCount: 2 }))).toBe('approval_token_max_targets_exceeded');
    expect(codeOf(mint({ maxOps: 1 }), binding({ opCount: 2 }))).toBe('approval_token_max_ops_exceeded');
    expect(codeOf(mint({ maxTargets: 2, maxOps: 2 }), binding({ targetCount: 2, opCount: 2 }))).toBe('ok');
  });
});

describe('required scope and counts from the intent', () => {
  it('adds phase:apply and destructive:apply only for a destructive apply', () => {
    const safe = v7Intent();
    expect(requiredApprovalScope(safe)).toEqual(['tool:tool.write']);
    const destructive = { ...safe, targets: safe.targets.map((t) => ({ ...t, destructive: true })) };
    expect(requiredApprovalScope(destructive)).toEqual(['tool:tool.write', 'phase:apply', 'destructive:apply']);
    expect(requiredApprovalScope({ ...destructive, context: { ...destructive.context, phase: 'plan' } })).toEqual(['tool:tool.write']);
  });

  it('counts step targets and steps for scripts, targets (at least one op) otherwise', () => {
    const single = v7Intent();
    expect([approvalTargetCount(single), approvalOpCount(single)]).toEqual([1, 1]);
    expect(approvalOpCount(intent({}))).toBe(1);
    const step = { tool_name: 'tool.read', args: {}, targets: single.targets, arg_provenance: [] };
    const script = intent({ tool_name: 'script', script: { steps: [step, step, { ...step, targets: [] }] } });
    expect([approvalTargetCount(script), approvalOpCount(script)]).toEqual([2, 3]);
  });
});

describe('evaluateApprovals (gate eval step 8)', () => {
  const tokens = (...values: unknown[]): ParsedToken[] => values.map((value, i) => ({ source: `t${i}.json`, value: value as JsonObject }));
  const run = (list: ParsedToken[], overrides: { requiredApprovals?: number; requireDistinct?: boolean; verifyKeys?: ApprovalBinding['verifyKeys'] } = {}) =>
    evaluateApprovals({ ...binding(), tokens: list, requiredApprovals: 1, requireDistinct: false, ...overrides });

  it('no tokens: approval_token_missing / approval_not_granted', () => {
    expect(run([])).toMatchObject({ granted: false, reasonCodes: ['approval_token_missing'], violations: ['approval_not_granted'] });
  });

  it('grants with one valid token, recording its id, approver and audit entry', () => {
    const token = mint();
    const result = run(tokens(token));
    expect(result).toMatchObject({ granted: true, reasonCodes: ['approval_granted'], violations: [], validCount: 1, requiredApprovals: 1 });
    expect(result.validTokenIds).toEqual([token['token_id']]);
    expect(result.approvers).toEqual(['alice']);
    expect(result.entries[0]).toMatchObject({ token_id: token['token_id'], valid: true, error_code: '', expires_at: token['expires_at'] });
  });

  it('too few valid tokens: each failure code plus approval_chain_insufficient', () => {
    const expired = mint({ now: addSeconds(nowUTC(), -7200) });
    const result = run(tokens(mint(), expired), { requiredApprovals: 2 });
    expect(result).toMatchObject({
      granted: false,
      reasonCodes: ['approval_chain_insufficient', 'approval_token_expired'],
      violations: ['approval_not_granted'],
      validCount: 1,
    });
  });

  it('an unreadable token file is approval_token_invalid', () => {
    const result = run([{ source: 'missing.json', error: 'ENOENT' }]);
    expect(result.reasonCodes).toEqual(['approval_chain_insufficient', 'approval_token_invalid']);
    expect(result.entries[0]).toMatchObject({ source: 'missing.json', valid: false, error_code: 'approval_token_invalid' });
  });

  it('distinct approvers: two tokens from one approver do not satisfy two approvals', () => {
    const a = mint({ reasonCode: 'one' });
    const b = mint({ reasonCode: 'two' });
    expect(run(tokens(a, b), { requiredApprovals: 2, requireDistinct: true })).toMatchObject({
      granted: false,
      reasonCodes: ['approval_distinct_approvers_required'],
      violations: ['approval_not_granted'],
    });
    expect(run(tokens(a, b), { requiredApprovals: 2 }).granted).toBe(true);
    // Distinct approvers also need distinct keys (tests/tokens/one-use.test.ts): bob signs with his own.
    const bobKey = generateSigningKey();
    const bob = mint({ approver: 'bob', key: bobKey });
    expect(run(tokens(a, bob), { requiredApprovals: 2, requireDistinct: true, verifyKeys: [key, bobKey] }).granted).toBe(true);
  });

  it('counts a token id once however many copies are presented', () => {
    const token = mint();
    expect(run(tokens(token, token), { requiredApprovals: 2 })).toMatchObject({ granted: false, validCount: 1 });
  });

  it('requires at least one approval even when min_approvals is 0', () => {
    expect(run(tokens(), { requiredApprovals: 0 }).requiredApprovals).toBe(1);
  });

  it('keeps failure codes next to approval_granted when enough other tokens are valid', () => {
    const result = run(tokens(mint(), { ...mint(), intent_digest: 'f'.repeat(64) }));
    expect(result.granted).toBe(true);
    expect(result.reasonCodes).toEqual(['approval_granted', 'approval_token_signature_invalid']);
  });
});
