/**
 * The cluster's published signing keys (docs/daemon.md "On PostgreSQL (cluster)"). Every replica
 * registers the public half of each key it signs with before it signs anything, so any trace in the
 * store names a key that is here, and any replica's JWKS and `/v1/trace/verify` can check it.
 * Public keys only: a private key never leaves its replica.
 */
export const SIGNING_KEYS_SCHEMA = `
CREATE TABLE ward_signing_keys (
  key_id        text PRIMARY KEY CHECK (key_id ~ '^[0-9a-f]{64}$'),
  public_jwk    jsonb NOT NULL,
  first_used_at timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz NOT NULL DEFAULT now(),
  replica       text NOT NULL
);
`;
