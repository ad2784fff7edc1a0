import type { PgPool } from '../pg/index.js';
import type { DaemonContext } from './context.js';
import type { JsonLog } from './log.js';
import type { Route } from './routes.js';

/**
 * The cluster's control plane inside one replica (docs/cluster.md): the kill switch, emergency
 * stops, tool pins and published policies, kept in PostgreSQL and followed by every replica.
 * `ward serve --store postgres://…` attaches it after the context exists; `close` detaches it.
 */
export interface AttachedControlPlane {
  /** HTTP routes of the control plane (mounted beside the daemon's own). */
  routes: readonly Route[];
  close(): Promise<void>;
}

export async function attachControlPlane(_ctx: DaemonContext, _db: PgPool, _log: JsonLog): Promise<AttachedControlPlane> {
  return { routes: [], close: async () => {} };
}
