/**
 * Decision state every replica shares (src/cluster/ledger.ts, src/cluster/limits.ts).
 *
 * `ward_token_ledger`: one row per consumed one-use token. The key is the sha256 of the token id
 * (hex), as in the file ledger's names: a token id is signed but arbitrary text, and an index entry
 * must stay small. `expires_at` is the token's own expiry; rows of long-expired tokens are pruned.
 *
 * `ward_limit_counters`: one row per rate-limit or destructive-budget counter and window bucket,
 * keyed like the file counter (`window|scope|bucketStart|scopeKey`, hashed for the same reason);
 * `bucket_sec` (epoch seconds) lets old buckets be pruned.
 */
export const SHARED_STATE_SCHEMA = `
CREATE TABLE ward_token_ledger (
  kind text NOT NULL,
  token_hash text NOT NULL,
  token_id text NOT NULL,
  consumed_at timestamptz NOT NULL,
  expires_at timestamptz,
  intent_digest text NOT NULL,
  policy_digest text NOT NULL,
  consumed_by text NOT NULL,
  PRIMARY KEY (kind, token_hash)
);
CREATE INDEX ward_token_ledger_expires_at ON ward_token_ledger (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE ward_limit_counters (
  key_hash text PRIMARY KEY,
  key text NOT NULL,
  bucket_sec bigint NOT NULL,
  count bigint NOT NULL CHECK (count >= 0)
);
CREATE INDEX ward_limit_counters_bucket_sec ON ward_limit_counters (bucket_sec);
`;
