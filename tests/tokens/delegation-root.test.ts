import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nowUTC, ZERO_TIME, type JsonObject } from '../../src/canon/index.js';
import type { Delegation, NormalizedIntent } from '../../src/intent/types.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decideGate, type GateRuntime } from '../../src/decision/gate-run.js';
import { delegationStep } from '../../src/decision/token-steps.js';
import { gateEvalSteps } from '../../src/decision/steps.js';
import {
  delegationChainProblem,
  delegationChainRoot,
  evaluateDelegations,
  mintDelegationToken,
  type DelegationBinding,
  type MintDelegationOptions,
  type ParsedToken,
} from '../../src/tokens/index.js';
import { intent } from '../trace/fixtures.js';
import { HOUR, INTENT_DIGEST, POLICY_DIGEST } from './helpers.js';
import { pathIntent } from '../decision/helpers.js';

const key = generateSigningKey();

const mint = (delegator: string, delegate: string, overrides: Partial<MintDelegationOptions> = {}): JsonObject =>
  mintDelegationToken({ delegator, delegate, scope: ['write'], ttlNs: HOUR, now: nowUTC(), producerVersion: '0.1.0', key, ...overrides });

const parsed = (...values: JsonObject[]): ParsedToken[] => values.map((value, i) => ({ source: `d${i}.json`, value }));

function binding(overrides: Partial<DelegationBinding> = {}): DelegationBinding {
  return { verifyKeys: [key], intentDigest: INTENT_DIGEST, policyDigest: POLICY_DIGEST, requiredScopes: ['write'], now: nowUTC(), ...overrides };
}

/** A delegated intent whose chain is the given (delegator, delegate) hops. */
function delegated(requester: string, hops: [string, string][]): NormalizedIntent {
  const delegation: Delegation = {
    requester_identity: requester,
    scope_class: 'write',
    token_refs: [],
    issued_at: ZERO_TIME,
    expires_at: ZERO_TIME,
    chain: hops.map(([from, to]) => ({ delegator_identity: from, delegate_identity: to, scope_class: 'write', token_ref: '', issued_at: ZERO_TIME, expires_at: ZERO_TIME })),
  };
  return intent({ delegation });
}

const V5: [string, string][] = [
  ['agent.lead', 'agent.manager'],
  ['agent.manager', 'agent.senior'],
  ['agent.senior', 'agent.worker'],
];
const v5Tokens = () => V5.map(([from, to]) => mint(from, to));

describe('delegation chains are one chain of authority', () => {
  it('the V5 chain connects and is rooted at its first delegator', () => {
    const v5 = delegated('agent.worker', V5);
    expect(delegationChainProblem(v5)).toBeUndefined();
    expect(delegationChainRoot(v5)).toBe('agent.lead');
    expect(delegationChainRoot(intent({}))).toBeUndefined();
  });

  it('hops that do not connect, or a chain that ends elsewhere than the requester, are refused', () => {
    const gap = delegated('agent.worker', [['agent.lead', 'agent.manager'], ['agent.senior', 'agent.worker']]);
    expect(delegationChainProblem(gap)).toContain('broken at hop 1');
    const elsewhere = delegated('agent.worker', [['agent.lead', 'agent.manager']]);
    expect(delegationChainProblem(elsewhere)).toContain('not the requester agent.worker');
    // Valid tokens for every listed hop prove nothing when the hops do not form one chain.
    const r = evaluateDelegations({ ...binding(), tokens: parsed(mint('agent.lead', 'agent.manager'), mint('agent.senior', 'agent.worker')), intent: gap });
    expect(r).toMatchObject({ granted: false, validCount: 0 });
    expect(r.reasonCodes).toEqual(['delegation_chain_insufficient', 'delegation_token_chain_mismatch', 'delegation_token_missing']);
  });
});

