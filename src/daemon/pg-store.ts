import type { PgPool } from '../pg/index.js';
import { openPgStore } from '../store/postgres.js';
import type { EvidenceStore } from '../store/types.js';

/**
 * The PostgreSQL evidence store over the replica's own pool (the replica closes the pool; the
 * schema was migrated just before). Its `ingest` reads this replica's state directory: spooled
 * records and `gate eval` trace files left there go into the shared store.
 */
export function openClusterStore(db: PgPool, stateDir: string): Promise<EvidenceStore> {
  return openPgStore({ pool: db, stateDir });
}
