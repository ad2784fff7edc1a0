import { describe, expect, it } from 'vitest';
import { jcs } from '../../src/canon/index.js';
import { parsePolicyYaml, policyDigestPayload } from '../../src/policy/index.js';

/** gate.md §2.6 and §11 V2: digests the reference produced for these policies. */
describe('policy_digest golden vectors (gate.md §11 V2)', () => {
  it('default_verdict: require_approval alone has the contract payload and digest', () => {
    const loaded = parsePolicyYaml('default_verdict: require_approval\n');
    expect(jcs(policyDigestPayload(loaded.policy))).toBe(
      '{"DefaultVerdict":"require_approval","FailClosed":{"Enabled":false,"RequiredFields":[],"RiskClasses":[]},"Rules":[],"SchemaID":"gait.gate.policy","SchemaVersion":"1.0.0"}',
    );
    expect(loaded.digest).toBe('07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9');
  });

  it('explicit schema_id and schema_version equal to the defaults give the same digest', () => {
    const loaded = parsePolicyYaml('schema_id: gait.gate.policy\nschema_version: 1.0.0\ndefault_verdict: require_approval\n');
    expect(loaded.digest).toBe('07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9');
  });

  it('an empty policy defaults to require_approval', () => {
    expect(parsePolicyYaml('').digest).toBe('07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9');
  });

  it('default_verdict: allow', () => {
    expect(parsePolicyYaml('default_verdict: allow\n').digest).toBe(
      '65819d9cf07c7619aa8aaf2bd4e8d6f8e3f86b139b49a68c535fd14d77a5009f',
    );
  });

  it('the approved-registry scenario policy has the contract payload and digest', () => {
    const loaded = parsePolicyYaml(
      [
        'schema_id: gait.gate.policy',
        'schema_version: 1.0.0',
        'default_verdict: allow',
        'rules:',
        '  - name: require_write_approval',
        '    priority: 10',
        '    effect: require_approval',
        '    match:',
        '      tool_names: [tool.write]',
        '    reason_codes: [approval_required_write]',
        '',
      ].join('\n'),
    );
    expect(jcs(policyDigestPayload(loaded.policy))).toBe(
      '{"DefaultVerdict":"allow","FailClosed":{"Enabled":false,"RequiredFields":[],"RiskClasses":[]},"Rules":[{"Effect":"require_approval","Match":{"Identities":[],"ProvenanceSources":[],"RiskClasses":[],"TargetKinds":[],"TargetValues":[],"ToolNames":["tool.write"],"WorkspacePrefixes":[]},"Name":"require_write_approval","Priority":10,"ReasonCodes":["approval_required_write"],"Violations":[]}],"SchemaID":"gait.gate.policy","SchemaVersion":"1.0.0"}',
    );
    expect(loaded.digest).toBe('44ae19688443915c381be9f806b7fc9ddb2736d286c4e40464b7575a874e9420');
  });

  it('the V7 context policy (require_context_evidence derives the required mode)', () => {
    const loaded = parsePolicyYaml(
      [
        'default_verdict: block',
        'rules:',
        '  - name: allow-with-context-proof',
        '    priority: 10',
        '    effect: allow',
        '    match:',
        '      tool_names: [tool.write]',
        '    require_context_evidence: true',
        '    max_context_age_seconds: 30',
        '',
      ].join('\n'),
    );
    expect(loaded.digest).toBe('a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666');
  });

  it('the script-threshold policy (Scripts present with MaxSteps 0)', () => {
    const loaded = parsePolicyYaml('default_verdict: allow\nscripts:\n  require_approval_above: 1\n');
    expect(jcs(policyDigestPayload(loaded.policy))).toContain('"Scripts":{"BlockMixedRisk":false,"MaxSteps":0,"RequireApprovalAbove":1}');
    expect(loaded.digest).toBe('f1d2d726c74890b454261933413aa26c9ec2dfb1826835931ae36a88267c91c6');
  });

  it('the script-max-steps policy', () => {
    expect(parsePolicyYaml('default_verdict: allow\nscripts:\n  max_steps: 1\n').digest).toBe(
      '8035dbe01dedfa3849cbf0b393d60207d6ea9a3ed7bc3362f77196af83afa626',
    );
  });

  it('the script-mixed-risk policy', () => {
    expect(parsePolicyYaml('default_verdict: allow\nscripts:\n  block_mixed_risk: true\n').digest).toBe(
      'a876eb7654aaa15d2bb411d6a1a0b35d3b7cfcb0d67eab3837e4b72a9f2fe96b',
    );
  });
});
