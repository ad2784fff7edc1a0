import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishPolicy } from '../../src/cluster/control.js';
import { signPublication } from '../../src/cluster/control-policy.js';
import { generateSigningKey, readPrivateKeyFile } from '../../src/keys/index.js';
import { PgPool } from '../../src/pg/index.js';
import { REPO, tempDir, ward } from '../cli/run.js';
import { call, clusterFixture, evalBody, type Replica, startReplicas, writeSharedKey } from './replicas.js';

// The control plane across two real `ward serve` replicas on one PostgreSQL: what is set through
// one replica (or the CLI) is enforced by the other within the documented bound. Replicas run with
// the defaults (LISTEN/NOTIFY, 1 s polling, 5 s staleness bound); the waits below allow the bound.

const BOUND_MS = 5000;
const LOW = join(REPO, 'policies', 'baseline-lowrisk.yaml');

const cluster = clusterFixture();

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = BOUND_MS): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const evaluate = (r: Replica, jobId: string) =>
  call(r.url, '/v1/evaluate', { body: { call: { name: 'read_file', args: { path: '/w/a' }, context: { identity: 'a', workspace: '/w', session_id: 's', risk_class: 'low', job_id: jobId } } } });

describe('control plane across ward serve replicas', () => {
  it('a kill switch set through replica 1 blocks the matching call on replica 2; a job stopped through replica 2 is blocked on replica 1', async () => {
    const url = await cluster.server.createDatabase();
    cluster.replicas = await startReplicas(2, { storeUrl: url, policy: LOW });
    const [a, b] = cluster.replicas as [Replica, Replica];
    expect((await call(b.url, '/v1/gate/eval', { body: evalBody('read-report') })).json.verdict).toBe('allow');

    const set = await call(a.url, '/v1/kill-switch', { body: { id: 'inc-7', enabled: true, tool_name: 'fs.read_file', reason: 'INC-7' } });
    expect(set.status, set.text).toBe(200);
    const blocked = await until('kill switch on replica 2', () => call(b.url, '/v1/gate/eval', { body: evalBody('read-report') }), (r) => r.json.verdict === 'block');
    expect(blocked.json.reason_codes).toEqual(expect.arrayContaining(['kill_switch_active', 'kill_switch_tool_name_active']));
    expect((await call(b.url, '/v1/kill-switch')).json).toMatchObject({ ok: true, version: set.json.version, state: { entries: [expect.objectContaining({ id: 'inc-7' })] } });
    // An invalid entry is refused with the daemon's error envelope and changes nothing.
    const bad = await call(a.url, '/v1/kill-switch', { body: { id: 'x', enabled: true, tool: 'typo' } });
    expect([bad.status, bad.json.ok, bad.json.error]).toEqual([400, false, expect.stringMatching(/unknown field|tool/)]);
    const disabled = await call(b.url, '/v1/kill-switch/inc-7/disable', { method: 'POST' });
    expect(disabled.status, disabled.text).toBe(200);
    await until('kill switch lifted on replica 1', () => call(a.url, '/v1/gate/eval', { body: evalBody('read-report') }), (r) => r.json.verdict === 'allow');

    expect((await call(a.url, '/v1/jobs/job-3/resume', { method: 'POST' })).status).toBe(200);
    await until('job running on replica 2', () => evaluate(b, 'job-3'), (r) => r.json.verdict === 'allow');
    const stop = await call(b.url, '/v1/jobs/job-3/stop', { body: { reason: 'runaway' } });
    expect(stop.json).toMatchObject({ ok: true, job: { job_id: 'job-3', status: 'emergency_stopped', reason: 'runaway' } });
    const stopped = await until('job stop on replica 1', () => evaluate(a, 'job-3'), (r) => r.json.verdict === 'block');
    expect(stopped.json.reason_codes).toContain('emergency_stop_preempted');
    expect((await call(a.url, '/v1/jobs')).json.jobs).toEqual([expect.objectContaining({ job_id: 'job-3', status: 'emergency_stopped' })]);
  });

  it('a published policy is enforced by both and /v1/policy on each reports its digest; a bad signature or invalid YAML is activated nowhere', async () => {
    const url = await cluster.server.createDatabase();
    const keyFile = writeSharedKey();
    cluster.replicas = await startReplicas(2, { storeUrl: url, sharedKey: keyFile });
    const before = cluster.replicas[0]!.start.policy_digest;

    const pub = ward(['policy', 'publish', '--policy', LOW, '--private-key', keyFile, '--json'], { cwd: REPO, env: { WARD_STORE_URL: url } });
    expect(pub.code, pub.stderr + pub.stdout).toBe(0);
    const published = JSON.parse(pub.stdout) as Record<string, unknown>;
    const digest = published['policy_digest'] as string;
    expect(digest).not.toBe(before);
    for (const r of cluster.replicas) {
      const p = await until(`publication on ${r.name}`, () => call(r.url, '/v1/policy'), (x) => x.json.policy_digest === digest);
      expect(p.json).toMatchObject({ policy_source: 'published', publication: { seq: published['seq'], digest } });
      // Enforced: lowrisk allows what highrisk asks approval for.
      expect((await call(r.url, '/v1/gate/eval', { body: evalBody('write-config') })).json.policy_digest).toBe(digest);
    }

    const db = new PgPool({ connectionString: url, display: 'test' });
    try {
      const text = readFileSync(join(REPO, 'policies', 'baseline-mediumrisk.yaml'), 'utf8');
      const stranger = signPublication(text, generateSigningKey());
      await publishPolicy(db, { digest: stranger.loaded.digest, policy_yaml: text, signature: stranger.signature, key_id: stranger.key_id, published_by: 'mallory' });
      for (const r of cluster.replicas) {
        const p = await until(`rejection on ${r.name}`, () => call(r.url, '/v1/policy'), (x) => /does not trust/.test(String(x.json.last_reload_error)));
        expect(p.json.policy_digest).toBe(digest);
      }
      const shared = readPrivateKeyFile(keyFile);
      const valid = signPublication(text, shared);
      await publishPolicy(db, { digest: valid.loaded.digest, policy_yaml: 'rules: [', signature: valid.signature, key_id: valid.key_id, published_by: 'mallory' });
      for (const r of cluster.replicas) {
        const p = await until(`second rejection on ${r.name}`, () => call(r.url, '/v1/policy'), (x) => x.json.last_reload_error !== undefined && !/does not trust/.test(String(x.json.last_reload_error)));
        expect(p.json.policy_digest).toBe(digest);
        const list = await call(r.url, '/v1/policy/published');
        expect(list.json).toMatchObject({ ok: true, enforced: { policy_digest: digest, policy_source: 'published' }, active_rejected: expect.any(String) });
        const decided = await call(r.url, '/v1/gate/eval', { body: evalBody('read-report') });
        expect(decided.json.policy_digest).toBe(digest);
      }
    } finally {
      await db.close();
    }
  });
  it('--policy-public-key: replicas with keys of their own activate what the operator key signed', async () => {
    const url = await cluster.server.createDatabase();
    const dir = tempDir('ward-operator-');
    const made = JSON.parse(ward(['keys', 'init', '--out-dir', dir, '--prefix', 'operator', '--json'], { cwd: dir }).stdout) as { private_key_path: string; public_key_path: string };
    cluster.replicas = await startReplicas(2, { storeUrl: url, args: ['--policy-public-key', made.public_key_path] });
    const pub = ward(['policy', 'publish', '--policy', LOW, '--private-key', made.private_key_path, '--json'], { cwd: REPO, env: { WARD_STORE_URL: url } });
    expect(pub.code, pub.stderr + pub.stdout).toBe(0);
    const out = JSON.parse(pub.stdout) as { policy_digest: string; accepted_by: string[] };
    const digest = out.policy_digest;
    // publish waited for the replicas: it names those that activated it.
    expect(out.accepted_by.length).toBeGreaterThan(0);
    for (const r of cluster.replicas) {
      const p = await until(`publication on ${r.name}`, () => call(r.url, '/v1/policy'), (x) => x.json.policy_digest === digest);
      expect(p.json).toMatchObject({ policy_source: 'published' });
    }
  });

  it('a publication no replica trusts: publish exits 1 (ERR_POLICY_NOT_ACCEPTED) naming the replicas that refused it, and cluster status names what each enforces', async () => {
    const url = await cluster.server.createDatabase();
    const operator = tempDir('ward-operator-');
    const stranger = tempDir('ward-stranger-');
    const trusted = JSON.parse(ward(['keys', 'init', '--out-dir', operator, '--prefix', 'operator', '--json'], { cwd: operator }).stdout) as { public_key_path: string };
    const untrusted = JSON.parse(ward(['keys', 'init', '--out-dir', stranger, '--prefix', 'stranger', '--json'], { cwd: stranger }).stdout) as { private_key_path: string };
    cluster.replicas = await startReplicas(2, { storeUrl: url, args: ['--policy-public-key', trusted.public_key_path] });
    const fileDigest = cluster.replicas[0]!.start.policy_digest;
    const started = Date.now();
    const pub = ward(['policy', 'publish', '--policy', LOW, '--private-key', untrusted.private_key_path, '--wait-ms', '8000', '--json'], { cwd: REPO, env: { WARD_STORE_URL: url } });
    expect(pub.code, pub.stderr + pub.stdout).toBe(1);
    expect(Date.now() - started).toBeLessThan(20_000);
    const refused = JSON.parse(pub.stdout) as { ok: boolean; error: string; rejected_by: { replica_id: string; policy_digest: string }[]; accepted_by: string[] };
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/refused by every replica/);
    expect(refused.accepted_by).toEqual([]);
    expect(refused.rejected_by.map((r) => r.replica_id).sort()).toEqual(cluster.replicas.map((r) => r.name).sort());
    for (const r of refused.rejected_by) expect(r.policy_digest).toBe(fileDigest);

    const status = ward(['cluster', 'status', '--json'], { cwd: REPO, env: { WARD_STORE_URL: url } });
    const json = JSON.parse(status.stdout) as { active_policy: { enforced_by: string[]; refused_by: string[] }; enforced_policies: { policy_digest: string; policy_source: string }[] };
    expect(json.active_policy.enforced_by).toEqual([]);
    expect(json.active_policy.refused_by).toHaveLength(2);
    expect(json.enforced_policies.map((p) => [p.policy_digest, p.policy_source])).toEqual([
      [fileDigest, 'file'],
      [fileDigest, 'file'],
    ]);
    const text = ward(['cluster', 'status'], { cwd: REPO, env: { WARD_STORE_URL: url } }).stdout;
    expect(text).toContain(`enforced: ${fileDigest} (file) by 2 of 2`);
    expect(text).toMatch(/latest publication \d+ \S+ .*: enforced by 0 of 2, REFUSED by/);
  });
});
