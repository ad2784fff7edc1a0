import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLevelStore } from '../../src/store/index.js';
import { ward } from '../cli/run.js';
import { call, evalBody, startDaemon, workdir } from './helpers.js';

async function waitFor<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('policy hot reload', () => {
  it('reloads a changed file; a bad policy keeps the old one and reports the error', async () => {
    const w = workdir();
    const d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
    try {
      const before = (await call(d.url, '/v1/policy')).json;
      // A good change: an extra rule changes the digest and the rule count.
      appendFileSync(w.policy, '\n  - name: extra-rule\n    effect: block\n    match:\n      tool_names: [never.called]\n');
      const after = await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.policy_digest !== before.policy_digest);
      expect(after.json.rule_count).toBe(before.rule_count + 1);
      expect(after.json.reloads_ok).toBeGreaterThanOrEqual(1);
      const decided = await call(d.url, '/v1/gate/eval', { body: evalBody('read-report') });
      expect(decided.json.policy_digest).toBe(after.json.policy_digest);

      // A bad change: invalid YAML. The old policy keeps serving; the error is visible.
      writeFileSync(w.policy, 'rules: [\n');
      const failed = await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.reloads_failed >= 1);
      expect(failed.json.policy_digest).toBe(after.json.policy_digest);
      expect(failed.json.last_reload_error).toBeTruthy();
      expect(failed.json.last_reload_trigger).toBe('file');
      const still = await call(d.url, '/v1/gate/eval', { body: evalBody('delete-database') });
      expect(still.status).toBe(200);
      expect(still.json.policy_digest).toBe(after.json.policy_digest);
      const m = await call(d.url, '/metrics');
      expect(m.text).toContain('ward_policy_reload_failing 1');
      expect(m.text).toMatch(/ward_policy_reloads_total\{result="failed",trigger="file"\} [1-9]/);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, 20_000);

  it('SIGHUP reloads (file watching off); a bad policy on SIGHUP is refused too', async () => {
    const w = workdir();
    const d = await startDaemon(['--policy', w.policy, '--no-watch'], { cwd: w.dir });
    try {
      const before = (await call(d.url, '/v1/policy')).json;
      const good = readFileSync(w.policy, 'utf8');
      writeFileSync(w.policy, good.replace('default_verdict: block', 'default_verdict: require_approval'));
      await new Promise((r) => setTimeout(r, 300));
      expect((await call(d.url, '/v1/policy')).json.policy_digest).toBe(before.policy_digest); // not watched
      process.kill(d.pid, 'SIGHUP');
      const after = await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.policy_digest !== before.policy_digest);
      expect(after.json.last_reload_trigger).toBe('sighup');
      writeFileSync(w.policy, 'default_verdict: maybe\n');
      process.kill(d.pid, 'SIGHUP');
      const bad = await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.reloads_failed >= 1);
      expect(bad.json.policy_digest).toBe(after.json.policy_digest);
      expect(bad.json.last_reload_error).toBeTruthy();
      const logs = d.stderr().trim().split('\n').map((l) => JSON.parse(l));
      expect(logs.some((l) => l.msg === 'policy reload' && l.ok === false && l.trigger === 'sighup')).toBe(true);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, 20_000);
});

describe('ownership and shutdown', () => {
  it('a second daemon on the same state directory fails fast naming the holder', async () => {
    const w = workdir();
    const d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
    try {
      const started = Date.now();
      const second = ward(['serve', '--policy', w.policy, '--listen', '127.0.0.1:0', '--json'], { cwd: w.dir });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(second.code).toBe(1);
      const err = JSON.parse(second.stdout);
      expect(err.error).toContain('another ward serve owns state directory');
      expect(err.error).toContain(`pid ${d.pid}`);
      // The first one keeps serving.
      expect((await call(d.url, '/v1/gate/eval', { body: evalBody('read-report') })).status).toBe(200);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, 20_000);

  it('SIGTERM and SIGINT: exit 0, traces in the store, no journal left, locks released', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const w = workdir();
      const d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await call(d.url, '/v1/gate/eval', { body: evalBody('write-config') })).json.trace_path.slice('store:trace/'.length));
      expect(await d.stop(signal)).toBe(0);
      expect(d.stderr()).toContain('"msg":"stopped"');
      expect(existsSync(join(w.state, 'daemon.lock'))).toBe(false);
      const journal = join(w.state, 'journal');
      expect(existsSync(journal) ? readdirSync(journal) : []).toEqual([]);
      const store = await openLevelStore(w.state);
      try {
        for (const id of ids) expect(await store.get('trace', id)).toBeDefined();
      } finally {
        await store.close();
      }
    }
  }, 30_000);
});
