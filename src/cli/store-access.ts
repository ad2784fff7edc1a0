import type { Command } from 'commander';
import { resolveStoreLocation, type PgConnectionConfig, type StoreLocation } from '../pg/config.js';
import type { PgPool } from '../pg/pool.js';
import type { EvidenceStore } from '../store/types.js';
import type { CliContext } from './context.js';

/**
 * Which evidence store a CLI command reads and writes (docs/store.md "PostgreSQL"): the local
 * LevelDB store in `<state>/store`, or a PostgreSQL store named by `--store` / `WARD_STORE_URL`.
 * Neither store is loaded until a command opens one, and the PostgreSQL code (and `pg`) only when
 * one is named, so local commands load nothing more than before. The CLI never migrates: a schema
 * that is not current is refused with the command to run (`ward store migrate`).
 */

export interface StoreLocationFlags {
  store?: string;
  storePasswordFile?: string;
}

export function addStoreLocationOptions(cmd: Command): Command {
  return cmd
    .option('--store <url>', 'a PostgreSQL store (postgres://user@host:5432/db; also WARD_STORE_URL; no password here); default: the local store in <state>/store')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)');
}

export function storeLocationOf(ctx: CliContext, flags: StoreLocationFlags): StoreLocation {
  return resolveStoreLocation({ flag: flags.store, env: ctx.env, passwordFile: flags.storePasswordFile });
}

/** Open the store `location` names; `stateDir` is the local state whose spool and traces `ingest()` reads. */
export async function openStoreAt(location: StoreLocation, stateDir: string): Promise<EvidenceStore> {
  if (location.kind === 'level') return (await import('../store/level.js')).openLevelStore(stateDir);
  const { openEvidenceStore } = await import('../store/open.js');
  // One command, a few queries: a small pool.
  return openEvidenceStore(location, stateDir, { poolOptions: { max: 4, applicationName: 'ward-cli' } });
}

/**
 * For `locateArtifact` and replay sources: how to open the store `--store` / `WARD_STORE_URL`
 * names, or undefined for the local store (whose lock-free fallbacks those callers keep).
 */
export function storeOpener(ctx: CliContext, flags: StoreLocationFlags, stateDir: string): (() => Promise<EvidenceStore>) | undefined {
  const location = storeLocationOf(ctx, flags);
  return location.kind === 'level' ? undefined : () => openStoreAt(location, stateDir);
}

/**
 * A small pool (one command, a few statements) on a PostgreSQL store whose schema is exactly this
 * Ward's: the CLI never migrates, a stale schema is refused with the command to run. The caller
 * closes it.
 */
export async function openCheckedPool(config: PgConnectionConfig, applicationName: string): Promise<PgPool> {
  const { PgPool, requireCurrentSchema } = await import('../pg/index.js');
  const db = new PgPool(config, { max: 2, applicationName });
  try {
    await requireCurrentSchema(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}
