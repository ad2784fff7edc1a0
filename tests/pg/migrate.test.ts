import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, PgPool, requireCurrentSchema, schemaStatus, LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/pg/index.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.destroy();
});

const poolFor = (url: string) => new PgPool({ connectionString: url, display: url });

describe('schema migrations', () => {
  it('an empty database is version 0, and requireCurrentSchema refuses it with the command to run', async () => {
    const db = poolFor(await server.createDatabase());
    try {
      expect((await schemaStatus(db)).version).toBe(0);
      await expect(requireCurrentSchema(db)).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE', hint: expect.stringContaining('ward store migrate') });
    } finally {
      await db.close();
    }
  });

  it('replicas migrating at the same time apply each migration exactly once', async () => {
    const url = await server.createDatabase();
    const pools = [poolFor(url), poolFor(url), poolFor(url)];
    try {
      const reports = await Promise.all(pools.map((db) => migrate(db)));
      const ran = reports.flatMap((r) => r.ran).sort((a, b) => a - b);
      expect(ran).toEqual(MIGRATIONS.map((m) => m.version));
      for (const r of reports) expect(r.version).toBe(LATEST_SCHEMA_VERSION);
      const status = await requireCurrentSchema(pools[0]!);
      expect(status.applied.map((a) => a.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect((await migrate(pools[1]!)).ran).toEqual([]);
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
  });

  it('refuses a database whose schema is newer than this Ward knows', async () => {
    const db = poolFor(await server.createDatabase());
    try {
      await migrate(db);
      await db.query("INSERT INTO ward_schema_migrations (version, name) VALUES (999, 'from the future')");
      await expect(migrate(db)).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE', message: expect.stringContaining('schema version 999 is newer') });
      await expect(requireCurrentSchema(db)).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    } finally {
      await db.close();
    }
  });

  it('a failing migration leaves no partial version behind', async () => {
    const db = poolFor(await server.createDatabase());
    try {
      const broken = [...MIGRATIONS, { version: LATEST_SCHEMA_VERSION + 1, name: 'broken', sql: 'CREATE TABLE t_ok (a int); SELECT no_such_function()' }];
      await expect(migrate(db, broken)).rejects.toMatchObject({ code: 'ERR_STORE_INVALID', message: expect.stringContaining('broken') });
      expect((await schemaStatus(db)).version).toBe(LATEST_SCHEMA_VERSION);
      expect((await db.query("SELECT to_regclass('t_ok')::text AS t")).rows[0].t).toBeNull();
    } finally {
      await db.close();
    }
  });

  it('an unreachable server is ERR_STORE_UNAVAILABLE, not a hang', async () => {
    const db = new PgPool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', display: 'postgres://nobody@127.0.0.1:1/none' }, { acquireTimeoutMs: 2000 });
    try {
      await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    } finally {
      await db.close();
    }
  });

  it('a pool whose connections are all taken answers ERR_STORE_BUSY within the acquire timeout', async () => {
    const url = await server.createDatabase();
    const db = new PgPool({ connectionString: url, display: url }, { max: 1, acquireTimeoutMs: 300 });
    try {
      const held = db.transaction(() => new Promise((r) => setTimeout(r, 1500)));
      await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'ERR_STORE_BUSY' });
      await held;
      expect((await db.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      await db.close();
    }
  });
});
