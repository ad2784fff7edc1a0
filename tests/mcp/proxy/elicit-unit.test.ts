import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../../src/keys/index.js';
import { parsePolicyYaml } from '../../../src/policy/index.js';
import { declaresFormElicitation, elicitOutcome, elicitParams, retireElicitedApproval, writeElicitedApproval } from '../../../src/mcp/proxy/elicit.js';
import { Gatekeeper } from '../../../src/mcp/proxy/gatekeeper.js';
import { DEFAULT_TARGET_MAPPING, type CallInput } from '../../../src/mcp/proxy/intent.js';
import { tempDir } from '../../cli/run.js';

const mapping = { toolPrefix: '', targets: DEFAULT_TARGET_MAPPING, argSource: 'tool_output', workspace: '/ws', riskClass: 'high' };
const call = (name: string, args: Record<string, unknown>): CallInput => ({
  name,
  arguments: args as CallInput['arguments'],
  sessionId: 's1',
  runId: 'mcp_s1',
  clientName: 'claude',
  createdAt: '2026-11-21T10:00:00Z',
});
const POLICY = `default_verdict: allow
rules:
  - name: deletes-need-approval
    effect: require_approval
    match: { tool_names: [delete_note] }
  - name: no-wipe
    effect: block
    match: { tool_names: [wipe] }
`;

describe('elicitation: capability and answers', () => {
  it('form mode is declared by an empty elicitation object or a form member, not by url alone or nothing', () => {
    expect(declaresFormElicitation({ elicitation: {} })).toBe(true);
    expect(declaresFormElicitation({ elicitation: { form: {} } })).toBe(true);
    expect(declaresFormElicitation({ elicitation: { form: {}, url: {} } })).toBe(true);
    expect(declaresFormElicitation({ elicitation: { url: {} } })).toBe(false);
    expect(declaresFormElicitation({ sampling: {} })).toBe(false);
    expect(declaresFormElicitation(undefined)).toBe(false);
    expect(declaresFormElicitation({ elicitation: true })).toBe(false);
  });

  it('only accept with approve=true approves; everything else does not', () => {
    expect(elicitOutcome({ result: { action: 'accept', content: { approve: true, reason: '  CHG-1 ' } } })).toEqual({ kind: 'approved', reason: 'CHG-1' });
    expect(elicitOutcome({ result: { action: 'accept', content: { approve: false } } }).kind).toBe('not_approved');
    expect(elicitOutcome({ result: { action: 'accept', content: { approve: 'true' } } }).kind).toBe('not_approved');
    expect(elicitOutcome({ result: { action: 'accept' } }).kind).toBe('not_approved');
    expect(elicitOutcome({ result: { action: 'decline', content: { approve: true } } }).kind).toBe('declined');
    expect(elicitOutcome({ result: { action: 'cancel' } }).kind).toBe('cancelled');
    expect(elicitOutcome({ result: { action: 'approve' } }).kind).toBe('error');
    expect(elicitOutcome({ error: { message: 'no UI' } })).toEqual({ kind: 'error', detail: 'no UI' });
    expect(elicitOutcome({ result: 'yes' }).kind).toBe('error');
  });
});

describe('elicitation: the approval goes through the token path', () => {
  const key = generateSigningKey();
  const gate = (dir: string, yaml = POLICY) =>
    new Gatekeeper({
      runtime: { policy: parsePolicyYaml(yaml), signingKey: key, traceFormat: 'ward', traceDir: dir, rateLimitStatePath: join(dir, 'rl.json'), profile: 'standard' },
      sink: { write: async () => 'mem', close: async () => undefined },
      mapping,
      approvalDir: join(dir, 'approvals'),
      approvalKeys: [key],
    });

  it('an inline approval allows exactly the approved call, once it is in the approval directory; retired, it allows nothing', () => {
    const dir = tempDir('ward-elicit-unit-');
    const g = gate(dir);
    const approvals = join(dir, 'approvals');
    const first = g.decide(call('delete_note', { path: '/n/a.txt' }), 'c1');
    expect(first.verdict).toBe('require_approval');
    expect(first.targets).toEqual(['path /n/a.txt (delete)']);
    const params = elicitParams(first, 'delete_note') as { message: string };
    expect(params.message).toContain(first.intentDigest);
    expect(params.message).toContain('path /n/a.txt (delete)');

    const { path, tokenId } = writeElicitedApproval({ decision: first, key, clientName: 'claude', reason: '', approvalDir: approvals });
    const token = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect(token['token_id']).toBe(tokenId);
    expect(token['approver_identity']).toBe('mcp-elicitation:claude');
    expect(token['reason_code']).toBe('mcp_elicitation');
    // Another call (other arguments, so another intent digest) is not approved by it.
    expect(g.decide(call('delete_note', { path: '/n/b.txt' }), 'c2').verdict).toBe('require_approval');
    const second = g.decide(call('delete_note', { path: '/n/a.txt' }), 'c3');
    expect(second.verdict).toBe('allow');
    expect(second.reasonCodes).toContain('approval_granted');

    const used = retireElicitedApproval(path, approvals);
    expect(used).toBe(join(approvals, 'used', `approval_elicited_${tokenId}.json`));
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(join(approvals, 'used'))).toHaveLength(1);
    expect(g.decide(call('delete_note', { path: '/n/a.txt' }), 'c4').verdict).toBe('require_approval');
  });

  it('an approval minted for one policy does not pass after the policy changed', () => {
    const dir = tempDir('ward-elicit-unit-policy-');
    const g = gate(dir);
    const first = g.decide(call('delete_note', { path: '/n/a.txt' }), 'c1');
    writeElicitedApproval({ decision: first, key, clientName: 'claude', reason: 'ok', approvalDir: join(dir, 'approvals') });
    const g2 = gate(dir, POLICY.replace('no-wipe', 'no-wipe-2'));
    expect(g2.decide(call('delete_note', { path: '/n/a.txt' }), 'c2').verdict).toBe('require_approval');
  });
});
