import { chmodSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodePrivateKeyFile, generateSigningKey } from '../../src/keys/ed25519.js';
import { parseJwks } from '../../src/keys/index.js';
import { verifyTraceRecord } from '../../src/trace/verify.js';
import { ward } from '../cli/run.js';
import { call, evalBody, startDaemon, workdir, type DaemonChild, type Reply } from './helpers.js';

/** Signing-key reload on SIGHUP: new decisions use the new key, old traces still verify via the JWKS. */

async function waitFor(fn: () => Promise<Reply>, ok: (r: Reply) => boolean, ms = 10_000): Promise<Reply> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await fn();
    if (ok(r)) return r;
    if (Date.now() > deadline) throw new Error(`condition not met: ${r.text}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Replace a key file as an operator would (write aside, then rename over it). */
function replaceKeyFile(path: string, text: string, mode = 0o600): void {
  writeFileSync(`${path}.new`, text, { mode });
  chmodSync(`${path}.new`, mode);
  renameSync(`${path}.new`, path);
}

/** One decision and its stored trace record. */
async function decide(d: DaemonChild): Promise<Record<string, any>> {
  const r = await call(d.url, '/v1/gate/eval', { body: evalBody('delete-database') });
  expect(r.status).toBe(200);
  const event = String(r.json.trace_path).split('/')[1];
  const t = await call(d.url, `/v1/traces/${event}`);
  expect(t.status).toBe(200);
  return t.json.trace;
}

const keyIdOf = (trace: Record<string, any>): string => trace['signature']['key_id'];

async function jwksKeys(d: DaemonChild) {
  const r = await call(d.url, '/.well-known/jwks.json');
  expect(r.status).toBe(200);
  return parseJwks(r.text);
}

describe('ward serve: signing-key reload on SIGHUP', () => {
  it('--private-key: a replaced key file is used after SIGHUP; both traces verify via the JWKS; a bad key file keeps the old key', async () => {
    const w = workdir();
    const keyPath = join(w.dir, 'signing.key');
    const first = generateSigningKey();
    const second = generateSigningKey();
    replaceKeyFile(keyPath, encodePrivateKeyFile(first));
    const d = await startDaemon(['--policy', w.policy, '--private-key', keyPath], { cwd: w.dir });
    try {
      const before = await decide(d);
      expect(keyIdOf(before)).toBe(first.keyId);

      replaceKeyFile(keyPath, encodePrivateKeyFile(second));
      process.kill(d.pid, 'SIGHUP');
      const switched = await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.signing_key?.key_id === second.keyId);
      expect(switched.json.signing_key).toMatchObject({ previous_key_ids: [first.keyId], reloads_ok: 1, reloads_failed: 0 });
      const after = await decide(d);
      expect(keyIdOf(after)).toBe(second.keyId);
      expect(keyIdOf(after)).not.toBe(keyIdOf(before));

      // The JWKS publishes the new key and the one used before it: both traces verify against it.
      const published = await jwksKeys(d);
      expect(published.map((k) => k.keyId).sort()).toEqual([first.keyId, second.keyId].sort());
      for (const trace of [before, after]) {
        const check = verifyTraceRecord(trace, published);
        expect(check.ok, check.error).toBe(true);
      }
      // ... and so does the daemon's own verification, for traces signed with either key.
      const verified = await call(d.url, '/v1/trace/verify', { body: { traces: [before, after] } });
      expect(verified.json.summary).toEqual({ total: 2, verified: 2, failed: 0 });
      // The decision service routes sign with the new key too.
      const ev = await call(d.url, '/v1/evaluate', { body: { call: { name: 'read_file', args: { path: '/tmp/x' } } } });
      expect(ev.status).toBe(200);
      expect(keyIdOf(JSON.parse(readFileSync(ev.json.trace_path, 'utf8')))).toBe(second.keyId);

      // A garbage key file: refused, the current key stays, decisions keep working, the error is logged.
      replaceKeyFile(keyPath, 'this is not a key\n');
      process.kill(d.pid, 'SIGHUP');
      const failed = await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.signing_key?.reloads_failed >= 1);
      expect(failed.json.signing_key.key_id).toBe(second.keyId);
      expect(failed.json.signing_key.last_reload_error).toBeTruthy();
      const still = await decide(d);
      expect(keyIdOf(still)).toBe(second.keyId);
      expect(verifyTraceRecord(still, await jwksKeys(d)).ok).toBe(true);
      // A key file others can read is refused the same way.
      replaceKeyFile(keyPath, encodePrivateKeyFile(generateSigningKey()), 0o644);
      process.kill(d.pid, 'SIGHUP');
      const open = await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.signing_key?.reloads_failed >= 2);
      expect(open.json.signing_key.key_id).toBe(second.keyId);
      expect(open.json.signing_key.last_reload_error).toMatch(/accessible by group or others/);

      const logs = d.stderr().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const keyLogs = logs.filter((l) => l['msg'] === 'key reload');
      expect(keyLogs.map((l) => [l['level'], l['ok'], l['trigger']])).toEqual([
        ['info', true, 'sighup'],
        ['error', false, 'sighup'],
        ['error', false, 'sighup'],
      ]);
      expect(String(keyLogs[1]!['error'])).toBeTruthy();
      expect(keyLogs[1]!['key_id']).toBe(second.keyId);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, 30_000);

  it('default key: ward keys rotate, then SIGHUP, switches keys; the JWKS keeps the retired key', async () => {
    const w = workdir();
    const d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
    try {
      const before = await decide(d);
      const rotated = ward(['keys', 'rotate', '--state-dir', w.state, '--json'], { cwd: w.dir });
      expect(rotated.code, rotated.stdout).toBe(0);
      process.kill(d.pid, 'SIGHUP');
      await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.signing_key?.previous_key_ids?.length === 1);
      const after = await decide(d);
      expect(keyIdOf(after)).not.toBe(keyIdOf(before));
      const published = await jwksKeys(d);
      for (const trace of [before, after]) expect(verifyTraceRecord(trace, published).ok).toBe(true);
      expect(readdirSync(join(w.state, 'keys', 'retired'))).toHaveLength(1);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, 30_000);

  it('an unchanged key file: SIGHUP keeps the key and publishes it once', async () => {
    const w = workdir();
    const d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
    try {
      const before = await decide(d);
      process.kill(d.pid, 'SIGHUP');
      await waitFor(() => call(d.url, '/v1/policy'), (r) => r.json.signing_key?.reloads_ok === 1);
      expect(keyIdOf(await decide(d))).toBe(keyIdOf(before));
      expect((await jwksKeys(d)).map((k) => k.keyId)).toEqual([keyIdOf(before)]);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, 30_000);
});
