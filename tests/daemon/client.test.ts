import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, ward } from '../cli/run.js';
import { intentFile, startDaemon, workdir, type DaemonChild } from './helpers.js';

let d: DaemonChild;
let w: ReturnType<typeof workdir>;
let packId = '';

beforeAll(async () => {
  w = workdir();
  const record = ward(['run', 'record', '--input', fixture('runs/run_record_demo.json'), '--json'], { cwd: w.dir });
  const pack = ward(['pack', 'build', '--from', JSON.parse(record.stdout).run_id, '--json'], { cwd: w.dir });
  packId = JSON.parse(pack.stdout).pack_id;
  d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
}, 30_000);

afterAll(async () => {
  expect(await d.stop()).toBe(0);
});

describe('CLI commands against a running daemon', { timeout: 30_000 }, () => {
  it('gate eval --daemon prints what the local command prints, with its exit code', () => {
    for (const [name, code] of [['read-report', 0], ['write-config', 4], ['delete-database', 3]] as const) {
      const remote = ward(['gate', 'eval', '--daemon', d.url, '--intent', intentFile(name), '--json'], { cwd: w.dir });
      const local = ward(['gate', 'eval', '--policy', w.policy, '--intent', intentFile(name), '--json', '--state-dir', join(w.dir, 'local')], { cwd: w.dir });
      expect(remote.code).toBe(code);
      expect(local.code).toBe(code);
      const r = JSON.parse(remote.stdout);
      const l = JSON.parse(local.stdout);
      expect(r.trace_path).toMatch(/^store:trace\//);
      for (const o of [r, l]) {
        delete o.trace_path;
        delete o.correlation_id; // derived from each invocation's argv
      }
      expect(r).toEqual(l);
    }
    const text = ward(['gate', 'eval', '--intent', intentFile('delete-database')], { cwd: w.dir, env: { WARD_DAEMON_URL: d.url } });
    expect(text.code).toBe(3);
    expect(text.stdout).toContain('verdict: block');
    expect(text.stdout).toContain('trace: store:trace/');
  });

  it('gate eval --daemon refuses local-only flags and reports an unreachable daemon', () => {
    const r = ward(['gate', 'eval', '--daemon', d.url, '--intent', intentFile('read-report'), '--trace-out', 'x.json', '--json'], { cwd: w.dir });
    expect(r.code).toBe(6);
    expect(JSON.parse(r.stdout).error).toContain('--trace-out is not available with --daemon');
    const down = ward(['gate', 'eval', '--daemon', 'http://127.0.0.1:1', '--intent', intentFile('read-report'), '--json'], { cwd: w.dir });
    expect(down.code).toBe(1);
    expect(JSON.parse(down.stdout).error).toContain('cannot reach the ward daemon');
    const bad = ward(['gate', 'eval', '--daemon', 'ftp://x', '--intent', intentFile('read-report'), '--json'], { cwd: w.dir });
    expect(bad.code).toBe(6);
  });

  it('store list and show read through the daemon while it owns the store', () => {
    ward(['gate', 'eval', '--daemon', d.url, '--intent', intentFile('delete-database')], { cwd: w.dir });
    const locked = ward(['store', 'list', '--json'], { cwd: w.dir });
    expect(locked.code).toBe(1); // the daemon owns the store
    const list = ward(['store', 'list', '--daemon', d.url, '--verdict', 'block', '--json'], { cwd: w.dir });
    expect(list.code).toBe(0);
    const entries = JSON.parse(list.stdout).entries;
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e: any) => e.verdict === 'block')).toBe(true);
    const all = ward(['store', 'list', '--json'], { cwd: w.dir, env: { WARD_DAEMON_URL: d.url } });
    expect(JSON.parse(all.stdout).entries.map((e: any) => e.kind)).toContain('pack');
    const show = ward(['store', 'show', entries[0].id, '--daemon', d.url, '--json'], { cwd: w.dir });
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout).trace.verdict).toBe('block');
    const showPack = ward(['store', 'show', packId.slice(0, 16), '--daemon', d.url, '--json'], { cwd: w.dir });
    expect(JSON.parse(showPack.stdout).inspect.pack_id).toBe(packId);
    const missing = ward(['store', 'show', 'ffffffffffffffff', '--daemon', d.url, '--json'], { cwd: w.dir });
    expect(missing.code).not.toBe(0);
  });

  it('pack inspect and diff read store ids through the daemon', () => {
    const inspect = ward(['pack', 'inspect', packId, '--daemon', d.url, '--json'], { cwd: w.dir });
    expect(inspect.code).toBe(0);
    expect(JSON.parse(inspect.stdout)).toMatchObject({ ok: true, operation: 'inspect', pack_id: packId });
    const diff = ward(['pack', 'diff', packId, packId, '--daemon', d.url, '--json', '--output', 'diff.json'], { cwd: w.dir });
    expect(diff.code).toBe(0);
    expect(JSON.parse(diff.stdout)).toMatchObject({ ok: true, operation: 'diff' });
    expect(JSON.parse(readFileSync(join(w.dir, 'diff.json'), 'utf8')).summary.changed).toBe(false);
  });

  it("trace verify --daemon checks local files against the daemon's keys", () => {
    // Traces signed with the daemon's key (same state directory, written by a local gate eval).
    for (const name of ['read-report', 'delete-database'] as const) {
      ward(['gate', 'eval', '--policy', w.policy, '--intent', intentFile(name), '--state-dir', w.state], { cwd: w.dir });
    }
    const dir = join(w.state, 'traces');
    const ok = ward(['trace', 'verify', dir, '--daemon', d.url, '--json'], { cwd: w.dir });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).summary).toMatchObject({ failed: 0 });
    const file = join(dir, readdirSync(dir).find((n) => n.startsWith('trace_'))!);
    const single = ward(['trace', 'verify', file, '--daemon', d.url], { cwd: w.dir });
    expect(single.code).toBe(0);
    const tamperedDir = join(w.dir, 'tampered');
    mkdirSync(tamperedDir);
    const record = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(join(tamperedDir, 'trace_x.json'), JSON.stringify({ ...record, verdict: record.verdict === 'allow' ? 'block' : 'allow' }));
    const bad = ward(['trace', 'verify', tamperedDir, '--daemon', d.url, '--json'], { cwd: w.dir });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).summary).toEqual({ total: 1, verified: 0, failed: 1 });
  });

  it('sends WARD_DAEMON_TOKEN as the bearer token', async () => {
    const w2 = workdir();
    const token = 'client-test-token-0123456789abcdef';
    const secured = await startDaemon(['--policy', w2.policy, '--auth-token-env', 'WARD_TEST_TOKEN'], { cwd: w2.dir, env: { WARD_TEST_TOKEN: token } });
    try {
      const denied = ward(['gate', 'eval', '--daemon', secured.url, '--intent', intentFile('read-report'), '--json'], { cwd: w2.dir });
      expect(denied.code).toBe(6);
      expect(JSON.parse(denied.stdout).error).toContain('WARD_DAEMON_TOKEN');
      const allowed = ward(['gate', 'eval', '--daemon', secured.url, '--intent', intentFile('read-report'), '--json'], { cwd: w2.dir, env: { WARD_DAEMON_TOKEN: token } });
      expect(allowed.code).toBe(0);
    } finally {
      expect(await secured.stop()).toBe(0);
    }
  }, 20_000);
});
