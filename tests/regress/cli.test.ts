import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_RECORD, ward, workdir } from '../pack/cli.js';
import { fixture } from '../cli/run.js';
import { checkJunit } from './xml.js';

const DEMO_RUNPACK = '.ward/demo/runpack_run_ward_demo.zip';
const DEMO_PACK = '.ward/demo/pack_run_ward_demo.zip';

/** A directory where `ward demo` has recorded its session as a runpack and a pack. */
async function demoDir(): Promise<string> {
  const cwd = workdir();
  const demo = await ward(['demo', '--json'], cwd);
  expect(demo.code).toBe(0);
  return cwd;
}

describe('ward regress bootstrap from a demo run', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await demoDir();
  });

  it('writes the fixture, the YAML config, the result and JUnit, and passes (exit 0)', async () => {
    const r = await ward(['regress', 'bootstrap', '--from', DEMO_RUNPACK, '--junit', 'junit.xml', '--json'], cwd);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      ok: true,
      status: 'pass',
      fixture_set: 'default',
      graders: 4,
      failed: 0,
      run_id: 'run_ward_demo',
      fixture_name: 'run_ward_demo',
      fixture_dir: 'fixtures/run_ward_demo',
      runpack_path: 'fixtures/run_ward_demo/runpack.zip',
      config_path: 'ward.yaml',
      output: 'regress_result.json',
      junit: 'junit.xml',
      artifact_paths: ['regress_result.json', 'junit.xml'],
      next_command: 'ward regress run --json',
    });
    expect(readFileSync(join(cwd, 'fixtures/run_ward_demo/runpack.zip'))).toEqual(readFileSync(join(cwd, DEMO_RUNPACK)));
    expect(statSync(join(cwd, 'fixtures/run_ward_demo/runpack.zip')).mode & 0o777).toBe(0o600);
    const meta = JSON.parse(readFileSync(join(cwd, 'fixtures/run_ward_demo/fixture.json'), 'utf8'));
    expect(meta).toMatchObject({
      schema_id: 'gait.regress.fixture',
      expected_tool_sequence: ['fs.read_file', 'fs.delete_file', 'fs.write_file', 'fs.write_file'],
      expected_verdict_sequence: ['allow', 'block', 'require_approval', 'allow'],
    });
    expect(readFileSync(join(cwd, 'ward.yaml'), 'utf8')).toContain('  - name: run_ward_demo\n    run_id: run_ward_demo\n    runpack: fixtures/run_ward_demo/runpack.zip\n');
    const result = JSON.parse(readFileSync(join(cwd, 'regress_result.json'), 'utf8'));
    expect(result.graders.map((g: { name: string }) => g.name)).toEqual([
      'run_ward_demo/diff',
      'run_ward_demo/expected_exit_code',
      'run_ward_demo/schema_validation',
      'run_ward_demo/trajectory',
    ]);
    expect(checkJunit(readFileSync(join(cwd, 'junit.xml'), 'utf8'))).toHaveLength(4);
  });

  it('is deterministic: the same run twice gives byte-identical result JSON and JUnit', async () => {
    await ward(['regress', 'run', '--output', 'a.json', '--junit', 'a.xml'], cwd);
    await ward(['regress', 'run', '--output', 'b.json', '--junit', 'b.xml'], cwd);
    expect(readFileSync(join(cwd, 'a.json'))).toEqual(readFileSync(join(cwd, 'b.json')));
    expect(readFileSync(join(cwd, 'a.xml'))).toEqual(readFileSync(join(cwd, 'b.xml')));
  });

  it('passes a fresh demo run as --candidate, also given as its run pack', async () => {
    const again = await ward(['demo', '--json'], cwd);
    expect(again.code).toBe(0);
    for (const candidate of [DEMO_RUNPACK, DEMO_PACK]) {
      const r = await ward(['regress', 'run', '--candidate', candidate, '--json'], cwd);
      expect(r.code, r.stdout).toBe(0);
    }
    const result = JSON.parse(readFileSync(join(cwd, 'regress_result.json'), 'utf8'));
    expect(result.graders[0].details.candidate_runpack).toBe(DEMO_PACK);
  });

  it('fails a different run with exit 5 and names the failures', async () => {
    expect((await ward(['run', 'record', DEMO_RECORD, '--json'], cwd)).code).toBe(0);
    const r = await ward(['regress', 'run', '--candidate', 'run_ward_demo=run_demo', '--junit', 'junit.xml', '--json'], cwd);
    expect(r.code).toBe(5);
    expect(r.json).toMatchObject({ ok: false, status: 'fail', failed: 2, top_failure_reason: 'unexpected_diff' });
    const cases = checkJunit(readFileSync(join(cwd, 'junit.xml'), 'utf8'));
    expect(cases.filter((c) => c.failure)).toEqual([
      { classname: 'run_ward_demo', name: 'diff', failure: 'unexpected_diff' },
      { classname: 'run_ward_demo', name: 'trajectory', failure: 'unexpected_tool_sequence,unexpected_verdict_sequence' },
    ]);
    const text = await ward(['regress', 'run', '--candidate', 'run_demo'], cwd);
    expect(text.code).toBe(5);
    expect(text.stdout).toContain('FAIL run_ward_demo/diff: unexpected_diff');
  });

  it('--context-conformance fails runs without context evidence', async () => {
    const r = await ward(['regress', 'run', '--context-conformance', '--json'], cwd);
    expect(r.code).toBe(5);
    expect(r.json).toMatchObject({ graders: 5, failed: 1, top_failure_reason: 'context_evidence_missing' });
  });

  it('reads candidate_runpack from fixture.json, relative to the fixture directory', async () => {
    const dir = workdir();
    expect((await ward(['run', 'record', DEMO_RECORD, '--json'], dir)).code).toBe(0);
    expect((await ward(['regress', 'init', '--from', 'run_demo', '--json'], dir)).code).toBe(0);
    const metaPath = join(dir, 'fixtures/run_demo/fixture.json');
    const meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    writeFileSync(metaPath, JSON.stringify({ ...meta, candidate_runpack: 'missing.zip' }));
    const r = await ward(['regress', 'run', '--json'], dir);
    expect(r.code).toBe(5);
    expect(r.json.top_failure_reason).toBe('candidate_path_invalid');
  });

  it('shows candidate_runpack as the reference does: joined to the fixture directory and cleaned', async () => {
    const dir = workdir();
    expect((await ward(['run', 'record', DEMO_RECORD, '--json'], dir)).code).toBe(0);
    expect((await ward(['regress', 'init', '--from', 'run_demo', '--json'], dir)).code).toBe(0);
    const candidateOf = async () => {
      expect((await ward(['regress', 'run', '--json'], dir)).code).toBe(0);
      const result = JSON.parse(readFileSync(join(dir, 'regress_result.json'), 'utf8'));
      const diff = result.graders.find((g: { name: string }) => g.name === 'run_demo/diff');
      return diff.details.candidate_runpack as string;
    };
    expect(await candidateOf()).toBe('fixtures/run_demo/runpack.zip');
    const metaPath = join(dir, 'fixtures/run_demo/fixture.json');
    const meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    writeFileSync(metaPath, JSON.stringify({ ...meta, candidate_runpack: './../run_demo/runpack.zip' }));
    expect(await candidateOf()).toBe('fixtures/run_demo/runpack.zip');
    const config = readFileSync(join(dir, 'ward.yaml'), 'utf8').replace('runpack: fixtures/run_demo/runpack.zip', 'runpack: ./fixtures//run_demo/runpack.zip');
    writeFileSync(join(dir, 'ward.yaml'), config);
    writeFileSync(metaPath, JSON.stringify(meta));
    expect(await candidateOf()).toBe('fixtures/run_demo/runpack.zip');
  });
});

