import { describe, expect, it } from 'vitest';
import { addSeconds, nowUTC, shortId, ZERO_TIME, type JsonObject } from '../../src/canon/index.js';
import type { Delegation, NormalizedIntent } from '../../src/intent/types.js';
import { generateSigningKey } from '../../src/keys/index.js';
import {
  buildApprovalAuditRecord,
  buildDelegationAuditRecord,
  evaluateApprovals,
  evaluateDelegations,
  mintDelegationToken,
  requiredDelegationLinks,
  validateDelegationToken,
  type DelegationBinding,
  type MintDelegationOptions,
  type ParsedToken,
} from '../../src/tokens/index.js';
import { intent } from '../trace/fixtures.js';
import { HOUR, INTENT_DIGEST, POLICY_DIGEST, T0, referenceVerify } from './helpers.js';

const key = generateSigningKey();

function mint(overrides: Partial<MintDelegationOptions> = {}): JsonObject {
  return mintDelegationToken({
    delegator: 'agent.lead',
    delegate: 'agent.manager',
    scope: ['write'],
    ttlNs: HOUR,
    now: nowUTC(),
    producerVersion: '0.1.0',
    key,
    ...overrides,
  });
}

function binding(overrides: Partial<DelegationBinding> = {}): DelegationBinding {
  return { verifyKeys: [key], intentDigest: INTENT_DIGEST, policyDigest: POLICY_DIGEST, requiredScopes: ['write'], now: nowUTC(), ...overrides };
}

const LINK = { delegator_identity: 'agent.lead', delegate_identity: 'agent.manager', scope_class: 'write' };

function codeOf(token: unknown, link = LINK, b = binding()): string {
  const result = validateDelegationToken(token as JsonObject, link, b);
  return result.ok ? 'ok' : result.code;
}

/** The V5 delegation: lead -> manager -> senior -> worker. */
function v5Intent(): NormalizedIntent {
  const link = (from: string, to: string, ref: string) => ({
    delegator_identity: from,
    delegate_identity: to,
    scope_class: 'write',
    token_ref: ref,
    issued_at: ZERO_TIME,
    expires_at: ZERO_TIME,
  });
  const delegation: Delegation = {
    requester_identity: 'agent.worker',
    scope_class: 'write',
    token_refs: ['694428976ab1b10859171a05', '7e37847cf7d9320eb0854cc8', '8a715283a36e6b05e9287e12'],
    issued_at: ZERO_TIME,
    expires_at: ZERO_TIME,
    chain: [
      link('agent.lead', 'agent.manager', '694428976ab1b10859171a05'),
      link('agent.manager', 'agent.senior', '7e37847cf7d9320eb0854cc8'),
      link('agent.senior', 'agent.worker', '8a715283a36e6b05e9287e12'),
    ],
  };
  return intent({ delegation });
}

const chainTokens = (): JsonObject[] => [
  mint(),
  mint({ delegator: 'agent.manager', delegate: 'agent.senior' }),
  mint({ delegator: 'agent.senior', delegate: 'agent.worker', scope: ['read'], scopeClass: 'write' }),
];

const parsed = (...values: unknown[]): ParsedToken[] => values.map((value, i) => ({ source: `d${i}.json`, value: value as JsonObject }));

describe('delegation token minting', () => {
  it('computes token_id per §7.2 and signs per §6.2 (checked independently with node:crypto)', () => {
    const token = mint({ now: T0, scope: ['Write', 'admin'], scopeClass: 'Write', intentDigest: INTENT_DIGEST });
    expect(token['scope']).toEqual(['admin', 'write']);
    expect(token['scope_class']).toBe('write');
    expect(token['token_id']).toBe(
      shortId(`agent.lead:agent.manager:admin,write:write:${INTENT_DIGEST}::2026-03-12T13:00:00.123456789Z`),
    );
    expect(referenceVerify(token, key.publicKey)).toBe(true);
    expect(referenceVerify({ ...token, delegate_identity: 'agent.mallory' }, key.publicKey)).toBe(false);
  });
});

