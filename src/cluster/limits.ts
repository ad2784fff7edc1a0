import { createHash } from 'node:crypto';
import type { GoTime } from '../canon/index.js';
import type { PgPool } from '../pg/index.js';
import type { RateLimitConfig } from '../policy/types.js';
import { RATE_LIMIT_RETAIN_SECONDS, rateLimitBucket, rateLimitUse, type LimitCounter, type RateLimitSubject, type RateLimitUse } from '../state/rate-limit.js';
import { Housekeeping } from './housekeeping.js';

/**
 * Rate-limit and destructive-budget counters shared by every replica (`ward_limit_counters`,
 * migration 2), with the file counter's semantics: the same keys and window buckets
 * (`rateLimitBucket`), and a call that finds the counter at its limit is refused and not counted.
 *
 * Each call is one statement, atomic on the counter's row: the insert creates the bucket at 1, or
 * the conflict branch adds one only while the count is below the limit. Concurrent calls on any
 * replica queue on the row lock, each sees the count the previous one committed, so no update is
 * lost and exactly `requests` calls per bucket are admitted. A refused call updates nothing and
 * reads the count with a second query (refusals only).
 *
 * The statement commits without waiting for its WAL flush (`synchronous_commit` off for its own
 * implicit transaction only), and still no answered decision can lose its count: the decision is
 * answered only after its trace commits synchronously on the same server, later in the same WAL,
 * and flushing that commit flushes everything before it. A crash before then loses the count of a
 * decision nobody was answered — and the row was visible to every replica meanwhile, so they could
 * only have refused more, never allowed more. See docs/approvals.md "In a cluster".
 */

const CONSUME = `
WITH commit_async AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO ward_limit_counters AS c (key_hash, key, bucket_sec, count)
SELECT $1, $2, $3, 1 FROM commit_async WHERE $4::bigint > 0
ON CONFLICT (key_hash) DO UPDATE SET count = c.count + 1 WHERE c.count < $4::bigint
RETURNING c.count`;

export class PgLimitCounter implements LimitCounter {
  private readonly housekeeping: Housekeeping;

  constructor(
    private readonly db: PgPool,
    options: { pruneEveryMs?: number } = {},
  ) {
    this.housekeeping = new Housekeeping(options.pruneEveryMs ?? 60_000);
  }

  async consume(limit: RateLimitConfig, subject: RateLimitSubject, wallNow: GoTime): Promise<RateLimitUse> {
    const { key, bucketSec } = rateLimitBucket(limit, subject, wallNow);
    const keyHash = hashKey(key);
    this.housekeeping.due(() => this.prune(wallNow.sec - RATE_LIMIT_RETAIN_SECONDS));
    const counted = await this.db.query<{ count: string }>(CONSUME, [keyHash, key, bucketSec, limit.requests]);
    if (counted.rows[0]) return rateLimitUse(limit, key, Number(counted.rows[0].count), true);
    const current = await this.db.query<{ count: string }>('SELECT count FROM ward_limit_counters WHERE key_hash = $1', [keyHash]);
    return rateLimitUse(limit, key, Number(current.rows[0]?.count ?? 0), false);
  }

  /** Drop the counters of buckets that started before `oldestBucketSec`; returns how many. */
  async prune(oldestBucketSec: number): Promise<number> {
    const r = await this.db.query('DELETE FROM ward_limit_counters WHERE bucket_sec < $1', [oldestBucketSec]);
    return r.rowCount ?? 0;
  }

  /** Wait for a prune in progress (tests; shutdown). */
  settled(): Promise<void> {
    return this.housekeeping.settled();
  }
}

function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
