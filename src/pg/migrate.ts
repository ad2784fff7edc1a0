import { ERROR_CODES, WardError } from '../errors.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import type { PgPool } from './pool.js';

/**
 * Versioned schema migrations (docs/cluster.md "Schema"). Every replica runs `migrate` on start:
 * the runner takes a session advisory lock, so replicas starting together wait for each other and
 * the schema is upgraded once; each migration commits in its own transaction together with its row
 * in `ward_schema_migrations`. A database whose schema is newer than this Ward knows is refused:
 * an older replica must not write rows a newer schema interprets differently.
 */

/** pg_advisory_lock key: the ASCII bytes of "wardmigr" as a signed 64-bit integer. */
const MIGRATION_LOCK_KEY = '8598794213498521970';

export interface SchemaStatus {
  /** Highest applied version (0: an empty database). */
  version: number;
  /** Highest version this Ward knows. */
  latest: number;
  applied: { version: number; name: string; applied_at: string }[];
}

export interface MigrateReport extends SchemaStatus {
  /** Versions applied by this call (empty when another replica, or an earlier start, did it). */
  ran: number[];
}

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export async function migrate(db: PgPool, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateReport> {
  const client = await db.connectDedicated();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS ward_schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM ward_schema_migrations')).rows.map((r) => r.version));
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...done].filter((v) => !known.has(v)).sort((a, b) => a - b);
    if (unknown.length) throw newerSchema(db, unknown[unknown.length - 1]!, migrations);
    const ran: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO ward_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new WardError(ERROR_CODES.STORE_INVALID, `store ${db.display}: migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
      }
      ran.push(m.version);
    }
    return { ...(await readStatus(client, migrations)), ran };
  } catch (err) {
    throw db.classify(err);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/** The schema version without changing anything (`ward doctor`, `ward store migrate --status`). */
export async function schemaStatus(db: PgPool, migrations: readonly Migration[] = MIGRATIONS): Promise<SchemaStatus> {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('ward_schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return { version: 0, latest: migrations[migrations.length - 1]!.version, applied: [] };
  return readStatus(db, migrations);
}

/** Refuse a database that is not migrated to exactly what this Ward knows (hosts call it after `migrate`, or instead of it). */
export async function requireCurrentSchema(db: PgPool, migrations: readonly Migration[] = MIGRATIONS): Promise<SchemaStatus> {
  const status = await schemaStatus(db, migrations);
  if (status.version > status.latest) throw newerSchema(db, status.version, migrations);
  if (status.version < status.latest) {
    throw new WardError(ERROR_CODES.STORE_UNAVAILABLE, `store ${db.display}: schema version ${status.version}, this Ward needs ${status.latest}`, {
      hint: 'run `ward store migrate --store URL` (ward serve migrates on start)',
    });
  }
  return status;
}

interface Queryable {
  query(text: string): Promise<{ rows: unknown[] }>;
}

async function readStatus(q: Queryable, migrations: readonly Migration[]): Promise<SchemaStatus> {
  const rows = (await q.query('SELECT version, name, applied_at FROM ward_schema_migrations ORDER BY version')).rows as { version: number; name: string; applied_at: Date }[];
  return {
    version: rows.length ? rows[rows.length - 1]!.version : 0,
    latest: migrations[migrations.length - 1]!.version,
    applied: rows.map((r) => ({ version: r.version, name: r.name, applied_at: r.applied_at.toISOString() })),
  };
}

function newerSchema(db: PgPool, version: number, migrations: readonly Migration[]): WardError {
  return new WardError(
    ERROR_CODES.STORE_UNAVAILABLE,
    `store ${db.display}: schema version ${version} is newer than this Ward knows (${migrations[migrations.length - 1]!.version})`,
    { hint: 'upgrade this Ward to the version the other replicas run' },
  );
}