describe('delegation token validation: every code, in order', () => {
  it('accepts a token for its link', () => {
    expect(codeOf(mint())).toBe('ok');
  });

  it('invalid, signature invalid (no key / wrong key), signature missing', () => {
    expect(codeOf({ ...mint(), delegate_identity: '' })).toBe('delegation_token_invalid');
    expect(codeOf(mint(), LINK, binding({ verifyKeys: [] }))).toBe('delegation_token_signature_invalid');
    expect(codeOf(mint(), LINK, binding({ verifyKeys: [generateSigningKey()] }))).toBe('delegation_token_signature_invalid');
    const { signature: _s, ...unsigned } = mint();
    expect(codeOf(unsigned)).toBe('delegation_token_signature_missing');
  });

  it('expired against the wall clock, before any identity check', () => {
    const old = mint({ now: addSeconds(nowUTC(), -7200), delegate: 'someone.else' });
    expect(codeOf(old)).toBe('delegation_token_expired');
  });

  it('delegator and delegate mismatches', () => {
    expect(codeOf(mint({ delegator: 'agent.other' }))).toBe('delegation_token_delegator_mismatch');
    expect(codeOf(mint({ delegate: 'agent.other' }))).toBe('delegation_token_delegate_mismatch');
  });

  it('intent and policy digests are checked only when the token carries them', () => {
    expect(codeOf(mint({ intentDigest: 'a'.repeat(64) }))).toBe('delegation_token_intent_mismatch');
    expect(codeOf(mint({ policyDigest: 'a'.repeat(64) }))).toBe('delegation_token_policy_mismatch');
    expect(codeOf(mint({ intentDigest: INTENT_DIGEST, policyDigest: POLICY_DIGEST }))).toBe('ok');
  });

  it('scope: any required scope in scope ∪ {scope_class}, or *', () => {
    expect(codeOf(mint({ scope: ['read'] }))).toBe('delegation_token_scope_mismatch');
    expect(codeOf(mint({ scope: ['read'], scopeClass: 'write' }))).toBe('ok');
    expect(codeOf(mint({ scope: ['read'] }), LINK, binding({ requiredScopes: ['admin', 'read'] }))).toBe('ok');
    expect(codeOf(mint({ scope: ['*'] }))).toBe('ok');
  });
});