describe('ward regress init and add', () => {
  it('init from a run id names the fixture after it and points at ward regress run', async () => {
    const cwd = workdir();
    await ward(['run', 'record', DEMO_RECORD, '--json'], cwd);
    const r = await ward(['regress', 'init', '--from', 'run_demo', '--name', 'Refund Flow!', '--json'], cwd);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, run_id: 'run_demo', fixture_name: 'refund-flow', fixture_dir: 'fixtures/refund-flow', config_path: 'ward.yaml', next_commands: ['ward regress run --json'] });
    expect(r.json['source']).toBeUndefined(); // the reference's init output has no source; add's has
    expect((await ward(['regress', 'run'], cwd)).code).toBe(0);
  });

  it('keeps a reference gait.yaml (JSON) and its fixture set when it is the only config', async () => {
    const cwd = workdir();
    await ward(['run', 'record', DEMO_RECORD, '--json'], cwd);
    writeFileSync(join(cwd, 'gait.yaml'), JSON.stringify({ schema_id: 'gait.regress.config', schema_version: '1.0.0', fixture_set: 'legacy', fixtures: [] }));
    const r = await ward(['regress', 'init', '--from', '.ward/runpack_run_demo.zip', '--json'], cwd);
    expect(r.json).toMatchObject({ config_path: 'gait.yaml', next_commands: ['ward regress run --config gait.yaml --json'] });
    expect(existsSync(join(cwd, 'ward.yaml'))).toBe(false);
    const written = JSON.parse(readFileSync(join(cwd, 'gait.yaml'), 'utf8'));
    expect(readFileSync(join(cwd, 'gait.yaml'), 'utf8')).not.toContain('#');
    expect(written).toEqual({ schema_id: 'gait.regress.config', schema_version: '1.0.0', fixture_set: 'legacy', fixtures: [{ name: 'run_demo', run_id: 'run_demo', runpack: 'fixtures/run_demo/runpack.zip' }] });
    const run = await ward(['regress', 'run', '--json', '--junit', 'j.xml'], cwd);
    expect(run.json).toMatchObject({ ok: true, fixture_set: 'legacy' });
    expect(readFileSync(join(cwd, 'j.xml'), 'utf8')).toContain('<testsuite name="gait.regress.legacy"');
  });

  it('--config gait.yaml writes the reference layout the reference can parse: JSON, no comment line', async () => {
    const cwd = workdir();
    await ward(['run', 'record', DEMO_RECORD, '--json'], cwd);
    const r = await ward(['regress', 'init', '--from', 'run_demo', '--config', 'gait.yaml', '--json'], cwd);
    expect(r.code).toBe(0);
    const text = readFileSync(join(cwd, 'gait.yaml'), 'utf8');
    expect(text.startsWith('{')).toBe(true);
    expect(JSON.parse(text)).toEqual({ schema_id: 'gait.regress.config', schema_version: '1.0.0', fixture_set: 'default', fixtures: [{ name: 'run_demo', run_id: 'run_demo', runpack: 'fixtures/run_demo/runpack.zip' }] });
    expect((await ward(['regress', 'run', '--config', 'gait.yaml'], cwd)).code).toBe(0);
    // ward.yaml stays Ward's YAML
    await ward(['regress', 'init', '--from', 'run_demo', '--config', 'ward.yaml', '--json'], cwd);
    expect(readFileSync(join(cwd, 'ward.yaml'), 'utf8')).toMatch(/^# Ward regress config/);
  });

  it('init of a run whose stub replay exits 2 expects 2 (and says so), so the fresh fixture passes', async () => {
    const cwd = workdir();
    const input = JSON.parse(readFileSync(DEMO_RECORD, 'utf8'));
    input.intents[2].tool_name = 'tool.summarize';
    input.results.pop();
    writeFileSync(join(cwd, 'partial.json'), JSON.stringify(input));
    expect((await ward(['run', 'record', 'partial.json', '--json'], cwd)).code).toBe(0);
    const init = await ward(['regress', 'init', '--from', 'run_demo', '--json'], cwd);
    expect(init.json['warnings']).toEqual([expect.stringContaining('expected_replay_exit_code is 2')]);
    expect(JSON.parse(readFileSync(join(cwd, 'fixtures/run_demo/fixture.json'), 'utf8')).expected_replay_exit_code).toBe(2);
    const run = await ward(['regress', 'run', '--json'], cwd);
    expect(run.code, run.stdout).toBe(0);
    const result = JSON.parse(readFileSync(join(cwd, 'regress_result.json'), 'utf8'));
    const exit = result.graders.find((g: { name: string }) => g.name === 'run_demo/expected_exit_code');
    expect(exit.details).toMatchObject({ expected_exit_code: 2, actual_exit_code: 2, missing_results: ['intent_3'] });
  });

  it('add accepts a gait.capture.receipt naming a runpack', async () => {
    const cwd = workdir();
    await ward(['run', 'record', DEMO_RECORD, '--json'], cwd);
    writeFileSync(join(cwd, 'capture.json'), JSON.stringify({ schema_id: 'gait.capture.receipt', schema_version: '1.0.0', from: 'run_demo', artifact_type: 'runpack', artifact_path: '.ward/runpack_run_demo.zip', run_id: 'run_demo' }));
    const r = await ward(['regress', 'add', '--from', 'capture.json', '--json'], cwd);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ fixture_name: 'run_demo', source: './.ward/runpack_run_demo.zip' });
    writeFileSync(join(cwd, 'trace.json'), JSON.stringify({ schema_id: 'gait.capture.receipt', schema_version: '1.0.0', artifact_type: 'trace', artifact_path: 'x' }));
    expect((await ward(['regress', 'add', '--from', 'trace.json', '--json'], cwd)).code).toBe(6);
  });

  it('rewrites the config from every fixture directory, sorted, on each init', async () => {
    const cwd = workdir();
    await ward(['run', 'record', DEMO_RECORD, '--json'], cwd);
    await ward(['regress', 'init', '--from', 'run_demo', '--name', 'zeta'], cwd);
    await ward(['regress', 'init', '--from', 'run_demo', '--name', 'alpha'], cwd);
    const text = readFileSync(join(cwd, 'ward.yaml'), 'utf8');
    expect(text.indexOf('name: alpha')).toBeLessThan(text.indexOf('name: zeta'));
    mkdirSync(join(cwd, 'fixtures', 'broken'));
    writeFileSync(join(cwd, 'fixtures', 'broken', 'runpack.zip'), 'x');
    const r = await ward(['regress', 'init', '--from', 'run_demo', '--json'], cwd);
    expect(r.code).toBe(6);
    expect(r.json.error).toContain('fixtures/broken has a runpack.zip but no fixture.json');
  });
});

