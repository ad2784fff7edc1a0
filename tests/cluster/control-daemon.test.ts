import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import type { CliContext } from '../../src/cli/context.js';
import { publishPolicy } from '../../src/cluster/control.js';
import { signPublication } from '../../src/cluster/control-policy.js';
import { attachControlPlane, combineJobState, type AttachedControlPlane } from '../../src/daemon/cluster-control.js';
import { JsonLog } from '../../src/daemon/log.js';
import { startDaemon, type Daemon } from '../../src/daemon/server.js';
import { encodePrivateKeyFile, encodePublicKeyFile, generateSigningKey, type SigningKey } from '../../src/keys/index.js';
import { migrate, PgPool } from '../../src/pg/index.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

/**
 * The control plane inside one daemon (in-process, LevelDB store, control state in a real
 * PostgreSQL), driven by the `ward cluster` / `ward policy publish` CLI: the daemon's gate decisions,
 * its decision service and its policy follow what the CLI wrote. Multi-replica tests with real
 * `ward serve` child processes are in control-replicas.test.ts.
 */

const REPO = new URL('../..', import.meta.url).pathname;
const LOW = join(REPO, 'policies', 'baseline-lowrisk.yaml');
const HIGH = join(REPO, 'policies', 'baseline-highrisk.yaml');
const INTENT = JSON.parse(readFileSync(join(REPO, 'examples', 'quickstart', 'read-report.json'), 'utf8')) as Record<string, unknown>;

let server: PgServer;
let url: string;
let db: PgPool;
let dir: string;
let key: SigningKey;
let daemon: Daemon;
let control: AttachedControlPlane;
const logLines: string[] = [];

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  db = new PgPool({ connectionString: url, display: 'test' });
  await migrate(db);
  dir = mkdtempSync(join(tmpdir(), 'ward-control-'));
  copyFileSync(LOW, join(dir, 'policy.yaml'));
  key = generateSigningKey();
  writeFileSync(join(dir, 'publisher.key'), encodePrivateKeyFile(key), { mode: 0o600 });
  daemon = await startDaemon({ stateDir: join(dir, '.ward'), policyPath: join(dir, 'policy.yaml'), host: '127.0.0.1', port: 0, signingKey: key, logWrite: () => {}, ingestIntervalMs: 0 });
  control = await attachControlPlane(daemon.context, db, new JsonLog((t) => void logLines.push(t)), { pollIntervalMs: 100, staleAfterMs: 2000 });
});
afterAll(async () => {
  await control?.close();
  await daemon?.close();
  await db?.close();
  await server?.destroy();
});

async function ward(args: string[], env: Record<string, string> = {}): Promise<{ code: number; json: Record<string, any>; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const ctx: CliContext = { argv: ['ward', ...args], cwd: dir, env: { WARD_STORE_URL: url, ...env }, stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), readStdin: async () => '', isTTY: false, exitCode: 0 };
  const code = await runCli(args, ctx);
  const last = (args.includes('--json') ? stdout : stderr).trim().split('\n').pop() ?? '';
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(last) as Record<string, any>;
  } catch {
    // text output
  }
  return { code, json, stdout, stderr };
}

