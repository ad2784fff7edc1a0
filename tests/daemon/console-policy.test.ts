import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, ward } from '../cli/run.js';
import { CONSOLE_POLICY, closeAll, consoleDaemon, evalIntent, intentFor } from './console-helpers.js';
import { call } from './helpers.js';

/** What `ward check --json` reports for this policy text (the CLI is the reference the console must match). */
function wardCheck(text: string): { findings: unknown[]; gap_warnings: { code: string }[] } {
  const dir = tempDir();
  writeFileSync(join(dir, 'candidate.yaml'), text);
  const r = ward(['check', '--policy', 'candidate.yaml', '--json'], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout);
  return { findings: out.findings, gap_warnings: out.gap_warnings };
}

/** Valid, and warned about by `ward check`: default allow, fail_closed off, a list an unmapped argument escapes, a shadowed rule. */
const WARNED = CONSOLE_POLICY + `  - name: srv-only
    priority: 30
    effect: allow
    match:
      tool_names: [fs.read_file]
    endpoint:
      path_allowlist: ["/srv/**"]
  - name: never-reached
    priority: 40
    effect: allow
    match:
      tool_names: [proc.exec]
`;

afterEach(closeAll);

describe('GET /v1/console/policy', () => {
  it('shows the policy in force with hit counts per rule since start and ward check findings', async () => {
    const shadowed = CONSOLE_POLICY + `  - name: never-reached
    priority: 20
    effect: allow
    match:
      tool_names: [proc.exec]
`;
    const { d } = await consoleDaemon({}, shadowed);
    await evalIntent(d.url, intentFor('fs.write_file', '/w/a'));
    await evalIntent(d.url, intentFor('fs.write_file', '/w/b'));
    await evalIntent(d.url, intentFor('proc.exec', '/bin/sh'));
    await evalIntent(d.url, intentFor('fs.read_file', '/w/c'));
    const r = await call(d.url, '/v1/console/policy');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, policy_digest: d.context.policies.current.digest, source: 'file', default_verdict: 'allow', default_hits: 1 });
    expect(typeof r.json.loaded_at).toBe('string');
    const hits = Object.fromEntries(r.json.rules.map((x: any) => [x.name, x.hits]));
    expect(hits).toEqual({ 'approve-writes': 2, 'two-for-deletes': 0, 'block-exec': 1, 'never-reached': 0 });
    expect(r.json.findings.map((f: any) => [f.kind, f.rule])).toContainEqual(['shadowed', 'never-reached']);
  });

  it('shows the same findings and gap warnings as ward check for the policy file in force', async () => {
    const { d } = await consoleDaemon({}, WARNED);
    const r = await call(d.url, '/v1/console/policy');
    expect(r.status).toBe(200);
    expect({ findings: r.json.findings, gap_warnings: r.json.gap_warnings }).toEqual(wardCheck(WARNED));
  });
});

describe('POST /v1/console/policy/preview', () => {
  it('replays recorded decisions under a candidate and lists what changes, loosenings first; nothing is activated', async () => {
    const { d } = await consoleDaemon({ captureIntents: true });
    const before = d.context.policies.current.digest;
    await evalIntent(d.url, intentFor('fs.read_file', '/w/c')); // allow → allow: unchanged
    const exec = await evalIntent(d.url, intentFor('proc.exec', '/bin/sh')); // block → require_approval
    const write = await evalIntent(d.url, intentFor('fs.write_file', '/w/a')); // require_approval → allow
    const candidate = CONSOLE_POLICY.replace('effect: require_approval\n    match:\n      tool_names: [fs.write_file]', 'effect: allow\n    match:\n      tool_names: [fs.write_file]').replace('effect: block', 'effect: require_approval');
    const r = await call(d.url, '/v1/console/policy/preview', { body: { policy_yaml: candidate } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, activated: false, current_policy_digest: before, summary: { replayed: 3, unchanged: 1 } });
    expect(r.json.changes[0].change).toBe('policy_loosened');
    expect(r.json.changes.map((c: any) => [c.from.verdict, c.to.verdict])).toEqual([
      ['require_approval', 'allow'],
      ['block', 'require_approval'],
    ]);
    expect(r.json.changes[0].tool_name).toBe('fs.write_file');
    const detail = await call(d.url, r.json.changes[0].trace_href);
    expect(detail.json.trace_id).toBe(write.json.trace_id);
    expect(r.json.changes[1].id).toBeDefined();
    expect(exec.json.verdict).toBe('block');
    expect(d.context.policies.current.digest).toBe(before);
    expect((await call(d.url, '/v1/policy')).json.policy_digest).toBe(before);
  });

  it('reports the candidate\'s ward check findings and gap warnings, the same list as ward check --json', async () => {
    const { d } = await consoleDaemon({ captureIntents: true });
    await evalIntent(d.url, intentFor('fs.read_file', '/w/c'));
    const expected = wardCheck(WARNED);
    // The case: three gap warnings the preview used to hide behind "no findings".
    expect(expected.gap_warnings.map((g) => g.code)).toEqual(['default_allow', 'fail_closed_disabled', 'lists_escapable_by_unmapped_arguments']);
    expect(expected.findings.length).toBeGreaterThan(0);
    const r = await call(d.url, '/v1/console/policy/preview', { body: { policy_yaml: WARNED } });
    expect(r.status).toBe(200);
    expect({ findings: r.json.findings, gap_warnings: r.json.gap_warnings }).toEqual(expected);
    // A clean candidate reports nothing, in both.
    const clean = CONSOLE_POLICY.replace('default_verdict: allow', 'default_verdict: block').replace('rules:\n', 'fail_closed:\n  enabled: true\n  required_fields: [targets, arg_provenance]\nrules:\n');
    const none = await call(d.url, '/v1/console/policy/preview', { body: { policy_yaml: clean } });
    expect(none.status).toBe(200);
    expect({ findings: none.json.findings, gap_warnings: none.json.gap_warnings }).toEqual(wardCheck(clean));
    expect(none.json.gap_warnings).toEqual([]);
  });

  it('validates the candidate strictly and says when nothing was recorded', async () => {
    const { d } = await consoleDaemon();
    const bad = await call(d.url, '/v1/console/policy/preview', { body: { policy_yaml: 'schema_id: gait.gate.policy\nrules: [1\n' } });
    expect(bad.status).toBe(400);
    expect(bad.json.policy_valid).toBe(false);
    const unknown = await call(d.url, '/v1/console/policy/preview', { body: { policy_yaml: CONSOLE_POLICY + 'surprise: 1\n' } });
    expect(unknown.status).toBe(400);
    expect((await call(d.url, '/v1/console/policy/preview', { body: { policy: CONSOLE_POLICY } })).status).toBe(400);
    await evalIntent(d.url, intentFor('fs.read_file', '/w/c'));
    const none = await call(d.url, '/v1/console/policy/preview', { body: { policy_yaml: CONSOLE_POLICY } });
    expect(none.json.summary).toMatchObject({ replayed: 0, not_replayable: 1 });
  });
});