describe('ward regress with --config elsewhere', () => {
  it('keeps fixtures/ beside the config and resolves runpack paths there', async () => {
    const cwd = await demoDir();
    const r = await ward(['regress', 'bootstrap', '--from', DEMO_RUNPACK, '--config', 'ci/regress.yaml', '--json'], cwd);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ fixture_dir: 'ci/fixtures/run_ward_demo', config_path: 'ci/regress.yaml', next_command: 'ward regress run --config ci/regress.yaml --json' });
    expect(existsSync(join(cwd, 'fixtures'))).toBe(false);
    expect(readFileSync(join(cwd, 'ci/regress.yaml'), 'utf8')).toContain('runpack: fixtures/run_ward_demo/runpack.zip');
    expect((await ward(['regress', 'run', '--config', 'ci/regress.yaml'], cwd)).code).toBe(0);
  });
});

describe('ward regress usage and config errors exit 6', () => {
  it('for a missing config, an empty one, a bad source, a bad candidate, a session chain and a damaged fixture', async () => {
    const cwd = workdir();
    expect((await ward(['regress', 'run', '--json'], cwd)).json).toMatchObject({ ok: false, error_code: 'invalid_input' });
    writeFileSync(join(cwd, 'ward.yaml'), 'fixtures: []\n');
    const empty = await ward(['regress', 'run', '--json'], cwd);
    expect(empty.code).toBe(6);
    expect(empty.json.error).toBe('no fixtures configured');
    expect((await ward(['regress', 'init', '--from', 'nope.zip', '--json'], cwd)).code).toBe(6);
    expect((await ward(['regress', 'init', '--from', fixture('runs/run_record_demo.json'), '--json'], cwd)).code).toBe(6);
    expect((await ward(['regress', 'init', '--from', 'session_chain.json', '--json'], cwd)).json.error).toContain('session chains');
    await ward(['run', 'record', DEMO_RECORD, '--json'], cwd);
    await ward(['regress', 'init', '--from', 'run_demo'], cwd);
    expect((await ward(['regress', 'run', '--candidate', 'no_such_run', '--json'], cwd)).code).toBe(6);
    expect((await ward(['regress', 'run', '--candidate', 'other=run_demo', '--json'], cwd)).json.error).toContain('no fixture named "other"');
    writeFileSync(join(cwd, 'fixtures/run_demo/runpack.zip'), 'damaged');
    const damaged = await ward(['regress', 'run', '--json'], cwd);
    expect(damaged.code).toBe(6);
    expect(damaged.json.error).toContain('is not an intact runpack');
    writeFileSync(join(cwd, 'ward.yaml'), 'fixtures: [\n');
    expect((await ward(['regress', 'run', '--json'], cwd)).code).toBe(6);
  });
});
