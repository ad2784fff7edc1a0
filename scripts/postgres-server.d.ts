/** A real PostgreSQL server started for tests or benchmarks (scripts/postgres-server.js). */
export interface PgServer {
  /** Superuser URL of the `postgres` database (password included: throwaway credentials). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly dataDir: string;
  /** A new empty database; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Stop the server (fast shutdown: connections are terminated). Data is kept for `start`. */
  stop(): Promise<void>;
  /** Start it again on the same port and data directory. */
  start(): Promise<void>;
  /**
   * Freeze the server as a hung host or a partition looks: SIGSTOP to the postmaster and every
   * backend (connections stay open, nothing answers). `thaw` sends SIGCONT. Linux (/proc) only.
   */
  freeze(): void;
  thaw(): void;
  /** Stop it and remove its directory. */
  destroy(): Promise<void>;
}

export interface PgServerOptions {
  /** Default true: fsync off (tests do not test power loss; the cluster bench turns it on). */
  fast?: boolean;
  maxConnections?: number;
}

export function startPostgres(options?: PgServerOptions): Promise<PgServer>;

export interface PgBinaries {
  initdb: string;
  postgres: string;
}

/** The binaries `ids` (the user the server runs as; none when not root) can execute: a world-readable copy of the installation when they sit in a private directory. */
export function reachableBy(ids: { uid: number; gid: number } | undefined, bin: PgBinaries): PgBinaries;
