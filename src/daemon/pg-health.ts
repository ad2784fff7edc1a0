import type pg from 'pg';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import type { PgPool } from '../pg/index.js';
import type { Counter } from '../telemetry/registry.js';

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
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: PgPool,
    private readonly options: { freshMs?: number; probeTimeoutMs?: number; retryMs?: number } = {},
  ) {}

  get up(): boolean {
    return this.lastError === undefined && this.lastOk > 0;
  }

  get error(): string | undefined {
    return this.lastError?.message;
  }

  /**
   * While the database is known to be unreachable: the error new decisions are refused with at
   * once (503 + Retry-After), instead of each one waiting for its own timeout. A probe every
   * `retryMs` (default 500) ends the state as soon as PostgreSQL answers.
   */
  get refusal(): Error | undefined {
    return this.lastError && isWardError(this.lastError) && this.lastError.code === ERROR_CODES.STORE_UNAVAILABLE ? this.lastError : undefined;
  }

  /** A commit's outcome: success, or a failure that says the database is unreachable. */
  observe(err: Error | undefined): void {
    if (!err) {
      this.lastOk = Date.now();
      this.lastError = undefined;
    } else if (isWardError(err) && err.code === ERROR_CODES.STORE_UNAVAILABLE) {
      this.lastError = err;
      this.retrySoon();
    }
  }

  /** Stop the background probe (shutdown). */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private retrySoon(): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.probing ??= this.probe().finally(() => (this.probing = undefined));
      void this.probing.then(() => {
        this.retryTimer = undefined;
        if (this.lastError) this.retrySoon();
      });
    }, this.options.retryMs ?? 500);
    this.retryTimer.unref();
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
      this.lastError = isWardError(err) ? err : new WardError(ERROR_CODES.STORE_UNAVAILABLE, `store ${this.db.display} is unavailable: ${(err as Error).message}`, { cause: err });
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

/**
 * `work`, or ERR_STORE_UNAVAILABLE once `ms` have passed without it settling: a decision on
 * PostgreSQL is answered within a bound whatever the database does. The work goes on; if it
 * commits a trace after all, that trace records a decision the client was told had failed
 * (docs/cluster.md, "Unknown commit outcome").
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new WardError(ERROR_CODES.STORE_UNAVAILABLE, `${what}: the store is unavailable: no commit confirmed within ${ms} ms; the decision is not answered`, {
            hint: 'PostgreSQL did not answer in time (frozen, overloaded or partitioned); retry after the Retry-After delay',
          }),
        ),
      ms,
    );
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
