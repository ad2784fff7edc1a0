import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkProfile, formatPolicyYaml, loadPolicyFile, parsePolicyYaml } from '../../src/policy/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TEMPLATES = join(ROOT, 'policies');
const FIXTURES = join(ROOT, 'fixtures', 'policies');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

/** Digests the reference produced for these policies (gate.md §11 V2). */
const REFERENCE_DIGESTS: Readonly<Record<string, string>> = {
  'default-require-approval.yaml': '07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9',
  'default-allow.yaml': '65819d9cf07c7619aa8aaf2bd4e8d6f8e3f86b139b49a68c535fd14d77a5009f',
  'approved-registry.yaml': '44ae19688443915c381be9f806b7fc9ddb2736d286c4e40464b7575a874e9420',
  'context-proof.yaml': 'a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666',
  'script-threshold.yaml': 'f1d2d726c74890b454261933413aa26c9ec2dfb1826835931ae36a88267c91c6',
  'script-max-steps.yaml': '8035dbe01dedfa3849cbf0b393d60207d6ea9a3ed7bc3362f77196af83afa626',
  'script-mixed-risk.yaml': 'a876eb7654aaa15d2bb411d6a1a0b35d3b7cfcb0d67eab3837e4b72a9f2fe96b',
  'delegation-chain-depth-3.yaml': '2c6825b0dcd8d571f2efbe190ccd0cb1dde2f836bf5227d5e687eb0209770175',
};

describe('reference policy fixtures', () => {
  it.each(Object.entries(REFERENCE_DIGESTS))('%s reproduces the reference policy_digest', (file, digest) => {
    expect(loadPolicyFile(join(FIXTURES, file)).digest).toBe(digest);
  });

  it('every fixture loads and survives a fmt round trip with the same digest', () => {
    const files = yamlFiles(FIXTURES);
    expect(files.length).toBeGreaterThanOrEqual(Object.keys(REFERENCE_DIGESTS).length + 1);
    for (const file of files) {
      const loaded = loadPolicyFile(join(FIXTURES, file));
      expect(parsePolicyYaml(formatPolicyYaml(loaded.policy)).digest, file).toBe(loaded.digest);
    }
  });

  it('the benchmark policy has the two rules of the reference benchmark, in order', () => {
    const { policy } = loadPolicyFile(join(FIXTURES, 'bench-typical.yaml'));
    expect(policy.default_verdict).toBe('require_approval');
    expect(policy.fail_closed).toEqual({
      enabled: true,
      risk_classes: ['critical', 'high'],
      required_fields: ['arg_provenance', 'targets'],
      required_high_risk_fields: [],
    });
    expect(policy.rules.map((r) => [r.name, r.priority, r.effect])).toEqual([
      ['allow-safe-write', 10, 'allow'],
      ['block-external-host', 20, 'block'],
    ]);
    expect(policy.rules[0]?.match).toMatchObject({
      tool_names: ['tool.write'],
      target_kinds: ['path'],
      workspace_prefixes: ['/tmp'],
      provenance_sources: ['user'],
    });
  });
});

describe('shipped policy templates', () => {
  it('ships the three baselines', () => {
    expect(yamlFiles(TEMPLATES)).toEqual(['baseline-highrisk.yaml', 'baseline-lowrisk.yaml', 'baseline-mediumrisk.yaml']);
  });

  it.each(yamlFiles(TEMPLATES))('%s is valid, documented, and formats to the same digest', (file) => {
    const path = join(TEMPLATES, file);
    const loaded = loadPolicyFile(path);
    expect(loaded.policy.rules.length).toBeGreaterThan(0);
    expect(readFileSync(path, 'utf8').split('\n').filter((l) => l.trimStart().startsWith('#')).length).toBeGreaterThan(3);
    expect(parsePolicyYaml(formatPolicyYaml(loaded.policy)).digest).toBe(loaded.digest);
  });

  it('the medium and high baselines satisfy the oss-prod profile; the low baseline does not', () => {
    for (const file of ['baseline-mediumrisk.yaml', 'baseline-highrisk.yaml']) {
      expect(() => checkProfile(loadPolicyFile(join(TEMPLATES, file)).policy, 'oss-prod')).not.toThrow();
    }
    expect(() => checkProfile(loadPolicyFile(join(TEMPLATES, 'baseline-lowrisk.yaml')).policy, 'oss-prod')).toThrow(
      /default_verdict=allow/,
    );
  });

  it('the high-risk baseline fails closed on targets and provenance, blocks destructive tools and gates writes', () => {
    const { policy } = loadPolicyFile(join(TEMPLATES, 'baseline-highrisk.yaml'));
    expect(policy.default_verdict).toBe('block');
    expect(policy.fail_closed.enabled).toBe(true);
    expect(policy.fail_closed.risk_classes).toEqual(['critical', 'high']);
    expect(policy.fail_closed.required_fields).toEqual(expect.arrayContaining(['targets', 'arg_provenance']));
    const byName = new Map(policy.rules.map((r) => [r.name, r]));
    expect(byName.get('block-destructive-tools')?.effect).toBe('block');
    expect(byName.get('block-destructive-tools')?.match.endpoint_classes).toEqual(['fs.delete', 'proc.exec']);
    const writes = byName.get('approve-writes');
    expect(writes?.effect).toBe('require_approval');
    expect(writes?.require_distinct_approvers).toBe(true);
    expect(writes?.endpoint.path_denylist).toContain('/home/*/.ssh/*');
  });
});
