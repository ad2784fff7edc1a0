import { describe, expect, it } from 'vitest';
import { nowUTC } from '../../src/canon/index.js';
import { intentDigest } from '../../src/intent/digest.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { approvalCallOf, approvalTokenPayload, mintApprovalToken, normalizeApprovalToken, validateApprovalToken, type ApprovalBinding, type MintApprovalOptions } from '../../src/tokens/index.js';
import { HOUR } from './helpers.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { approvalSessionBound } from '../../src/decision/approval-binding.js';

/*
 * Ward's extension of the approval token (docs/approvals.md "What a token names"): a token may
 * name the call it approves — tool, canonical targets, argument digest — with the approver's
 * reason, and may bind the call rather than the session (`call_digest`).
 */

const key = generateSigningKey();

function intentOf(url: string, session: string, body = 'hello') {
  return normalizeIntent({
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: '2026-11-28T08:00:00Z',
    producer_version: 't',
    tool_name: 'http.post',
    args: { url, body },
    targets: [{ kind: 'url', value: url, operation: 'write' }],
    context: { identity: 'agent', workspace: '/w', risk_class: 'low', session_id: session, run_id: `run-${session}` },
  });
}

const approved = intentOf('HTTPS://Status.Internal.Example:443/health', 's1');

function tokenFor(i = approved, opts: { bindCall?: boolean; reason?: string } = {}) {
  return mint({ intentDigest: intentDigest(i), call: approvalCallOf(i), callDigest: opts.bindCall ? approvalCallOf(i).callDigest : undefined, reason: opts.reason });
}

function mint(o: Partial<MintApprovalOptions> & { intentDigest: string }) {
  return mintApprovalToken({ policyDigest: 'b'.repeat(64), ttlNs: HOUR, scope: ['tool:http.post'], approver: 'alice', reasonCode: 'manual_approval', now: nowUTC(), producerVersion: 't', key, ...o });
}

function bindingFor(i: ReturnType<typeof intentOf>, extra: Partial<ApprovalBinding> = {}): ApprovalBinding {
  return { verifyKeys: [key], intentDigest: intentDigest(i), policyDigest: 'b'.repeat(64), requiredScope: ['tool:http.post'], targetCount: 1, opCount: 1, call: approvalCallOf(i), now: nowUTC(), ...extra };
}

const codeOf = (token: unknown, b: ApprovalBinding) => {
  const r = validateApprovalToken(token as never, b);
  return r.ok ? 'ok' : `${r.code}: ${r.message}`;
};

describe('a token that names its call', () => {
  it('carries the tool, the canonical targets, the argument digest and the reason, signed', () => {
    const t = tokenFor(approved, { reason: 'checked the health endpoint' });
    expect(t['tool_name']).toBe('http.post');
    expect(t['targets']).toEqual(['url:https://status.internal.example/health (write)']);
    expect(t['args_digest']).toBe(approvalCallOf(approved).argsDigest);
    expect(t['reason']).toBe('checked the health endpoint');
    expect(t['call_digest']).toBeUndefined();
    expect(codeOf(t, bindingFor(approved))).toBe('ok');
    // Changing any named field breaks the signature.
    expect(codeOf({ ...t, targets: ['url:https://collector.attacker.example/in (write)'] }, bindingFor(approved))).toMatch(/^approval_token_signature_invalid/);
    expect(codeOf({ ...t, reason: 'something else' }, bindingFor(approved))).toMatch(/^approval_token_signature_invalid/);
  });

  it('names the targets the gate checks: declared ones and those the arguments show', () => {
    const bare = normalizeIntent({ tool_name: 'http.post', args: { url: 'https://collector.attacker.example/in', body: 'x' }, schema_id: 'gait.gate.intent_request', schema_version: '1.0.0', created_at: '2026-11-28T08:00:00Z', producer_version: 't', targets: [], context: { identity: 'agent', workspace: '/w', risk_class: 'low' } });
    expect(bare.targets).toEqual([]);
    expect(approvalCallOf(bare).targets.some((t) => t.includes('https://collector.attacker.example/in'))).toBe(true);
  });

  it('a reference token (no extension) has the reference payload: none of the new members', () => {
    const t = mint({ intentDigest: intentDigest(approved) });
    for (const k of ['tool_name', 'targets', 'args_digest', 'call_digest', 'reason']) expect(t).not.toHaveProperty(k);
    expect(Object.keys(approvalTokenPayload(normalizeApprovalToken(t)))).not.toContain('tool_name');
    expect(codeOf(t, bindingFor(approved))).toBe('ok');
  });

  it('verifies only for the call it names (even with the right intent digest)', () => {
    const t = tokenFor(approved);
    // The same arguments aimed elsewhere: only the targets differ.
    const other = { ...approved, targets: intentOf('https://collector.attacker.example/in', 's1').targets };
    // Another call's facts with this token's intent digest (a verifier handed the wrong call).
    expect(codeOf(t, { ...bindingFor(other), intentDigest: intentDigest(approved) })).toMatch(/^approval_token_intent_mismatch: the token names targets/);
    const otherArgs = intentOf('HTTPS://Status.Internal.Example:443/health', 's1', 'secret');
    expect(codeOf(t, { ...bindingFor(otherArgs), intentDigest: intentDigest(approved) })).toMatch(/^approval_token_intent_mismatch: the token names other arguments/);
    expect(codeOf(t, bindingFor(other))).toMatch(/^approval_token_intent_mismatch/);
  });

  it('refuses half-named calls and bad reasons', () => {
    const { signature: _s, ...plain } = mint({ intentDigest: intentDigest(approved) });
    expect(() => normalizeApprovalToken({ ...plain, tool_name: 'http.post' })).toThrow(/name the approved call together/);
    expect(() => normalizeApprovalToken({ ...plain, targets: ['url:x'] })).toThrow(/name the approved call together/);
    expect(() => normalizeApprovalToken({ ...plain, reason: 'a\nb' })).toThrow(/control characters/);
    expect(() => mint({ intentDigest: intentDigest(approved), reason: 'x'.repeat(501) })).toThrow(/at most 500/);
    expect(() => mint({ intentDigest: intentDigest(approved), call: approvalCallOf(approved), callDigest: 'c'.repeat(64) })).toThrow(/not the named call/);
    expect(() => mint({ intentDigest: intentDigest(approved), callDigest: 'xyz' })).toThrow(/sha256/);
  });
});

