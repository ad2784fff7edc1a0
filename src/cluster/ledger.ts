import { hostname } from 'node:os';
import { addSeconds, formatRFC3339Nano, type GoTime } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { PgPool } from '../pg/index.js';
import { tokenIdHash, type ConsumeResult, type ConsumptionRecord, type LedgerTokenKind, type SharedTokenLedger } from '../state/token-ledger.js';
import { Housekeeping } from './housekeeping.js';

/**
 * The consumed-token ledger shared by every replica (`ward_token_ledger`, migration 2): a token
 * consumed on any replica is refused on every other with `approval_token_consumed`, as the file
 * ledger does for the processes sharing one state directory (docs/approvals.md "One use").
 *
 * A token is consumed by inserting its row; the primary key makes that succeed for exactly one
 * inserter (`ON CONFLICT DO NOTHING … RETURNING` names who won). One token — the usual case — is
 * one statement, atomic by itself. Several tokens are all or nothing in one transaction: when any
 * was taken already, the transaction is rolled back, so the tokens this call did insert are not
 * consumed either. The row is committed (visible to every replica) before the decision that
 * consumed it is signed.
 *
 * The commit does not wait for its WAL flush (`synchronous_commit` off for this transaction only),
 * as for the limit counters (limits.ts): the decision is answered only after its trace commits
 * synchronously on the same server, later in the same WAL, which makes the row durable first. A
 * crash before that can only forget the consumption of a decision nobody was answered.
 */

const INSERT = `
WITH commit_async AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO ward_token_ledger (kind, token_hash, token_id, consumed_at, expires_at, intent_digest, policy_digest, consumed_by)
SELECT $1, h, i, $4, $5, $6, $7, $8 FROM commit_async, unnest($2::text[], $3::text[]) AS t(h, i)
ON CONFLICT (kind, token_hash) DO NOTHING
RETURNING token_hash`;

/** Rows of tokens that expired this long ago are pruned: margin for replicas whose clocks differ. */
const PRUNE_MARGIN_SECONDS = 3600;

export class PgTokenLedger implements SharedTokenLedger {
  private readonly housekeeping: Housekeeping;
  /** Recorded with each row: which replica consumed the token (for people reading the table). */
  private readonly replica = `${hostname()}:${process.pid}`;

  constructor(
    private readonly db: PgPool,
    options: { pruneEveryMs?: number } = {},
  ) {
    this.housekeeping = new Housekeeping(options.pruneEveryMs ?? 600_000);
  }

  async consumedAmong(kind: LedgerTokenKind, tokenIds: readonly string[]): Promise<string[]> {
    const ids = [...new Set(tokenIds)];
    if (ids.length === 0) return [];
    const r = await this.db.query<{ token_hash: string }>('SELECT token_hash FROM ward_token_ledger WHERE kind = $1 AND token_hash = ANY($2::text[])', [
      kind,
      ids.map(tokenIdHash),
    ]);
    const used = new Set(r.rows.map((row) => row.token_hash));
    return ids.filter((id) => used.has(tokenIdHash(id)));
  }

  async consume(kind: LedgerTokenKind, tokenIds: readonly string[], record: ConsumptionRecord): Promise<ConsumeResult> {
    const ids = [...new Set(tokenIds)];
    if (ids.length === 0) return { ok: true };
    this.housekeeping.due(() => this.prune(addSeconds(record.consumedAt, -PRUNE_MARGIN_SECONDS)));
    // In hash order: two replicas consuming overlapping sets then lock the rows they share in the
    // same order, so one waits for the other instead of both waiting on each other (a deadlock
    // PostgreSQL resolves by failing one of them, seen with sets raced in opposite orders).
    const byHash = ids.map((id) => ({ id, hash: tokenIdHash(id) })).sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
    const hashes = byHash.map((t) => t.hash);
    const values = [
      kind,
      hashes,
      byHash.map((t) => t.id),
      formatRFC3339Nano(record.consumedAt),
      record.expiresAt ? formatRFC3339Nano(record.expiresAt) : null,
      record.intentDigest,
      record.policyDigest,
      this.replica,
    ];
    if (ids.length === 1) {
      const r = await this.db.query(INSERT, values);
      return r.rowCount === 1 ? { ok: true } : { ok: false, conflicts: ids };
    }
    try {
      return await this.db.transaction(async (client) => {
        const r = await client.query<{ token_hash: string }>(INSERT, values);
        const fresh = new Set(r.rows.map((row) => row.token_hash));
        const conflicts = ids.filter((id) => !fresh.has(tokenIdHash(id))); // in the caller's order
        if (conflicts.length) throw new TokensTaken(conflicts); // rolls back this call's rows
        return { ok: true } as const;
      });
    } catch (err) {
      if (err instanceof TokensTaken) return { ok: false, conflicts: err.conflicts };
      throw err;
    }
  }

  /** Remove rows of tokens that expired before `olderThan` (rows without an expiry are kept); returns how many. */
  async prune(olderThan: GoTime): Promise<number> {
    const r = await this.db.query('DELETE FROM ward_token_ledger WHERE expires_at < $1', [formatRFC3339Nano(olderThan)]);
    return r.rowCount ?? 0;
  }

  /** Wait for a prune in progress (tests; shutdown). */
  settled(): Promise<void> {
    return this.housekeeping.settled();
  }
}

/** Raised inside the transaction only, to roll it back; `consume` turns it into its answer. */
class TokensTaken extends WardError {
  constructor(readonly conflicts: string[]) {
    super(ERROR_CODES.INTERNAL, `approval tokens already consumed: ${conflicts.length}`);
  }
}
