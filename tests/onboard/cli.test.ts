import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCheck, doctorExitCode, nodeVersionCheck, runDoctor } from '../../src/cli/commands/onboard.js';
import { REPO, tempDir, ward } from '../cli/run.js';

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe('ward init', () => {
  it('writes .ward.yaml from the high-risk baseline by default and suggests next steps', () => {
    const cwd = tempDir();
    const r = ward(['init'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(cwd, '.ward.yaml'), 'utf8')).toBe(readFileSync(join(REPO, 'policies', 'baseline-highrisk.yaml'), 'utf8'));
    expect(r.stdout).toContain('wrote .ward.yaml from baseline-highrisk: 5 rules, default verdict block');
    expect(r.stdout).toContain('check');
  });

  it('refuses to overwrite without --force (exit 6, naming the fix), and replaces with it', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.ward.yaml'), 'default_verdict: allow\n');
    const refused = ward(['init', '--template', 'baseline-lowrisk'], { cwd });
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('.ward.yaml already exists');
    expect(refused.stderr).toContain('init --template baseline-lowrisk --force');
    expect(readFileSync(join(cwd, '.ward.yaml'), 'utf8')).toBe('default_verdict: allow\n');
    const forced = ward(['init', '--template', 'baseline-lowrisk', '--force', '--json'], { cwd });
    expect(forced.code).toBe(0);
    const out = json(forced.stdout);
    expect(out).toMatchObject({ ok: true, template: 'baseline-lowrisk', overwritten: true, policy_path: '.ward.yaml' });
    expect(out['policy_digest']).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(cwd, '.ward.yaml'), 'utf8')).toBe(readFileSync(join(REPO, 'policies', 'baseline-lowrisk.yaml'), 'utf8'));
  });

  it('rejects an unknown template with the allowed choices', () => {
    const r = ward(['init', '--template', 'baseline-extreme'], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('baseline-highrisk');
  });
});

