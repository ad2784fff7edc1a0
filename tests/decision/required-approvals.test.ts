import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/keys/ed25519.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { decideGate, type GateRuntime } from '../../src/decision/gate-run.js';
import { ward } from '../cli/run.js';
import { pathIntent } from './helpers.js';

/*
 * gate.md §3.6 step 7 (corrected 2026-11-25): `required_approvals` — max(min_approvals, 1) — is
 * reported whenever the winning outcome requires approval, also when a missing or insufficient
 * delegation blocks before the approval step runs.
 */

const POLICY = [
  'default_verdict: allow',
  'rules:',
  '  - name: delegated-approved-writes',
  '    priority: 1',
  '    effect: require_approval',
  '    min_approvals: 2',
  '    match:',
  '      tool_names: [tool.write]',
  '      require_delegation: true',
  '      delegation_scopes: [write]',
].join('\n') + '\n';

const intent = (tool: string) =>
  pathIntent(tool, '/tmp/x.txt', 'write', 'agent.worker', {
    delegation: {
      requester_identity: 'agent.worker',
      scope_class: 'write',
      chain: [{ delegator_identity: 'agent.lead', delegate_identity: 'agent.worker', scope_class: 'write' }],
    },
  });

const rt = (): GateRuntime => {
  const state = mkdtempSync(join(tmpdir(), 'ward-required-approvals-'));
  return {
    policy: parsePolicyYaml(POLICY),
    signingKey: generateSigningKey(),
    traceFormat: 'ward',
    traceDir: join(state, 'traces'),
    rateLimitStatePath: join(state, 'rate.json'),
    profile: 'standard',
  };
};

describe('required_approvals when a delegation failure blocks first (gate.md §3.6 step 7)', () => {
  it('is reported with the block, though no approval step ran', () => {
    const out = decideGate(rt(), { intent: intent('tool.write') }).finish('/t.json').output;
    expect(out).toMatchObject({ verdict: 'block', required_approvals: 2, delegation_required: true, valid_delegations: 0 });
    expect(out['reason_codes']).toContain('delegation_token_missing');
    expect(out).not.toHaveProperty('approval_ref');
    expect(out).not.toHaveProperty('valid_approvals');
  });

  it('is not reported when the winning outcome does not require approval', () => {
    const out = decideGate(rt(), { intent: intent('tool.read') }).finish('/t.json').output;
    expect(out['verdict']).toBe('allow');
    expect(out).not.toHaveProperty('required_approvals');
  });

  it('gate eval --json prints it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-required-approvals-cli-'));
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    writeFileSync(join(dir, 'intent.json'), JSON.stringify(intent('tool.write')));
    const r = ward(['gate', 'eval', '--policy', 'policy.yaml', '--intent', 'intent.json', '--state-dir', join(dir, '.ward'), '--json'], { cwd: dir });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'block', required_approvals: 2, delegation_required: true });
  });
});
