import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, PgPool } from '../../src/pg/index.js';
import { listSpool, spoolBytes, spoolTrace, type StoreInput } from '../../src/store/index.js';
import { openEvidenceStore } from '../../src/store/open.js';
import { openPgStore } from '../../src/store/postgres.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { trace } from './traces.js';

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.destroy();
});

const config = (url: string) => ({ connectionString: url, display: 'test' });
const traceInput = (n: number, extra = {}): StoreInput => ({ kind: 'trace', bytes: Buffer.from(JSON.stringify(trace(n, extra))) });

describe('PostgreSQL store', () => {
  it('refuses a database whose schema is not current, unless asked to migrate', async () => {
    const url = await server.createDatabase();
    await expect(openEvidenceStore({ kind: 'postgres', config: config(url) }, mkdtempSync(join(tmpdir(), 'ward-pg-')))).rejects.toMatchObject({
      code: 'ERR_STORE_UNAVAILABLE',
      hint: expect.stringContaining('ward store migrate'),
    });
    const store = await openEvidenceStore({ kind: 'postgres', config: config(url) }, mkdtempSync(join(tmpdir(), 'ward-pg-')), { migrate: true });
    expect(await store.count()).toBe(0);
    await store.close();
  });

  it('reports an unreachable server as ERR_STORE_UNAVAILABLE without its password', async () => {
    const url = `postgres://ward:s3cret@127.0.0.1:1/none`;
    const err = await openPgStore({ config: { connectionString: url, display: 'postgres://ward:***@127.0.0.1:1/none' }, poolOptions: { acquireTimeoutMs: 2000 } }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    expect(String((err as Error).message)).not.toContain('s3cret');
  });

  it('writers racing on two pools store each artifact once; the rest are duplicates or conflicts', async () => {
    const url = await server.createDatabase();
    const a = await openPgStore({ config: config(url), migrate: true });
    const b = await openPgStore({ config: config(url) });
    try {
      const batch = Array.from({ length: 40 }, (_, n) => traceInput(n));
      const forged = Array.from({ length: 40 }, (_, n) => traceInput(n, { verdict: 'forged' }));
      const results = await Promise.all([a.put(batch), b.put(batch), a.put(batch.slice(10, 30)), b.put(forged)]);
      const stored = results.flatMap((r) => r.stored);
      expect(stored).toHaveLength(40);
      expect(new Set(stored.map((e) => e.id)).size).toBe(40);
      const total = results.reduce((n, r) => n + r.stored.length + r.duplicates + r.conflicts.length, 0);
      expect(total).toBe(140);
      // Each id holds the bytes of whichever writer won it, and the forged batch only won ids nobody else had.
      const forgedWon = stored.filter((e) => e.verdict === 'forged').length;
      expect(results[3]!.stored.length).toBe(forgedWon);
      expect(results[3]!.conflicts.length + forgedWon).toBe(40);
      expect(await b.count()).toBe(40);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('two processes draining one state directory into the same database store each file once, without errors', async () => {
    const url = await server.createDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'ward-pg-'));
    for (let n = 0; n < 300; n++) spoolTrace(dir, trace(n));
    spoolBytes(dir, 'trace', Buffer.from('not json'));
    const a = await openPgStore({ config: config(url), stateDir: dir, migrate: true });
    const b = await openPgStore({ config: config(url), stateDir: dir });
    try {
      const reports = await Promise.all([a.ingest(), b.ingest(), a.ingest()]);
      expect(reports.reduce((n, r) => n + r.stored.length, 0)).toBe(300);
      expect(reports.flatMap((r) => r.conflicts)).toEqual([]);
      expect(listSpool(dir)).toEqual([]);
      expect(await a.count()).toBe(300);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a batch larger than one statement is still one transaction: all of it or none of it', async () => {
    const url = await server.createDatabase();
    const pool = new PgPool(config(url));
    await migrate(pool);
    const store = await openPgStore({ pool });
    try {
      // A trigger that refuses one id makes the last statement of the batch fail.
      await pool.query(`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.id = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$`);
      await pool.query('CREATE TRIGGER refuse_boom BEFORE INSERT ON ward_store_entries FOR EACH ROW EXECUTE FUNCTION refuse_boom()');
      const batch = Array.from({ length: 1_500 }, (_, n) => traceInput(n));
      await expect(store.put([...batch, traceInput(9_999, { event_id: 'boom' })])).rejects.toThrow(/boom refused/);
      expect(await store.count()).toBe(0);
      const put = await store.put(batch);
      expect(put.stored).toHaveLength(1_500);
      expect(await store.count()).toBe(1_500);
    } finally {
      await store.close(); // the caller's pool stays open
      expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
      await pool.close();
    }
  });
});