describe('ward check', () => {
  it('reports contract, rule count, default verdict and no findings for a fresh init', () => {
    const cwd = tempDir();
    ward(['init', '--template', 'baseline-mediumrisk'], { cwd });
    const r = ward(['check', '--json'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const out = json(r.stdout);
    expect(out['contract']).toMatchObject({ schema_id: 'gait.gate.policy', schema_version: '1.0.0' });
    expect(out['rule_count']).toBeGreaterThan(0);
    expect(out['findings']).toEqual([]);
    expect(typeof out['default_verdict']).toBe('string');
  });

  it('warns once for the rules whose endpoint lists a call escapes through an argument Ward does not map', () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'p.yaml'),
      `default_verdict: block
fail_closed: { enabled: true, risk_classes: [high], required_fields: [targets] }
rules:
  - { name: files, effect: allow, match: { target_kinds: [path] }, endpoint: { path_denylist: ['secrets/**'] } }
  - { name: net, effect: allow, match: { target_kinds: [url] }, endpoint: { domain_allowlist: [api.example.com], domain_denylist: ['class:metadata'] } }
  - { name: plain, effect: allow, match: { tool_names: [tool.read] } }
`,
    );
    const out = json(ward(['check', '--policy', 'p.yaml', '--json'], { cwd }).stdout);
    const gaps = out['gap_warnings'] as { code: string; message: string }[];
    expect(gaps.map((g) => g.code)).toEqual(['lists_escapable_by_unmapped_arguments']);
    expect(gaps[0]!.message).toContain('files (path_denylist), net (domain_allowlist, domain_denylist)');
    expect(gaps[0]!.message).not.toContain('plain');
    // The escape is real: a relative path under an argument not named for paths is checked against no list.
    writeFileSync(join(cwd, 'i.json'), JSON.stringify({ tool_name: 'tool.mcp__x__save', args: { note: 'secrets/key.pem' }, targets: [{ kind: 'path', value: 'ok.txt' }], context: { identity: 'a', workspace: cwd, risk_class: 'low' } }));
    const escaped = json(ward(['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json', '--json'], { cwd }).stdout);
    expect(escaped['verdict']).toBe('allow');
    writeFileSync(join(cwd, 'i.json'), JSON.stringify({ tool_name: 'tool.mcp__x__save', args: { file: 'secrets/key.pem' }, targets: [{ kind: 'path', value: 'ok.txt' }], context: { identity: 'a', workspace: cwd, risk_class: 'low' } }));
    expect(json(ward(['gate', 'eval', '--policy', 'p.yaml', '--intent', 'i.json', '--json'], { cwd }).stdout)['verdict']).toBe('block');
  });

  it('lists each finding with its fix, and policy-wide gap warnings', () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'p.yaml'),
      `default_verdict: allow
rules:
  - { name: approve-all, priority: 1, effect: require_approval, match: {} }
  - { name: allow-reads, priority: 5, effect: allow, match: { endpoint_classes: [fs.read] } }
  - { name: dead, priority: 9, effect: block, match: { target_kinds: [file] } }
  - { name: risky, priority: 0, effect: allow, match: { risk_classes: [critical], tool_names: [x], identities: [] } }
`,
    );
    const r = ward(['check', '--policy', 'p.yaml', '--json'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const out = json(r.stdout);
    const findings = (out['findings'] as { kind: string; rule: string; fix: string }[]).map((f) => `${f.kind}:${f.rule}`);
    expect(findings).toEqual([
      'high_risk_allow_without_evidence:risky',
      'shadowed:allow-reads',
      'never_matches:dead',
      'empty_selector:risky',
    ]);
    expect((out['gap_warnings'] as { code: string }[]).map((g) => g.code)).toEqual(['default_allow', 'fail_closed_disabled']);
    const text = ward(['check', '--policy', 'p.yaml'], { cwd });
    expect(text.stdout).toContain('findings (4):');
    expect(text.stdout).toContain('shadowed: rule allow-reads is shadowed: higher-priority rule approve-all');
    expect(text.stdout).toContain('fix: give allow-reads a lower priority number than approve-all');
  });

  it('without .ward.yaml tells the user to run ward init (exit 6)', () => {
    const r = ward(['check'], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('no policy at');
    expect(r.stderr).toMatch(/hint: create one with: .*ward.* init/);
  });

  it('an invalid policy exits 6 with the parse error and what to do', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.ward.yaml'), 'default_verdict: block\nbogus_key: 1\n');
    const r = ward(['check', '--json'], { cwd });
    expect(r.code).toBe(6);
    const out = json(r.stdout);
    expect(out['ok']).toBe(false);
    expect(String(out['error'])).toContain('unknown field "bogus_key"');
    expect(String(out['hint'])).toContain('check again');
  });
});

