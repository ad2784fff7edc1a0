import pg from 'pg';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import type { PgConnectionConfig } from './config.js';

/**
 * One connection pool per process and store (`pg.Pool`). Every failure to reach the database leaves
 * here as a `WardError`: `ERR_STORE_BUSY` when every connection is in use and none freed up within
 * `acquireTimeoutMs`, `ERR_STORE_UNAVAILABLE` when the server cannot be reached or a connection
 * broke. Hosts turn both into 503 with `Retry-After`; nothing waits forever.
 */

export interface PgPoolOptions {
  /** Connections (default 10). */
  max?: number;
  /** How long a query waits for a free connection or a new one (default 5,000 ms). */
  acquireTimeoutMs?: number;
  /** Server-side limit per statement (default 30,000 ms): a stuck query fails instead of holding a connection. */
  statementTimeoutMs?: number;
  /**
   * Client-side limit per statement (default: the statement timeout + 1,000 ms): a server that does
   * not answer at all — frozen, black-holed by a partition — cannot cancel its own statement, so
   * the client gives up, drops the connection and reports ERR_STORE_UNAVAILABLE.
   */
  queryTimeoutMs?: number;
  /** `application_name` (shown in `pg_stat_activity`). */
  applicationName?: string;
}

export type PgQueryable = Pick<pg.PoolClient, 'query'>;

export class PgPool {
  readonly pool: pg.Pool;
  readonly display: string;
  private readonly max: number;

  constructor(config: PgConnectionConfig, options: PgPoolOptions = {}) {
    this.max = options.max ?? 10;
    this.display = config.display;
    const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
    this.pool = new pg.Pool({
      connectionString: withPassword(config.connectionString, config.password),
      max: this.max,
      // Every wait on the database is bounded on this side too: opening a connection (a server that
      // accepts TCP but never answers the startup), each statement, and a dead peer (TCP keepalive
      // probes after 10 s idle, so a partitioned connection errors instead of waiting for a reply).
      connectionTimeoutMillis: options.acquireTimeoutMs ?? 5000,
      statement_timeout: statementTimeoutMs,
      query_timeout: options.queryTimeoutMs ?? statementTimeoutMs + 1000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: options.applicationName ?? 'ward',
      idleTimeoutMillis: 30_000,
    });
    // An idle connection the server closed (restart, failover) emits 'error' on the pool; without a
    // listener that would crash the process. The next query simply opens a new connection.
    this.pool.on('error', () => undefined);
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (err) {
      throw this.classify(err);
    }
  }

  /** Run `fn` in one transaction (BEGIN … COMMIT; ROLLBACK on any error). */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.classify(err);
    }
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      broken = err;
      await client.query('ROLLBACK').catch(() => undefined);
      throw isWardError(err) ? err : this.classify(err);
    } finally {
      // A connection that failed mid-transaction may be dead: drop it rather than pool it.
      client.release(broken !== undefined && !isSqlError(broken) ? true : undefined);
    }
  }

  /** A dedicated connection outside the pool's limit accounting (LISTEN, advisory locks). */
  async connectDedicated(): Promise<pg.Client> {
    const client = new pg.Client({ ...this.pool.options });
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw this.classify(err);
    }
    return client;
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  /** A pg or network error as a WardError; SQL errors (constraint, syntax) stay what they are. */
  classify(err: unknown): Error {
    if (isWardError(err)) return err;
    const message = (err as Error)?.message ?? String(err);
    if (/timeout exceeded when trying to connect/.test(message) && this.pool.totalCount >= this.max) {
      return new WardError(ERROR_CODES.STORE_BUSY, `store ${this.display}: all ${this.max} connections are busy`, {
        cause: err,
        hint: 'retry shortly; raise --store-pool if this is sustained',
      });
    }
    // A statement cancelled by statement_timeout (or waiting for a lock it may not wait for) is the
    // database being too busy for it, not a wrong query: retryable, like a pool with no connection.
    if (isSqlError(err) && isTimeoutSqlState((err as { code: string }).code)) {
      return new WardError(ERROR_CODES.STORE_BUSY, `store ${this.display}: ${message}`, {
        cause: err,
        hint: 'retry shortly; PostgreSQL did not finish the statement within the statement timeout',
      });
    }
    if (isSqlError(err) && !isConnectionSqlState((err as { code: string }).code)) return err as Error;
    if (/Query read timeout/.test(message)) {
      return new WardError(ERROR_CODES.STORE_UNAVAILABLE, `store ${this.display} is unavailable: no answer within ${String(this.pool.options.query_timeout)} ms (query timeout)`, {
        cause: err,
        hint: 'PostgreSQL accepted the statement but did not answer (frozen, overloaded or partitioned); Ward retries on the next request',
      });
    }
    return new WardError(ERROR_CODES.STORE_UNAVAILABLE, `store ${this.display} is unavailable: ${message}`, {
      cause: err,
      hint: 'check that PostgreSQL is running and reachable; Ward retries on the next request',
    });
  }
}

/**
 * The password from a file goes into the URL `pg` is given (never shown: `display` is what is
 * printed): `pg` lets every field parsed from a connection string, even an absent password,
 * override the separate `password` option, so a password passed beside the URL would be lost.
 */
function withPassword(connectionString: string, password: string | undefined): string {
  if (password === undefined) return connectionString;
  const url = new URL(connectionString);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/** An error the server answered with (it has a five-character SQLSTATE). */
function isSqlError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** query_canceled (statement_timeout) and lock_not_available (lock_timeout, NOWAIT). */
function isTimeoutSqlState(code: string): boolean {
  return code === '57014' || code === '55P03';
}

/** SQLSTATE classes that mean the server or connection went away, not that the query was wrong. */
function isConnectionSqlState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('57P') || code === '53300' || code.startsWith('58');
}
