import { describe, expect, it } from 'vitest';
import { isWardError } from '../../src/errors.js';
import { parseFixtureMeta, parseRegressConfig, renderFixtureMeta, renderRegressConfig, sanitizeFixtureName } from '../../src/regress/index.js';

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isWardError(err) && err.exitCode === 6) return err.message;
    throw err;
  }
  throw new Error('expected a usage error');
}

describe('fixture names (§5.2)', () => {
  it('sanitizes like the reference', () => {
    expect(sanitizeFixtureName('run_demo')).toBe('run_demo');
    expect(sanitizeFixtureName('Run Demo!!2')).toBe('run-demo-2');
    expect(sanitizeFixtureName('..//Weird__Name..')).toBe('weird__name');
    expect(sanitizeFixtureName('---')).toBe('fixture');
    expect(sanitizeFixtureName('')).toBe('fixture');
    expect(sanitizeFixtureName('ÄÖÜ run')).toBe('run');
  });
});

describe('regress config (Ward decision 8)', () => {
  it('reads YAML', () => {
    const config = parseRegressConfig(`# comment
schema_id: gait.regress.config
schema_version: "1.0.0"
fixture_set: nightly
fixtures:
  - name: zeta
    runpack: fixtures/zeta/runpack.zip
  - {name: alpha, run_id: run_a, runpack: fixtures/alpha/runpack.zip}
`);
    expect(config.fixture_set).toBe('nightly');
    expect(config.fixtures).toEqual([
      { name: 'alpha', run_id: 'run_a', runpack: 'fixtures/alpha/runpack.zip' },
      { name: 'zeta', runpack: 'fixtures/zeta/runpack.zip' },
    ]);
  });

  it("reads the reference's JSON gait.yaml", () => {
    const config = parseRegressConfig(
      JSON.stringify({ schema_id: 'gait.regress.config', schema_version: '1.0.0', fixture_set: 'default', fixtures: [{ name: 'run_demo', run_id: 'run_demo', runpack: 'fixtures/run_demo/runpack.zip' }] }, null, 2),
    );
    expect(config.fixtures[0]).toEqual({ name: 'run_demo', run_id: 'run_demo', runpack: 'fixtures/run_demo/runpack.zip' });
  });

  it('defaults the fixture set and accepts an empty list', () => {
    expect(parseRegressConfig('fixtures: []')).toMatchObject({ fixture_set: 'default', fixtures: [] });
  });

  it('refuses duplicate keys, unknown keys, wrong types, bad schema ids and duplicate fixtures', () => {
    expect(usageError(() => parseRegressConfig('fixture_set: a\nfixture_set: b\n'))).toMatch(/unique|duplicate/i);
    expect(usageError(() => parseRegressConfig('{"fixtures": [], "fixtures": []}'))).toMatch(/unique|duplicate/i);
    expect(usageError(() => parseRegressConfig('fixture_sets: a\n'))).toContain('unknown field "fixture_sets"');
    expect(usageError(() => parseRegressConfig('fixtures:\n  - name: a\n    runpak: x\n'))).toContain('unknown field "runpak"');
    expect(usageError(() => parseRegressConfig('fixtures:\n  - name: a\n'))).toContain('runpack is required');
    expect(usageError(() => parseRegressConfig('fixtures:\n  - runpack: x\n'))).toContain('name is required');
    expect(usageError(() => parseRegressConfig('fixtures:\n  - name: Bad Name\n    runpack: x\n'))).toContain('must match');
    expect(usageError(() => parseRegressConfig('fixtures:\n  - name: "1"\n    runpack: 7\n'))).toContain('runpack must be a string');
    expect(usageError(() => parseRegressConfig('schema_id: gait.other\n'))).toContain('unsupported schema_id');
    expect(usageError(() => parseRegressConfig('schema_version: 2.0.0\n'))).toContain('unsupported schema_version');
    expect(usageError(() => parseRegressConfig('fixtures:\n  - {name: a, runpack: x}\n  - {name: a, runpack: y}\n'))).toContain('listed twice');
    expect(usageError(() => parseRegressConfig('- a\n- b\n'))).toContain('mapping');
    expect(usageError(() => parseRegressConfig('a: [\n'))).toContain('parse regress config');
  });

  it('round-trips what init writes, as YAML and as JSON', () => {
    const config = { schema_id: 'gait.regress.config', schema_version: '1.0.0', fixture_set: 'default', fixtures: [{ name: '1', run_id: 'true', runpack: 'fixtures/1/runpack.zip' }, { name: 'b', runpack: 'fixtures/b/runpack.zip' }] };
    for (const format of ['yaml', 'json'] as const) expect(parseRegressConfig(renderRegressConfig(config, format))).toEqual(config);
    expect(renderRegressConfig(config, 'json').startsWith('{\n  "schema_id"')).toBe(true);
  });
});

describe('fixture.json', () => {
  const base = { schema_id: 'gait.regress.fixture', schema_version: '1.0.0', name: 'demo', run_id: 'run_demo', runpack: 'runpack.zip', expected_replay_exit_code: 0 };

  it('normalizes verdicts and the digest, and renders in struct order', () => {
    const meta = parseFixtureMeta(JSON.stringify({ ...base, expected_verdict_sequence: ['OK', 'Denied', 'dry-run'], expected_context_set_digest: 'A'.repeat(64), context_conformance: 'Required' }), 'f');
    expect(meta.expected_verdict_sequence).toEqual(['allow', 'block', 'dry_run']);
    expect(meta.expected_context_set_digest).toBe('a'.repeat(64));
    expect(meta.context_conformance).toBe('required');
    expect(Object.keys(JSON.parse(renderFixtureMeta(meta)))).toEqual([
      'schema_id', 'schema_version', 'name', 'run_id', 'runpack', 'expected_replay_exit_code', 'expected_verdict_sequence', 'context_conformance', 'expected_context_set_digest',
    ]);
  });

  it('refuses invalid values', () => {
    const bad = (extra: object) => usageError(() => parseFixtureMeta(JSON.stringify({ ...base, ...extra }), 'f'));
    expect(bad({ expected_verdict_sequence: ['maybe'] })).toContain('unknown verdict');
    expect(bad({ context_conformance: 'strict' })).toContain('context_conformance');
    expect(bad({ expected_context_set_digest: 'abc' })).toContain('64');
    expect(bad({ expected_replay_exit_code: -1 })).toContain('>= 0');
    expect(bad({ name: 'Not Valid' })).toContain('must match');
    expect(bad({ candidate_runpak: 'x' })).toContain('unknown field');
    expect(usageError(() => parseFixtureMeta('{"name":"a","name":"b"}', 'f'))).toContain('duplicate');
  });
});