describe('ward doctor', () => {
  it('passes on a fresh directory (exit 0) with the gait.doctor.result shape', () => {
    const cwd = tempDir();
    ward(['init'], { cwd });
    const r = ward(['doctor', '--json'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const out = json(r.stdout);
    expect(out).toMatchObject({ schema_id: 'gait.doctor.result', schema_version: '1.0.0', non_fixable: false });
    const checks = out['checks'] as { name: string; scope: string; status: string }[];
    expect(checks.map((c) => c.name)).toEqual(expect.arrayContaining(['node_version', 'state_dir', 'key_permissions', 'store', 'policy_file']));
    // Every universal check passes; the checkout-only build check depends on this working tree.
    expect(checks.filter((c) => c.scope === 'universal').every((c) => c.status === 'pass')).toBe(true);
    expect(String(out['summary'])).toMatch(/^doctor: onboarding_mode=repo_checkout status=(pass|warn) failed=0 warned=[01] non_fixable=false$/);
  });

  it('a private key readable by others fails with the chmod fix, and stays exit 0 (fixable)', () => {
    const cwd = tempDir();
    expect(ward(['keys', 'init'], { cwd }).code).toBe(0);
    const key = join(cwd, '.ward', 'keys', 'ward_private.key');
    chmodSync(key, 0o644);
    const r = ward(['doctor', '--json'], { cwd });
    expect(r.code).toBe(0);
    const out = json(r.stdout);
    expect(out['status']).toBe('fail');
    const keyCheck = (out['checks'] as { name: string; status: string; fix_command?: string }[]).find((c) => c.name === 'key_permissions')!;
    expect(keyCheck.status).toBe('fail');
    expect(keyCheck.fix_command).toBe(`chmod 600 ${key}`);
    expect(out['fix_commands']).toContain(`chmod 600 ${key}`);
    const text = ward(['doctor'], { cwd });
    expect(text.stdout).toContain(`fix: chmod 600 ${key}`);
    chmodSync(key, 0o600);
    const fixed = json(ward(['doctor', '--json'], { cwd }).stdout);
    expect((fixed['checks'] as { name: string; status: string }[]).find((c) => c.name === 'key_permissions')!.status).toBe('pass');
  });

  it('warns without .ward.yaml and suggests ward init', () => {
    const cwd = tempDir();
    const out = json(ward(['doctor', '--json'], { cwd }).stdout);
    expect(out['status']).toBe('warn');
    const policy = (out['checks'] as { name: string; status: string; fix_command?: string }[]).find((c) => c.name === 'policy_file')!;
    expect(policy.status).toBe('warn');
    expect(policy.fix_command).toMatch(/ init$/);
  });

  it('opens a free store and counts it; a store in use is reported by pid, not opened', async () => {
    const cwd = tempDir();
    expect(ward(['store', 'list'], { cwd }).code).toBe(0);
    const free = await runDoctor({ cwd, stateDir: join(cwd, '.ward') });
    expect(free.checks.find((c) => c.name === 'store')).toMatchObject({ status: 'pass', message: expect.stringContaining('opens cleanly (0 entries)') });
    const lock = join(cwd, '.ward', 'store', 'ward.lock');
    // A live holder: this test process (doctor runs in a child, so it is someone else's lock).
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), proc_start: '', since: new Date().toISOString(), token: 'x' }));
    const r = ward(['doctor', '--json'], { cwd });
    const store = (json(r.stdout)['checks'] as { name: string; status: string; message: string }[]).find((c) => c.name === 'store')!;
    expect(store.status).toBe('pass');
    expect(store.message).toContain(`in use by pid ${process.pid}`);
    expect(existsSync(lock)).toBe(true);
    expect(JSON.parse(readFileSync(lock, 'utf8')).token).toBe('x');
  });

  it('a state dir that is a file fails with a fix', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'state'), 'x');
    const r = await runDoctor({ cwd, stateDir: join(cwd, 'state') });
    expect(r.checks.find((c) => c.name === 'state_dir')).toMatchObject({ status: 'fail', fix_command: `mv ${join(cwd, 'state')} ${join(cwd, 'state')}.bak` });
    expect(doctorExitCode(r)).toBe(0);
  });

  it('Node older than 20.19 is not fixable by Ward: exit 7', async () => {
    expect(nodeVersionCheck('20.19.0').status).toBe('pass');
    expect(nodeVersionCheck('22.1.0').status).toBe('pass');
    expect(nodeVersionCheck('20.18.3')).toMatchObject({ status: 'fail', non_fixable: true });
    const r = await runDoctor({ cwd: tempDir(), stateDir: join(tempDir(), '.ward'), nodeVersion: '18.20.0' });
    expect(r.non_fixable).toBe(true);
    expect(r.status).toBe('fail');
    expect(r.fix_commands.some((c) => c.includes('install Node.js 20.19 or newer'))).toBe(true);
    expect(doctorExitCode(r)).toBe(7);
  });

  it('in a checkout, a dist/ older than the sources asks for npm run build', () => {
    const root = tempDir();
    const fs = { src: join(root, 'src'), dist: join(root, 'dist') };
    for (const d of Object.values(fs)) mkdirSync(d);
    writeFileSync(join(fs.dist, 'index.js'), '');
    writeFileSync(join(fs.src, 'a.ts'), '');
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(fs.dist, 'index.js'), past, past);
    expect(buildCheck(root)).toMatchObject({ status: 'warn', fix_command: 'npm run build' });
    expect(statSync(join(fs.src, 'a.ts')).mtimeMs).toBeGreaterThan(past.getTime());
    rmSync(join(fs.dist, 'index.js'));
    expect(buildCheck(root)).toMatchObject({ status: 'fail', fix_command: 'npm run build' });
  });
});
