import { afterEach, describe, expect, it } from 'vitest';
import { CONSOLE_POLICY, closeAll, consoleDaemon, evalIntent, intentFor } from './console-helpers.js';
import { call } from './helpers.js';

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