describe('call or session (issue 32)', () => {
  const nextSession = intentOf('HTTPS://Status.Internal.Example:443/health', 's2');

  it('the call digest leaves out the run, session and request ids, and nothing else', () => {
    expect(intentDigest(nextSession)).not.toBe(intentDigest(approved));
    expect(approvalCallOf(nextSession).callDigest).toBe(approvalCallOf(approved).callDigest);
    expect(approvalCallOf(intentOf('HTTPS://Status.Internal.Example:443/health', 's1', 'other')).callDigest).not.toBe(approvalCallOf(approved).callDigest);
    const otherIdentity = { ...approved, context: { ...approved.context, identity: 'someone-else' } };
    expect(approvalCallOf(otherIdentity).callDigest).not.toBe(approvalCallOf(approved).callDigest);
  });

  it('a call-bound token grants the same call from a new session; a session-bound one, and a policy that binds sessions, do not', () => {
    const callBound = tokenFor(approved, { bindCall: true });
    expect(callBound['call_digest']).toBe(approvalCallOf(approved).callDigest);
    expect(codeOf(callBound, bindingFor(nextSession))).toBe('ok');
    expect(codeOf(callBound, bindingFor(nextSession, { sessionBound: true }))).toMatch(/^approval_token_intent_mismatch/);
    expect(codeOf(tokenFor(approved), bindingFor(nextSession))).toMatch(/^approval_token_intent_mismatch/);
    // `ward approve --call-digest`: the call digest alone binds the call (the printed command has no tool or targets to name).
    const fromCli = mint({ intentDigest: intentDigest(approved), callDigest: approvalCallOf(approved).callDigest });
    expect(fromCli['tool_name']).toBeUndefined();
    expect(codeOf(fromCli, bindingFor(nextSession))).toBe('ok');
    expect(codeOf(fromCli, bindingFor(intentOf('HTTPS://Status.Internal.Example:443/health', 's2', 'other body')))).toMatch(/^approval_token_intent_mismatch/);
    // Without the call's facts (an offline check of digests only) the call digest cannot stand in;
    // given the call digest alone (`ward approve verify --call-digest`), it can.
    expect(codeOf(callBound, { ...bindingFor(nextSession), call: undefined })).toMatch(/^approval_token_intent_mismatch/);
    expect(codeOf(callBound, { ...bindingFor(nextSession), call: undefined, callDigest: approvalCallOf(nextSession).callDigest })).toBe('ok');
    expect(codeOf(callBound, { ...bindingFor(nextSession), call: undefined, callDigest: 'c'.repeat(64) })).toMatch(/^approval_token_intent_mismatch/);
  });
});

describe('approval_binding in the policy (Ward extension)', () => {
  const rule = (extra: string) => `default_verdict: allow\nrules:\n  - name: r\n    priority: 1\n    effect: require_approval\n    match:\n      tool_names: [t]\n${extra}`;

  it('is call or session; unset leaves the policy digest as the reference computes it; anything else is refused', () => {
    const plain = parsePolicyYaml(rule(''));
    expect(parsePolicyYaml(rule('    approval_binding: call\n')).digest).not.toBe(plain.digest);
    expect(parsePolicyYaml(rule('    approval_binding: session\n')).policy.rules[0]!.approval_binding).toBe('session');
    expect(plain.policy.rules[0]!.approval_binding).toBe('');
    expect(() => parsePolicyYaml(rule('    approval_binding: forever\n'))).toThrow(/approval_binding must be call or session/);
    expect(approvalSessionBound(parsePolicyYaml(rule('    approval_binding: session\n')).policy, ['r'])).toBe(true);
    expect(approvalSessionBound(parsePolicyYaml(rule('    approval_binding: session\n')).policy, ['other'])).toBe(false);
    expect(approvalSessionBound(plain.policy, ['r'])).toBe(false);
  });
});
