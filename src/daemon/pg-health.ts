import type pg from 'pg';
import { ERROR_CODES, isWardError } from '../errors.js';
import type { PgPool } from '../pg/index.js';
import type { Counter } from './metrics.js';

/**
 * Whether this replica's PostgreSQL answers, for `/readyz` and `ward_store_up`. Every group commit
 * reports its outcome here (`observe`), so under load the state follows the database without extra
 * queries; when nothing succeeded for `freshMs`, `/readyz` probes with `SELECT 1` (bounded by
 * `probeTimeoutMs`). Nothing is latched: the first success after an outage makes the replica ready
 * again, without a restart (the pool opens new connections on its own).
 */
export class StoreHealth {
  private lastOk = 0;
  private lastError: Error | undefined;
  private probing: Promise<void> | undefined;

  constructor(
    private readonly db: PgPool,
    private readonly options: { freshMs?: number; probeTimeoutMs?: number } = {},
  ) {}

  get up(): boolean {
    return this.lastError === undefined && this.lastOk > 0;
  }

  get error(): string | undefined {
    return this.lastError?.message;
  }

  /** A commit's outcome: success, or a failure that says the database is unreachable. */
  observe(err: Error | undefined): void {
    if (!err) {
      this.lastOk = Date.now();
      this.lastError = undefined;
    } else if (isWardError(err) && err.code === ERROR_CODES.STORE_UNAVAILABLE) {
      this.lastError = err;
    }
  }

  /** Up now? Probes unless a success is recent. */
  async check(): Promise<boolean> {
    if (this.up && Date.now() - this.lastOk < (this.options.freshMs ?? 1000)) return true;
    this.probing ??= this.probe().finally(() => (this.probing = undefined));
    await this.probing;
    return this.up;
  }

  private async probe(): Promise<void> {
    const timeoutMs = this.options.probeTimeoutMs ?? 1000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.db.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      this.observe(undefined);
    } catch (err) {
      this.lastError = err as Error;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Count every statement the pool's connections send (one network round trip each: `pg` waits for
 * each answer before it sends the next statement). Counted per connection, once, when the pool
 * opens it, so every caller — the trace sink, shared tokens and limits, the control plane — is in
 * the figure the bench divides by decisions.
 */
export function countRoundTrips(db: PgPool, counter: Counter): void {
  db.pool.on('connect', (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      counter.inc();
      return query(...args);
    };
  });
}