async function post(path: string, body: unknown): Promise<any> {
  const res = await fetch(daemon.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('control plane in a daemon, driven by the CLI', () => {
  it('ward cluster kill-switch add blocks the matching call; disable lets it through again', async () => {
    expect((await post('/v1/gate/eval', { intent: INTENT })).verdict).toBe('allow');
    const add = await ward(['cluster', 'kill-switch', 'add', '--id', 'inc-1', '--tool-name', 'FS.read_file', '--reason', 'incident', '--json']);
    expect(add.code).toBe(0);
    expect(add.json).toMatchObject({ ok: true, entry: { id: 'inc-1', tool_name: 'fs.read_file', enabled: true } });
    const blocked = await until('the kill switch', () => post('/v1/gate/eval', { intent: INTENT }), (r) => r.verdict === 'block');
    expect(blocked.reason_codes).toEqual(expect.arrayContaining(['kill_switch_active', 'kill_switch_tool_name_active']));
    const list = await ward(['cluster', 'kill-switch', 'list', '--json']);
    expect(list.json['state']['entries']).toEqual([expect.objectContaining({ id: 'inc-1', enabled: true })]);
    expect((await ward(['cluster', 'kill-switch', 'disable', '--id', 'inc-1', '--json'])).code).toBe(0);
    await until('the kill switch lifted', () => post('/v1/gate/eval', { intent: INTENT }), (r) => r.verdict === 'allow');
    const bad = await ward(['cluster', 'kill-switch', 'add', '--id', 'x', '--target-kind', 'planet', '--json']);
    expect([bad.code, bad.json['error']]).toEqual([6, expect.stringMatching(/parse kill switch state: .*target_kind is unsupported/)]);
  });

  it('ward cluster job stop blocks the job\'s calls on /v1/evaluate; resume lets them through', async () => {
    const call = { call: { name: 'read_file', args: { path: '/w/a' }, context: { identity: 'a', workspace: '/w', session_id: 's', risk_class: 'low', job_id: 'job-9' } } };
    // Unknown to the cluster and to the job files: unavailable, as without a cluster.
    expect((await post('/v1/evaluate', call)).reason_codes).toContain('emergency_stop_state_unavailable');
    expect((await ward(['cluster', 'job', 'resume', 'job-9', '--json'])).code).toBe(0);
    await until('the job running', () => post('/v1/evaluate', call), (r) => r.verdict === 'allow');
    expect((await ward(['cluster', 'job', 'stop', 'job-9', '--reason', 'runaway', '--json'])).json).toMatchObject({ job: { job_id: 'job-9', status: 'emergency_stopped', reason: 'runaway' } });
    const stopped = await until('the stop', () => post('/v1/evaluate', call), (r) => r.verdict === 'block');
    expect(stopped.reason_codes).toContain('emergency_stop_preempted');
    expect((await ward(['cluster', 'job', 'list', '--json'])).json['jobs']).toEqual([expect.objectContaining({ job_id: 'job-9', status: 'emergency_stopped' })]);
    expect((await ward(['cluster', 'job', 'stop', '../x'])).code).toBe(6);
    // The decision service follows the cluster's kill switch too (a global stop: no selector).
    expect((await ward(['cluster', 'job', 'resume', 'job-9'])).code).toBe(0);
    expect((await ward(['cluster', 'kill-switch', 'add', '--id', 'all', '--reason', 'drill'])).code).toBe(0);
    const killed = await until('the global stop on /v1/evaluate', () => post('/v1/evaluate', call), (r) => r.verdict === 'block' && r.reason_codes.includes('kill_switch_active'));
    expect(killed.kill_switch).toMatchObject({ status: 'active', matched_entry_ids: ['all'] });
    expect((await ward(['cluster', 'kill-switch', 'disable', '--id', 'all'])).code).toBe(0);
    await until('the global stop lifted', () => post('/v1/evaluate', call), (r) => r.verdict === 'allow');
  });

  it('a published policy is activated and /v1/policy reports its digest; a bad publication never is', async () => {
    const pub = await ward(['policy', 'publish', '--policy', HIGH, '--private-key', join(dir, 'publisher.key'), '--json']);
    expect(pub.code).toBe(0);
    const digest = pub.json['policy_digest'] as string;
    const policy = await until('the publication', async () => (await fetch(daemon.url + '/v1/policy')).json() as Promise<any>, (p) => p.policy_digest === digest);
    expect(policy).toMatchObject({ policy_source: 'published', publication: { seq: pub.json['seq'], digest } });
    // Signed by a key this replica does not trust.
    const stranger = generateSigningKey();
    const lowText = readFileSync(LOW, 'utf8');
    const s = signPublication(lowText, stranger);
    await publishPolicy(db, { digest: s.loaded.digest, policy_yaml: lowText, signature: s.signature, key_id: s.key_id, published_by: 'mallory' });
    const rejected = await until('the rejection', async () => (await fetch(daemon.url + '/v1/policy')).json() as Promise<any>, (p) => p.last_reload_trigger === 'cluster' && Boolean(p.last_reload_error));
    expect(rejected.policy_digest).toBe(digest);
    expect(rejected.last_reload_error).toMatch(/does not trust/);
    // Invalid YAML with a valid signature over some digest: refused too.
    const mine = signPublication(lowText, key);
    await publishPolicy(db, { digest: mine.loaded.digest, policy_yaml: 'rules: [', signature: mine.signature, key_id: mine.key_id, published_by: 'mallory' });
    await until('the second rejection', async () => (await fetch(daemon.url + '/v1/policy')).json() as Promise<any>, (p) => /line|yaml|parse/i.test(String(p.last_reload_error)));
    expect(daemon.context.policies.current.digest).toBe(digest);
    // A file reload does not replace a published policy.
    expect(daemon.reload('sighup')).toMatchObject({ ok: true, changed: false, digest });
    const listed = await ward(['policy', 'published', '--json']);
    expect(listed.json['publications']).toHaveLength(3);
    const status = await until('the replica report', () => ward(['cluster', 'status', '--json']), (r) => r.json['replicas']?.[0]?.policy_digest === digest);
    expect(status.json).toMatchObject({ ok: true, schema_version: expect.any(Number), active_policy: { digest: mine.loaded.digest } });
    expect(status.json['replicas']).toEqual([expect.objectContaining({ policy_digest: digest })]);
  });

  it('publish refuses an invalid policy before storing anything, and a store that is not PostgreSQL', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'default_verdict: sometimes\n');
    const before = (await db.query('SELECT count(*)::int AS n FROM ward_policy_publications')).rows[0].n;
    const bad = await ward(['policy', 'publish', '--policy', join(dir, 'bad.yaml'), '--private-key', join(dir, 'publisher.key'), '--json']);
    expect(bad.code).toBe(6);
    expect((await db.query('SELECT count(*)::int AS n FROM ward_policy_publications')).rows[0].n).toBe(before);
    const level = await ward(['cluster', 'status', '--json'], { WARD_STORE_URL: '' });
    expect([level.code, level.json['error']]).toEqual([6, expect.stringMatching(/PostgreSQL store/)]);
  });

  it('a public key file trusted with WARD_POLICY_PUBLIC_KEY is what settings read', async () => {
    writeFileSync(join(dir, 'publisher.pub'), encodePublicKeyFile(key));
    const { controlSettingsFromEnv } = await import('../../src/daemon/cluster-control.js');
    const s = controlSettingsFromEnv({ WARD_POLICY_PUBLIC_KEY: join(dir, 'publisher.pub'), WARD_CONTROL_POLL_MS: '250', WARD_CONTROL_LISTEN: '0' });
    expect(s.policyPublicKeys!.map((k) => k.keyId)).toEqual([key.keyId]);
    expect([s.pollIntervalMs, s.listen]).toEqual([250, false]);
    expect(() => controlSettingsFromEnv({ WARD_CONTROL_POLL_MS: '5000' })).toThrow(/STALE/);
  });

  it('job state from the cluster and the job files: any stop wins, stale is unavailable', () => {
    const files = (status: 'running' | 'stopped' | 'unavailable') => () => (status === 'unavailable' ? { status, detail: 'no file' } : { status });
    expect(combineJobState({ status: 'stopped' }, files('running'))).toEqual({ status: 'stopped' });
    expect(combineJobState({ status: 'running' }, files('stopped'))).toEqual({ status: 'stopped' });
    expect(combineJobState({ status: 'running' }, files('unavailable'))).toEqual({ status: 'running' });
    expect(combineJobState({ status: 'unknown' }, files('unavailable'))).toMatchObject({ status: 'unavailable' });
    expect(combineJobState({ status: 'unknown' }, files('running'))).toEqual({ status: 'running' });
    expect(combineJobState({ status: 'unavailable', detail: 'stale' }, files('running'))).toMatchObject({ status: 'unavailable' });
  });
});
