import { describe, expect, it } from 'vitest';
import { normalizeGoFlags } from '../../src/cli/program.js';
import { fixture, tempDir, ward } from './run.js';

describe('the ward command shell', () => {
  const cwd = tempDir();

  it('prints an overview on stdout and exits 0 with no arguments', () => {
    const r = ward([], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: ward');
    expect(r.stdout).toContain('gate');
    expect(r.stdout).toContain('Exit codes:');
  });

  it('suggests the closest command for a typo and exits 6', () => {
    const r = ward(['gaet'], { cwd });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("unknown command 'gaet'");
    expect(r.stderr).toContain('Did you mean gate?');
  });

  it('a command line it cannot parse is invalid input in --json output too (exit 6)', () => {
    for (const args of [['gaet', '--json'], ['gate', 'eval', '--polcy', 'x', '--json']]) {
      const r = ward(args, { cwd });
      expect(r.code).toBe(6);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error_code: 'invalid_input', error_category: 'invalid_input', retryable: false });
    }
  });

  it('has --help on every command group', () => {
    for (const group of ['demo', 'gate', 'policy', 'digest', 'keys', 'trace', 'approve', 'delegate']) {
      const r = ward([group, '--help'], { cwd });
      expect(r.code, group).toBe(0);
      expect(r.stdout, group).toContain(`Usage: ward ${group}`);
    }
    expect(ward(['gate', 'eval', '--help'], { cwd }).stdout).toContain('--context-envelope');
  });

  it('accepts Go-style single-dash long flags', () => {
    expect(normalizeGoFlags(['-policy', 'p', '-json', '--', '-x'])).toEqual(['--policy', 'p', '--json', '--', '-x']);
    const r = ward(['gate', 'eval', '-policy', fixture('policies/default-allow.yaml'), '-intent', fixture('intents/v1-approval-valid.json'), '-json'], { cwd });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).verdict).toBe('allow');
  });

  it('policy test evaluates the core only and exits with the verdict code', () => {
    const r = ward(['policy', 'test', fixture('policies/default-require-approval.yaml'), fixture('intents/v1-approval-valid.json'), '--json'], { cwd });
    expect(r.code).toBe(4);
    const out = JSON.parse(r.stdout);
    expect(out.reason_codes).toEqual(['default_require_approval']);
    expect(out.policy_digest).toBe('07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9');
    expect(out.intent_digest).toBe('4b53bb79e35105ac9170963ac6f84ed0ed15530c68f06a46fc1233c5ec766913');
  });
});

describe('ward demo (npm start)', () => {
  it('shows allow, block, approval and an approved write, with every trace verified', () => {
    const cwd = tempDir('ward-demo-');
    const r = ward(['demo', '--json'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.steps.map((s: { verdict: string }) => s.verdict)).toEqual(['allow', 'block', 'require_approval', 'allow']);
    expect(out.steps[3].reason_codes).toContain('approval_granted');
    expect(out.traces_verified).toBe(4);
    expect(out.traces_failed).toBe(0);
    const again = JSON.parse(ward(['demo', '--json'], { cwd }).stdout);
    expect(again.traces_verified).toBe(4);
    expect(ward(['trace', 'verify', '.ward/demo/traces'], { cwd }).code).toBe(0);
  });

  it('records the session as a signed runpack and builds a pack that verify and inspect accept', () => {
    const cwd = tempDir('ward-demo-');
    const out = JSON.parse(ward(['demo', '--json'], { cwd }).stdout);
    expect(out).toMatchObject({ runpack_verified: true, pack_verified: true, runpack_path: '.ward/demo/runpack_run_ward_demo.zip' });
    expect(ward(['verify', out.runpack_path, '--require-signature'], { cwd }).code).toBe(0);
    const inspect = ward(['pack', 'inspect', out.pack_path, '--json'], { cwd });
    expect(inspect.code).toBe(0);
    const tools = JSON.parse(inspect.stdout).inspect.run_lineage.intent_results.map((r: { tool_name: string }) => r.tool_name);
    expect(tools).toEqual(out.steps.map((s: { tool_name: string }) => s.tool_name));
  });

  it('bootstraps a regress fixture from the run that a later regress run passes', () => {
    const cwd = tempDir('ward-demo-');
    const out = JSON.parse(ward(['demo', '--json'], { cwd }).stdout);
    expect(out).toMatchObject({ regress_status: 'pass', regress_config: '.ward/demo/regress/ward.yaml' });
    expect(out.regress_graders).toBeGreaterThanOrEqual(4);
    const run = ward(['regress', 'run', '--config', out.regress_config, '--json'], { cwd });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).status).toBe('pass');
  });

  it('prints each stage in text mode, ending with what to try next', () => {
    const cwd = tempDir('ward-demo-');
    const r = ward(['demo'], { cwd });
    expect(r.code).toBe(0);
    const order = ['Decisions', 'delete-database', 'Evidence', 'traces    4 verified', 'runpack', 'pack ', 'regress   fixture demo: pass', 'Try next:', 'regress run'];
    const positions = order.map((text) => r.stdout.indexOf(text));
    expect(positions.every((p) => p >= 0), r.stdout).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });
});
