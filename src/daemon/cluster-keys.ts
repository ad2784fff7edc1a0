import { parsePublicKey, publicJwk, type VerifyKey } from '../keys/index.js';
import type { PgPool } from '../pg/index.js';

/**
 * The cluster's key set, kept in `ward_signing_keys` (migration 004). A replica registers every
 * key it signs with before its first decision with that key (on start and on a key reload), so a
 * trace in the store always names a registered key; every replica publishes and verifies with the
 * union of the table and its own keys. Only public halves are written.
 *
 * The set a replica holds is refreshed every `refreshMs` and at once when a verification names a
 * key it does not know (at most once per `missRefreshMs`, default 200 ms), so a trace signed by a replica that
 * started a moment ago still verifies on the first try.
 */
export class ClusterKeySet {
  private known: VerifyKey[] = [];
  private lastMissRefresh = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<boolean> | undefined;
  /** Told when a refresh changed the set (the daemon republishes its JWKS). */
  onChange: (keys: readonly VerifyKey[]) => void = () => undefined;

  constructor(
    private readonly db: PgPool,
    private readonly replica: string,
    private readonly options: { refreshMs?: number; missRefreshMs?: number } = {},
  ) {}

  get keys(): readonly VerifyKey[] {
    return this.known;
  }

  /** Record that this replica signs with `keys` (first use kept, last use and replica updated). */
  async register(keys: readonly VerifyKey[]): Promise<void> {
    // One row per key id: a key listed twice (the current key is also in the key ring) would make
    // the statement update the same row twice, which PostgreSQL refuses.
    const unique = [...new Map(keys.map((k) => [k.keyId, k])).values()];
    if (unique.length === 0) return;
    const ids = unique.map((k) => k.keyId);
    const jwks = unique.map((k) => JSON.stringify(publicJwk(k)));
    await this.db.query(
      `INSERT INTO ward_signing_keys (key_id, public_jwk, replica)
       SELECT k.id, k.jwk::jsonb, $3 FROM unnest($1::text[], $2::text[]) AS k(id, jwk)
       ON CONFLICT (key_id) DO UPDATE SET last_used_at = now(), replica = EXCLUDED.replica`,
      [ids, jwks, this.replica],
    );
  }

  /** Re-read the table; true when the set changed. A key row that does not parse is skipped. */
  refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      try {
        const rows = (await this.db.query<{ key_id: string; public_jwk: { kty: string; crv: string; x: string } }>('SELECT key_id, public_jwk FROM ward_signing_keys ORDER BY first_used_at, key_id')).rows;
        const keys: VerifyKey[] = [];
        for (const row of rows) {
          try {
            const key = parsePublicKey(JSON.stringify(row.public_jwk));
            // A row whose key_id is not its key's hash would let one key pose as another: ignored.
            if (key.keyId === row.key_id) keys.push(key);
          } catch {
            // not an Ed25519 public key: ignored
          }
        }
        const changed = keys.length !== this.known.length || keys.some((k, i) => k.keyId !== this.known[i]?.keyId);
        this.known = keys;
        if (changed) this.onChange(keys);
        return changed;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * A verification named `keyId` and this replica does not know it: re-read the table (rate
   * limited) and say whether the key is known now. Never throws; a database that is down leaves
   * the set as it was.
   */
  async refreshOnMiss(keyId: string): Promise<boolean> {
    const now = Date.now();
    if (now - this.lastMissRefresh < (this.options.missRefreshMs ?? 200)) return false;
    this.lastMissRefresh = now;
    try {
      await this.refresh();
    } catch {
      return false;
    }
    return this.known.some((k) => k.keyId === keyId);
  }

  /** Refresh every `refreshMs` (default 10 s); `heartbeat` re-registers this replica's keys then (their last use). */
  start(heartbeat: () => readonly VerifyKey[], onError: (err: Error) => void): void {
    const every = this.options.refreshMs ?? 10_000;
    this.timer = setInterval(() => {
      void (async () => {
        try {
          await this.register(heartbeat());
          await this.refresh();
        } catch (err) {
          onError(err as Error);
        }
      })();
    }, every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