describe('the root must be an allowed delegator', () => {
  const v5 = delegated('agent.worker', V5);

  it('grants when chain[0].delegator_identity is allowed', () => {
    const r = evaluateDelegations({ ...binding({ allowedRootDelegators: ['agent.lead'] }), tokens: parsed(...v5Tokens()), intent: v5 });
    expect(r).toMatchObject({ granted: true, validCount: 3, reasonCodes: ['delegation_granted'] });
  });

  it('an allowed delegator at a later hop does not make the chain allowed', () => {
    const r = evaluateDelegations({ ...binding({ allowedRootDelegators: ['agent.senior'] }), tokens: parsed(...v5Tokens()), intent: v5 });
    expect(r.granted).toBe(false);
    expect(r.reasonCodes).toEqual(['delegation_chain_insufficient', 'delegation_token_delegator_mismatch', 'delegation_token_missing']);
    // The root hop is the one left unproven.
    expect(r.entries.find((e) => e.error_code === 'delegation_token_missing')).toMatchObject({ delegator_identity: 'agent.lead' });
  });

  it('an empty allowed set (matched rules disagree) roots nothing', () => {
    const r = evaluateDelegations({ ...binding({ allowedRootDelegators: [] }), tokens: parsed(...v5Tokens()), intent: v5 });
    expect(r.granted).toBe(false);
  });

  it('without a chain, the token proving the requester must come from an allowed delegator', () => {
    const noChain = delegated('agent.worker', []);
    const from = (delegator: string) =>
      evaluateDelegations({ ...binding({ allowedRootDelegators: ['agent.lead'] }), tokens: parsed(mint(delegator, 'agent.worker')), intent: noChain });
    expect(from('agent.lead').granted).toBe(true);
    expect(from('agent.mallory')).toMatchObject({ granted: false, reasonCodes: ['delegation_chain_insufficient', 'delegation_token_delegator_mismatch', 'delegation_token_missing'] });
  });
});

describe('the gate roots delegation at the matched rules\' allowed delegators', () => {
  const policy = parsePolicyYaml(
    [
      'default_verdict: block',
      'rules:',
      '  - name: delegated-writes',
      '    priority: 1',
      '    effect: allow',
      '    match:',
      '      tool_names: [tool.write]',
      '      require_delegation: true',
      '      allowed_delegator_identities: [agent.senior]',
      '      delegation_scopes: [write]',
    ].join('\n') + '\n',
  );
  const rawIntent = (hops: [string, string][]) =>
    pathIntent('tool.write', '/tmp/x.txt', 'write', 'agent.worker', {
      delegation: {
        requester_identity: 'agent.worker',
        scope_class: 'write',
        chain: hops.map(([from, to]) => ({ delegator_identity: from, delegate_identity: to, scope_class: 'write' })),
      },
    });
  const rt = (): GateRuntime => {
    const state = mkdtempSync(join(tmpdir(), 'ward-deleg-root-'));
    return { policy, signingKey: key, traceFormat: 'ward', traceDir: join(state, 'traces'), rateLimitStatePath: join(state, 'rate.json'), profile: 'standard' };
  };
  const decide = (hops: [string, string][], tokens: JsonObject[], runtime = rt()) =>
    decideGate(runtime, { intent: rawIntent(hops), steps: gateEvalSteps(runtime, { delegations: delegationStep({ tokens: () => parsed(...tokens), verifyKeys: [key] }) }) }).trace;

  it('a chain rooted at the allowed delegator is allowed', () => {
    const t = decide([['agent.senior', 'agent.worker']], [mint('agent.senior', 'agent.worker')]);
    expect(t['verdict']).toBe('allow');
    expect(t['reason_codes']).toContain('delegation_granted');
  });

  it('a chain rooted elsewhere is not allowed, though the allowed delegator appears at a later hop', () => {
    const t = decide(V5, v5Tokens());
    expect(t['verdict']).toBe('block');
    expect(t['reason_codes']).not.toContain('delegation_granted');
  });
});
