import type { PgPool, PgPoolOptions, StoreLocation } from '../pg/index.js';
import { openLevelStore } from './level.js';
import { openPgStore } from './postgres.js';
import type { EvidenceStore } from './types.js';

export interface OpenStoreOptions {
  /** PostgreSQL: apply pending migrations (`ward serve`, `ward store migrate`). Otherwise a schema that is not current is refused. */
  migrate?: boolean;
  /** PostgreSQL: use this pool (left open by `close`) instead of creating one. */
  pool?: PgPool;
  poolOptions?: PgPoolOptions;
}

/**
 * The evidence store a command names: the local LevelDB store in `<state>/store` (locked for this
 * process), or the PostgreSQL store at `location` (shared; `ingest()` still reads this host's
 * `<state>` spool and traces).
 */
export async function openEvidenceStore(location: StoreLocation, stateDir: string, options: OpenStoreOptions = {}): Promise<EvidenceStore> {
  if (location.kind === 'level') return openLevelStore(stateDir);
  return openPgStore({
    config: location.config,
    stateDir,
    ...(options.migrate !== undefined ? { migrate: options.migrate } : {}),
    ...(options.pool ? { pool: options.pool } : {}),
    ...(options.poolOptions ? { poolOptions: options.poolOptions } : {}),
  });
}
