import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyDigestedJson, withoutSignature } from '../../src/trace/sign.js';
import { readPublicKeyFile } from '../../src/keys/index.js';
import { fixture, tempDir, v7PrivateKeyFile, ward, wardAsync } from './run.js';

/** gate.md §11 V7: the context policy (digest a94ac865…). */
const V7_POLICY = fixture('policies/context-proof.yaml');

let dir: string;
beforeAll(() => {
  dir = tempDir();
  writeFileSync(join(dir, 'allow.yaml'), 'default_verdict: allow\n');
  writeFileSync(join(dir, 'approve.yaml'), 'default_verdict: require_approval\n');
  writeFileSync(join(dir, 'dry.yaml'), 'default_verdict: dry_run\n');
});

const json = (s: string) => JSON.parse(s) as Record<string, unknown>;

describe('ward gate eval', () => {
  it('reproduces V7 end to end: prepared intent digest, trace id and a trace signed with the V7 key', () => {
    const traceOut = join(dir, 'v7-trace.json');
    const r = ward(
      [
        'gate', 'eval', '--policy', V7_POLICY, '--intent', fixture('intents/v1-approval-valid.json'),
        '--context-envelope', fixture('envelopes/v7-envelope.json'), '--evaluation-time', '2026-03-12T12:00:00Z',
        '--key-mode', 'prod', '--private-key', v7PrivateKeyFile(), '--trace-out', traceOut, '--json',
      ],
      { cwd: dir },
    );
    expect(r.code).toBe(3);
    const out = json(r.stdout);
    expect(out).toMatchObject({
      ok: true,
      verdict: 'block',
      reason_codes: ['context_freshness_exceeded', 'matched_rule_allow_with_context_proof'],
      violations: ['context_freshness_violation'],
      intent_digest: '5a851409b8a555437e75559fdae924b969b53b3e9d5dce1806ac4e005ebd8d2b',
      policy_digest: 'a94ac865a8477f9a9552ea35524d820fccced3b73199d68d5661801050146666',
      trace_id: '98c069640be42974e73b8b6b',
      context_ref_count: 2,
      context_source: 'context_envelope',
    });
    const trace = JSON.parse(readFileSync(traceOut, 'utf8'));
    expect(trace.signature.key_id).toBe('65b60673d6ed884bf01c2c222d82ada0740f29ac3355d6a925c81f17f47a27b8');
    expect(trace.reason_codes).toEqual(out['reason_codes']);
    expect(trace.context_set_digest).toBe('793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f');
    const key = readPublicKeyFile(fixture('keys/v7_public.key'));
    expect(verifyDigestedJson(withoutSignature(trace), trace.signature, [key]).ok).toBe(true);
    expect((statSync(traceOut).mode & 0o777).toString(8)).toBe('600');
  });

  it('--trace-format gait writes exactly the reference field set', () => {
    const traceOut = join(dir, 'gait-trace.json');
    const r = ward(
      ['gate', 'eval', '--policy', V7_POLICY, '--intent', fixture('intents/v1-approval-valid.json'), '--trace-format', 'gait', '--trace-out', traceOut, '--json'],
      { cwd: dir },
    );
    expect(r.code).toBe(3);
    const trace = JSON.parse(readFileSync(traceOut, 'utf8'));
    expect(trace.reason_codes).toBeUndefined();
    expect(trace.matched_rule).toBeUndefined();
    expect(trace.verdict).toBe('block');
  });

  it('maps verdicts to exit codes: allow 0, dry_run 0, require_approval 4', () => {
    const intentPath = fixture('intents/v1-approval-valid.json');
    expect(ward(['gate', 'eval', '--policy', 'allow.yaml', '--intent', intentPath, '--json'], { cwd: dir }).code).toBe(0);
    expect(ward(['gate', 'eval', '--policy', 'dry.yaml', '--intent', intentPath, '--json'], { cwd: dir }).code).toBe(0);
    const approval = ward(['gate', 'eval', '--policy', 'approve.yaml', '--intent', intentPath, '--json'], { cwd: dir });
    expect(approval.code).toBe(4);
    expect(json(approval.stdout)).toMatchObject({
      verdict: 'require_approval',
      reason_codes: ['approval_token_missing', 'default_require_approval'],
      violations: ['approval_not_granted'],
      required_approvals: 1,
    });
  });

  it('--simulate never enforces and reports what would have happened', () => {
    const r = ward(['gate', 'eval', '--policy', V7_POLICY, '--intent', fixture('intents/v1-approval-valid.json'), '--simulate', '--json'], { cwd: dir });
    expect(r.code).toBe(0);
    const out = json(r.stdout);
    expect(out['verdict']).toBe('allow');
    expect(out['would_have_blocked']).toBe(true);
    expect(out['simulated_verdict']).toBe('block');
    expect(out['reason_codes']).toContain('simulated_block');
    expect(out['violations']).toBeUndefined();
  });

  it('--explain --json prints the policy_explain object with the core outcome', () => {
    const r = ward(['gate', 'eval', '--policy', 'approve.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--explain', '--json'], { cwd: dir });
    expect(r.code).toBe(4);
    const out = json(r.stdout);
    expect(out['schema_id']).toBe('gait.gate.policy_explain');
    expect(out['reason_codes']).toEqual(['default_require_approval']);
    expect(out['approval_required']).toBe(true);
    expect(out['context_evidence_status']).toBe('not_required');
  });

  it('refuses missing flags, bad times and bad policies with exit 6 and the error envelope', () => {
    const missing = ward(['gate', 'eval', '--policy', 'allow.yaml', '--json'], { cwd: dir });
    expect(missing.code).toBe(6);
    expect(json(missing.stdout)).toMatchObject({
      ok: false,
      error: 'both --policy and --intent are required',
      error_code: 'invalid_input',
      error_category: 'invalid_input',
      hint: 'ward gate eval --policy policy.yaml --intent intent.json [--json]',
      retryable: false,
    });
    const badTime = ward(['gate', 'eval', '--policy', 'allow.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--evaluation-time', 'yesterday', '--json'], { cwd: dir });
    expect(badTime.code).toBe(6);
    expect(String(json(badTime.stdout)['error'])).toMatch(/^invalid --evaluation-time:/);
    writeFileSync(join(dir, 'bogus.yaml'), 'default_verdict: allow\nbogus_key: 1\n');
    const bogus = ward(['gate', 'eval', '--policy', 'bogus.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--json'], { cwd: dir });
    expect(bogus.code).toBe(6);
    expect(json(bogus.stdout)['error']).toBe('parse policy yaml: [2:1] unknown field "bogus_key"');
  });

  it('refuses malformed intent JSON with exit 6 and never writes an allow', () => {
    const r = ward(['gate', 'eval', '--policy', 'allow.yaml', '--intent', '-', '--json'], { cwd: dir, input: '{"tool_name": ' });
    expect(r.code).toBe(6);
    expect(String(json(r.stdout)['error'])).toMatch(/^parse intent json:/);
  });

  it('blocks (exit 3, traced) an unevaluable intent in a fail-closed risk class', () => {
    writeFileSync(join(dir, 'fc.yaml'), 'default_verdict: allow\nfail_closed: { enabled: true }\n');
    const bad = JSON.stringify({ tool_name: 'x', targets: [{ kind: 'warp', value: 'y' }], context: { identity: 'a', workspace: '/w', risk_class: 'high' } });
    const r = ward(['gate', 'eval', '--policy', 'fc.yaml', '--intent', '-', '--json'], { cwd: dir, input: bad });
    expect(r.code).toBe(3);
    const out = json(r.stdout);
    expect(out['reason_codes']).toEqual(['fail_closed_intent_invalid']);
    expect(readFileSync(String(out['trace_path']), 'utf8')).toContain('"intent_not_evaluable"');
  });

  it('stops with exit 3 and no trace when a Wrkr inventory is unreadable in high risk', () => {
    const r = ward(
      ['gate', 'eval', '--policy', 'allow.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--wrkr-inventory', 'nope.json', '--state-dir', 'wrkr-state', '--json'],
      { cwd: dir },
    );
    expect(r.code).toBe(3);
    expect(String(json(r.stdout)['error'])).toMatch(/^wrkr inventory unavailable in fail-closed mode:/);
    expect(() => readdirSync(join(dir, 'wrkr-state', 'traces'))).toThrow();
  });

  it('prints a readable summary without --json', () => {
    const r = ward(['gate', 'eval', '--policy', V7_POLICY, '--intent', fixture('intents/v1-approval-valid.json')], { cwd: dir });
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^verdict: block\nreasons: context_evidence_missing/);
    expect(r.stdout).toContain('trace: ');
  });

  it('10 concurrent processes in one directory all succeed, share one key and lose no trace', async () => {
    const cwd = tempDir('ward-concurrent-');
    writeFileSync(join(cwd, 'allow.yaml'), 'default_verdict: allow\n');
    const runs = await Promise.all(
      Array.from({ length: 10 }, () => wardAsync(['gate', 'eval', '--policy', 'allow.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--json'], { cwd })),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const paths = runs.map((r) => String(json(r.stdout)['trace_path']));
    expect(new Set(paths).size).toBe(10);
    expect(readdirSync(join(cwd, '.ward', 'traces'))).toHaveLength(10);
    const keyIds = new Set(paths.map((p) => JSON.parse(readFileSync(p, 'utf8')).signature.key_id));
    expect(keyIds.size).toBe(1);
  });
});

