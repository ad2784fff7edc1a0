import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { disableKillSwitchEntry, publishPolicy, putKillSwitchEntry, readKillSwitch, setJobControl } from '../../src/cluster/control.js';
import { signPublication, verifyPublication } from '../../src/cluster/control-policy.js';
import { ControlFollower } from '../../src/cluster/watch.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { migrate, PgPool } from '../../src/pg/index.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.destroy();
});

const poolFor = (url: string) => new PgPool({ connectionString: url, display: url });
const POLICY = readFileSync(new URL('../../policies/baseline-lowrisk.yaml', import.meta.url), 'utf8');

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function cluster(): Promise<{ url: string; writer: PgPool; close: (...f: ControlFollower[]) => Promise<void> }> {
  const url = await server.createDatabase();
  const writer = poolFor(url);
  await migrate(writer);
  const pools: PgPool[] = [writer];
  return {
    url,
    writer,
    close: async (...followers) => {
      for (const f of followers) await f.close();
      for (const p of pools) await p.close();
    },
  };
}

describe('control plane state', () => {
  it('kill-switch entries are validated strictly, versioned, and read back as one state', async () => {
    const c = await cluster();
    try {
      await expect(putKillSwitchEntry(c.writer, { id: 'x', enabled: true, tool: 'typo' }, 't')).rejects.toMatchObject({ code: 'ERR_KILL_SWITCH_INVALID' });
      await expect(putKillSwitchEntry(c.writer, { id: 'x' }, 't')).rejects.toMatchObject({ code: 'ERR_KILL_SWITCH_INVALID' });
      const a = await putKillSwitchEntry(c.writer, { id: 'ks-1', enabled: true, tool_name: 'MCP/Files.Delete', reason: 'incident' }, 'alice');
      expect(a.entry).toMatchObject({ id: 'ks-1', enabled: true, tool_name: 'mcp/files.delete' });
      const b = await disableKillSwitchEntry(c.writer, 'ks-1', 'bob');
      expect(b.version).toBeGreaterThan(a.version);
      const snap = await readKillSwitch(c.writer);
      expect(snap.state.entries.map((e) => [e.id, e.enabled])).toEqual([['ks-1', false]]);
      expect(snap.meta['ks-1']!.updated_by).toBe('bob');
      await expect(disableKillSwitchEntry(c.writer, 'nope', 'bob')).rejects.toMatchObject({ code: 'ERR_STORE_NOT_FOUND' });
    } finally {
      await c.close();
    }
  });

  it('two followers on two pools see a change, by NOTIFY (polling off)', async () => {
    const c = await cluster();
    const pools = [poolFor(c.url), poolFor(c.url)];
    const followers = pools.map((db) => new ControlFollower(db, { pollIntervalMs: 60_000, staleAfterMs: 120_000 }));
    try {
      await Promise.all(followers.map((f) => f.start()));
      for (const f of followers) expect(f.killSwitch()).toEqual({ state: expect.objectContaining({ entries: [] }) });
      await putKillSwitchEntry(c.writer, { id: 'stop-all', enabled: true }, 't');
      await setJobControl(c.writer, 'job-7', 'emergency_stopped', 'runaway', 't');
      for (const f of followers) {
        await until('kill switch entry', () => {
          const v = f.killSwitch();
          return 'state' in v && v.state.entries.length === 1;
        });
        await until('job stop', () => f.jobStatus('job-7').status === 'stopped');
        expect(f.jobStatus('job-8')).toEqual({ status: 'unknown' });
      }
    } finally {
      await c.close(...followers);
      await Promise.all(pools.map((p) => p.close()));
    }
  });

  it('a killed LISTEN connection is reopened on its own and changes keep arriving', async () => {
    const c = await cluster();
    const db = poolFor(c.url);
    const f = new ControlFollower(db, { pollIntervalMs: 60_000, staleAfterMs: 120_000 });
    try {
      await f.start();
      const pid = f.listenPid!;
      expect(pid).toBeGreaterThan(0);
      await c.writer.query('SELECT pg_terminate_backend($1)', [pid]);
      await until('a new LISTEN connection', () => f.listenPid !== undefined && f.listenPid !== pid);
      await setJobControl(c.writer, 'job-1', 'emergency_stopped', '', 't');
      await until('the change after reconnecting', () => f.jobStatus('job-1').status === 'stopped');
      expect(f.status().listen_reconnects).toBeGreaterThanOrEqual(1);
    } finally {
      await c.close(f);
      await db.close();
    }
  });

  it('polling alone catches up (no LISTEN), and a follower that cannot refresh fails closed', async () => {
    const c = await cluster();
    const db = poolFor(c.url);
    const f = new ControlFollower(db, { listen: false, pollIntervalMs: 50, staleAfterMs: 400 });
    try {
      await f.start();
      await putKillSwitchEntry(c.writer, { id: 'a', enabled: true, agent_id: 'agent-7' }, 't');
      await until('the polled change', () => {
        const v = f.killSwitch();
        return 'state' in v && v.state.entries.length === 1;
      });
      // A state row that does not parse: unavailable, never a partial state.
      await c.writer.query(`INSERT INTO ward_kill_switch_entries (id, entry_json) VALUES ('b', '{"id":"b","enabled":true,"tool":"x"}')`);
      await until('unavailable on an invalid row', () => 'unavailable' in f.killSwitch());
      expect(f.status().kill_switch_error).toMatch(/unknown field|tool/);
      await c.writer.query(`DELETE FROM ward_kill_switch_entries WHERE id = 'b'`);
      await until('state again', () => 'state' in f.killSwitch());
      // The database goes away for this follower: within staleAfterMs it answers unavailable.
      await db.close();
      await until('stale', () => 'unavailable' in f.killSwitch(), 3000);
      expect(f.jobStatus('job-1')).toMatchObject({ status: 'unavailable' });
      expect(f.status().fresh).toBe(false);
    } finally {
      await c.close(f);
    }
  });

  it('a publication is activated only when its key is trusted, its signature verifies and its text has the signed digest', async () => {
    const c = await cluster();
    const key = generateSigningKey();
    const other = generateSigningKey();
    try {
      const signed = signPublication(POLICY, key);
      const good = await publishPolicy(c.writer, { digest: signed.loaded.digest, policy_yaml: POLICY, signature: signed.signature, key_id: signed.key_id, published_by: 't' });
      expect(verifyPublication(good, [key], 'standard').digest).toBe(signed.loaded.digest);
      expect(() => verifyPublication(good, [other], 'standard')).toThrow(/does not trust/);
      const forged = { ...good, key_id: other.keyId };
      expect(() => verifyPublication(forged, [other], 'standard')).toThrow(/does not verify/);
      const swapped = { ...good, policy_yaml: POLICY.replace('default_verdict: allow', 'default_verdict: block') };
      expect(swapped.policy_yaml).not.toBe(POLICY);
      expect(() => verifyPublication(swapped, [key], 'standard')).toThrow(/digest/);
      const bad = signPublication(POLICY, key);
      expect(() => verifyPublication({ ...good, policy_yaml: 'rules: [', digest: bad.loaded.digest }, [key], 'standard')).toThrow();
      const rows = (await c.writer.query('SELECT seq, active FROM ward_policy_publications')).rows;
      expect(rows).toEqual([{ seq: String(good.seq), active: true }]);
    } finally {
      await c.close();
    }
  });

  it('each change sends one NOTIFY on commit with the new version', async () => {
    const c = await cluster();
    const client = new pg.Client({ connectionString: c.url });
    await client.connect();
    const seen: string[] = [];
    client.on('notification', (m) => seen.push(String(m.payload)));
    try {
      await client.query('LISTEN ward_control');
      await setJobControl(c.writer, 'j', 'running', '', 't');
      await putKillSwitchEntry(c.writer, { id: 'k', enabled: false }, 't');
      await until('two notifications', () => seen.length >= 2);
      expect(seen).toEqual(['jobs:1', 'kill_switch:1']);
    } finally {
      await client.end();
      await c.close();
    }
  });
});
