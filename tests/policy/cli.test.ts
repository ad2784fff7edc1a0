import { chmodSync, copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadPolicyFile } from '../../src/policy/index.js';
import { REPO, tempDir, ward } from '../cli/run.js';

const LOW_RISK = join(REPO, 'policies', 'baseline-lowrisk.yaml');

describe('ward policy validate', () => {
  let cwd: string;
  beforeAll(() => {
    cwd = tempDir('ward-policy-');
  });

  it('prints the summary as JSON and exits 0', () => {
    const r = ward(['policy', 'validate', LOW_RISK, '--json'], { cwd });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    const loaded = loadPolicyFile(LOW_RISK);
    expect(out).toMatchObject({
      ok: true,
      policy_digest: loaded.digest,
      rule_count: loaded.policy.rules.length,
      default_verdict: 'allow',
      schema_id: 'gait.gate.policy',
      schema_version: '1.0.0',
    });
    expect(out['correlation_id']).toMatch(/^[0-9a-f]{24}$/);
  });

  it('prints the same facts as text', () => {
    const r = ward(['policy', 'validate', LOW_RISK], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`policy_digest=${loadPolicyFile(LOW_RISK).digest}`);
  });

  it('reads the policy from stdin with "-"', () => {
    const r = ward(['policy', 'validate', '-', '--json'], { cwd, input: 'default_verdict: require_approval\n' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      policy_digest: '07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9',
      rule_count: 0,
    });
  });

  it('reports an unknown key with the reference error envelope and exit 6', () => {
    const file = join(cwd, 'bogus.yaml');
    writeFileSync(file, 'default_verdict: block\nrules:\n  - name: r\n    effect: allow\n    match:\n      tool_names: [x]\n      bogus_key: true\n');
    const r = ward(['policy', 'validate', file, '--json'], { cwd });
    expect(r.code).toBe(6);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      ok: false,
      error: 'parse policy yaml: [7:7] unknown field "bogus_key"',
      error_code: 'invalid_input',
      error_category: 'invalid_input',
      hint: expect.stringMatching(/^fields in rules\[0\]\.match: .*tool_names/),
      retryable: false,
    });
  });

  it('reports a legacy policy with migration guidance', () => {
    const file = join(cwd, 'legacy.yaml');
    writeFileSync(file, 'version: 1\nname: old\n');
    const r = ward(['policy', 'validate', file, '--json'], { cwd });
    expect(r.code).toBe(6);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out['migration']).toMatchObject({ kind: 'policy_fields', deprecated_fields: ['version', 'name'] });
    expect(out['hint']).toMatch(/^use the repo-root `.ward.yaml` contract/);
  });

  it('prints a validation error on stderr without --json', () => {
    const file = join(cwd, 'invalid.yaml');
    writeFileSync(file, 'rules:\n  - name: r\n    effect: maybe\n');
    const r = ward(['policy', 'validate', file], { cwd });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('invalid rule effect "maybe" for r');
  });

  it('exits 6 for a missing file', () => {
    const r = ward(['policy', 'validate', join(cwd, 'nope.yaml'), '--json'], { cwd });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false });
  });

  it('checks the oss-prod profile on request', () => {
    const r = ward(['policy', 'validate', LOW_RISK, '--profile', 'oss-prod', '--json'], { cwd });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout)).toMatchObject({
      error: 'oss-prod profile rejects policy default_verdict=allow; use default_verdict: block or require_approval',
    });
  });
});

describe('ward policy fmt', () => {
  it('prints the normalized YAML and leaves the file alone without --write', () => {
    const cwd = tempDir('ward-policy-fmt-');
    const file = join(cwd, 'p.yaml');
    const original = '# mine\nrules:\n  - {name: b, effect: ALLOW, priority: 2}\n  - {name: a, effect: block, priority: 1}\n';
    writeFileSync(file, original);
    const r = ward(['policy', 'fmt', 'p.yaml'], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'schema_id: gait.gate.policy',
        'schema_version: 1.0.0',
        'default_verdict: require_approval',
        'rules:',
        '  - name: a',
        '    priority: 1',
        '    effect: block',
        '  - name: b',
        '    priority: 2',
        '    effect: allow',
        '',
      ].join('\n'),
    );
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('--write rewrites the file with the same digest and keeps its mode; a second run changes nothing', () => {
    const cwd = tempDir('ward-policy-fmt-');
    const file = join(cwd, 'p.yaml');
    copyFileSync(join(REPO, 'policies', 'baseline-mediumrisk.yaml'), file);
    // Group-writable, which the default umask (022) would strip from a newly created file.
    chmodSync(file, 0o664);
    const before = loadPolicyFile(file).digest;
    const mode = statSync(file).mode & 0o777;
    expect(mode).toBe(0o664);
    const first = ward(['policy', 'fmt', 'p.yaml', '--write', '--json'], { cwd });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, changed: true, written: true, policy_digest: before });
    expect(loadPolicyFile(file).digest).toBe(before);
    expect(statSync(file).mode & 0o777).toBe(mode);
    expect(readFileSync(file, 'utf8')).not.toContain('#');
    const second = ward(['policy', 'fmt', 'p.yaml', '--write'], { cwd });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('p.yaml is already formatted\n');
  });

  it('refuses to format an invalid policy', () => {
    const cwd = tempDir('ward-policy-fmt-');
    writeFileSync(join(cwd, 'p.yaml'), 'default_verdict: allow\ndefault_verdict: block\n');
    const r = ward(['policy', 'fmt', 'p.yaml', '--write'], { cwd });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('parse policy yaml: [2:1] mapping key "default_verdict" already defined at [1:1]');
    expect(readFileSync(join(cwd, 'p.yaml'), 'utf8')).toBe('default_verdict: allow\ndefault_verdict: block\n');
  });
});