describe('ward gate eval: kill switch and profiles', () => {
  it('an active kill switch blocks; an unreadable one blocks high risk (kill_switch_state_unavailable)', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'allow.yaml'), 'default_verdict: allow\n');
    const stopped = ward(
      ['gate', 'eval', '--policy', 'allow.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--kill-switch-state', fixture('kill-switch/global-stop.json'), '--json'],
      { cwd },
    );
    expect(stopped.code).toBe(3);
    expect(json(stopped.stdout)).toMatchObject({
      verdict: 'block',
      violations: ['kill_switch_active'],
      kill_switch: { status: 'active', matched_entry_ids: ['stop-all'] },
    });
    expect(json(stopped.stdout)['reason_codes']).toContain('kill_switch_active');
    const missing = ward(
      ['gate', 'eval', '--policy', 'allow.yaml', '--intent', fixture('intents/v1-approval-valid.json'), '--kill-switch-state', 'nope.json', '--json'],
      { cwd },
    );
    expect(missing.code).toBe(3);
    expect(json(missing.stdout)).toMatchObject({ reason_codes: ['kill_switch_state_unavailable'], kill_switch: { status: 'unavailable' } });
  });

  it('oss-prod refuses a default-allow policy, --simulate and non-prod keys', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'allow.yaml'), 'default_verdict: allow\n');
    const intentPath = fixture('intents/v1-approval-valid.json');
    const noKey = ward(['gate', 'eval', '--policy', 'allow.yaml', '--intent', intentPath, '--profile', 'oss-prod', '--json'], { cwd });
    expect(noKey.code).toBe(6);
    const allow = ward(
      ['gate', 'eval', '--policy', 'allow.yaml', '--intent', intentPath, '--profile', 'oss-prod', '--key-mode', 'prod', '--private-key', v7PrivateKeyFile(), '--json'],
      { cwd },
    );
    expect(allow.code).toBe(6);
    expect(json(allow.stdout)['error']).toBe('oss-prod profile rejects policy default_verdict=allow; use default_verdict: block or require_approval');
    const simulate = ward(['gate', 'eval', '--policy', 'allow.yaml', '--intent', intentPath, '--profile', 'oss-prod', '--simulate', '--json'], { cwd });
    expect(simulate.code).toBe(6);
    expect(json(simulate.stdout)['error']).toBe('oss-prod profile does not allow --simulate');
  });
});
