import type { PgPool } from '../pg/index.js';
import type { EvidenceStore } from '../store/types.js';

/** The PostgreSQL evidence store (src/store/postgres.ts) over the replica's pool (the replica closes the pool). */
export async function openClusterStore(db: PgPool, stateDir: string): Promise<EvidenceStore> {
  const spec = '../store/postgres.js';
  const mod = (await import(spec)) as { openPgStore: (opts: { pool: PgPool; stateDir: string }) => Promise<EvidenceStore> };
  return mod.openPgStore({ pool: db, stateDir });
}