describe('evaluateDelegations (chain validation and gate eval step 7)', () => {
  const run = (tokens: ParsedToken[], target = v5Intent()) => evaluateDelegations({ ...binding(), tokens, intent: target });

  it('grants a complete chain, consuming tokens in link order whatever order they come in', () => {
    const tokens = chainTokens();
    const result = run(parsed(tokens[2], tokens[0], tokens[1]));
    expect(result).toMatchObject({ granted: true, reasonCodes: ['delegation_granted'], violations: [], validCount: 3, requiredLinks: 3 });
    // delegation_ref lists the valid token ids in byte order, not chain order (gate.md §3.6 step 7)
    expect(result.validTokenIds).toEqual(tokens.map((t) => String(t['token_id'])).sort());
  });

  it('no tokens: delegation_token_missing / delegation_not_granted', () => {
    expect(run([])).toMatchObject({ granted: false, reasonCodes: ['delegation_token_missing'], violations: ['delegation_not_granted'] });
  });

  it('a link left without a valid token is delegation_token_missing too; a leftover reports its first failure', () => {
    const [first, , third] = chainTokens();
    const wrong = mint({ delegator: 'agent.manager', delegate: 'agent.nobody' });
    const result = run(parsed(first, wrong, third));
    expect(result.granted).toBe(false);
    expect(result.reasonCodes).toEqual(['delegation_chain_insufficient', 'delegation_token_delegate_mismatch', 'delegation_token_missing']);
    expect(result.violations).toEqual(['delegation_not_granted']);
    expect(result.entries.map((e) => [e.delegator_identity, e.delegate_identity, e.valid, e.error_code])).toEqual([
      ['agent.lead', 'agent.manager', true, ''],
      ['agent.manager', 'agent.senior', false, 'delegation_token_missing'],
      ['agent.senior', 'agent.worker', true, ''],
      ['agent.manager', 'agent.nobody', false, 'delegation_token_delegate_mismatch'],
    ]);
  });

  it('a token with no failure against any unmatched link is delegation_token_chain_mismatch', () => {
    const tokens = chainTokens();
    const extra = mint();
    const result = run(parsed(...tokens, extra));
    expect(result.granted).toBe(true);
    expect(result.entries.at(-1)).toMatchObject({ token_id: extra['token_id'], error_code: 'delegation_token_chain_mismatch' });
  });

  it('unreadable token files are delegation_token_invalid', () => {
    const result = run([{ source: 'x.json', error: 'duplicate key "scope" at $' }]);
    expect(result.reasonCodes).toEqual(['delegation_chain_insufficient', 'delegation_token_invalid', 'delegation_token_missing']);
  });

  it('without a chain, one pseudo-link to the requester with any delegator', () => {
    const base = v5Intent();
    const noChain = intent({ delegation: { ...base.delegation!, chain: [] } });
    expect(requiredDelegationLinks(noChain)).toEqual([{ delegator_identity: '', delegate_identity: 'agent.worker', scope_class: 'write' }]);
    expect(run(parsed(mint({ delegator: 'anyone', delegate: 'agent.worker' })), noChain).granted).toBe(true);
    expect(requiredDelegationLinks(intent({}))[0]!.delegate_identity).toBe('agent.scenario');
  });
});

describe('audit records', () => {
  const ctx = {
    traceId: '98c069640be42974e73b8b6b',
    toolName: 'tool.write',
    intentDigest: INTENT_DIGEST,
    policyDigest: POLICY_DIGEST,
    relationship: { entity_refs: [] },
    createdAt: T0,
    producerVersion: '0.1.0',
  };

  it('approval audit carries the roll-up and one entry per token', () => {
    const result = evaluateApprovals({
      verifyKeys: [key],
      intentDigest: INTENT_DIGEST,
      policyDigest: POLICY_DIGEST,
      requiredScope: [],
      targetCount: 1,
      opCount: 1,
      now: nowUTC(),
      tokens: [{ source: 'a.json', error: 'ENOENT' }],
      requiredApprovals: 1,
      requireDistinct: false,
    });
    expect(buildApprovalAuditRecord(ctx, result)).toEqual({
      schema_id: 'gait.gate.approval_audit_record',
      schema_version: '1.0.0',
      created_at: '2026-03-12T12:00:00.123456789Z',
      producer_version: '0.1.0',
      trace_id: ctx.traceId,
      tool_name: 'tool.write',
      intent_digest: INTENT_DIGEST,
      policy_digest: POLICY_DIGEST,
      required_approvals: 1,
      valid_approvals: 0,
      approved: false,
      approvers: [],
      relationship: { entity_refs: [] },
      entries: [{ source: 'a.json', valid: false, error_code: 'approval_token_invalid' }],
    });
  });

  it('delegation audit carries delegation_ref when granted', () => {
    const tokens = chainTokens();
    const record = buildDelegationAuditRecord(ctx, evaluateDelegations({ ...binding(), tokens: parsed(...tokens), intent: v5Intent() }));
    expect(record).toMatchObject({
      schema_id: 'gait.gate.delegation_audit_record',
      delegation_required: true,
      valid_delegations: 3,
      delegated: true,
      delegation_ref: tokens.map((t) => String(t['token_id'])).sort().join(','),
    });
    expect((record['entries'] as JsonObject[]).length).toBe(3);
  });
});
