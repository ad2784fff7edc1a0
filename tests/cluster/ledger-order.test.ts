import { describe, expect, it } from 'vitest';
import { nowUTC } from '../../src/canon/index.js';
import { PgTokenLedger } from '../../src/cluster/ledger.js';
import type { PgPool } from '../../src/pg/index.js';
import { tokenIdHash } from '../../src/state/token-ledger.js';

/** A pool that records each statement's parameters and answers as if every row were inserted. */
function recordingPool(sent: unknown[][]): PgPool {
  const query = async (_sql: string, values: unknown[]) => {
    sent.push(values);
    const hashes = values[1] as string[];
    return { rows: hashes.map((h) => ({ token_hash: h })), rowCount: hashes.length };
  };
  return { query, transaction: async (fn: (client: { query: typeof query }) => Promise<unknown>) => fn({ query }) } as unknown as PgPool;
}

describe('PgTokenLedger lock order', () => {
  it('inserts a set of tokens in hash order, whatever order the caller names them in, so two replicas racing overlapping sets cannot deadlock', async () => {
    const sent: unknown[][] = [];
    const ledger = new PgTokenLedger(recordingPool(sent));
    const record = { intentDigest: 'a'.repeat(64), policyDigest: 'b'.repeat(64), consumedAt: nowUTC() };
    const ids = ['t0', 't1', 't2', 't3', 't4', 't5'];
    await ledger.consume('approval', ids, record);
    await ledger.consume('approval', [...ids].reverse(), record);
    expect(sent).toHaveLength(2);
    const byHash = [...ids].sort((x, y) => (tokenIdHash(x) < tokenIdHash(y) ? -1 : 1));
    for (const values of sent) {
      expect(values[1]).toEqual(byHash.map(tokenIdHash));
      expect(values[2]).toEqual(byHash); // each id beside its own hash
    }
  });
});
