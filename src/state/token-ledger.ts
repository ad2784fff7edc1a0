import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { formatRFC3339Nano, toEpochMillis, type GoTime } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { createFileExclusive, syncDir } from './atomic-file.js';

/**
 * The consumed-token ledger: approval tokens are one-use (docs/approvals.md "One use"). A token is
 * consumed by creating `<dir>/<kind>_<sha256(token_id)>.json` exclusively (written and fsynced
 * under a temporary name, then published with link(2), which fails with EEXIST for every writer
 * but one). Any number of processes may share the directory — `gate eval` processes, the daemon,
 * MCP proxies — with no lock: exactly one of them consumes a given token, and the ledger survives
 * crashes because the entry is durable before the decision that consumed it is returned.
 *
 * File names hash the token id, so an id is never a path (it is signed data, but arbitrary text).
 */

export const TOKEN_LEDGER_SCHEMA_ID = 'ward.token_ledger_entry';

export type LedgerTokenKind = 'approval';

/** What a ledger entry records about the decision that consumed the token. */
export interface ConsumptionRecord {
  intentDigest: string;
  policyDigest: string;
  /** The token's own `expires_at` (entries of long-expired tokens may be pruned). */
  expiresAt?: GoTime | undefined;
  consumedAt: GoTime;
}

export type ConsumeResult =
  | { ok: true }
  /** `conflicts` were consumed by someone else; nothing was consumed by this call. */
  | { ok: false; conflicts: string[] };

export interface TokenLedger {
  /** Has this token already been consumed? (A hint: only `consume` decides.) */
  isConsumed(kind: LedgerTokenKind, tokenId: string): boolean;
  /**
   * Consume every token id, all or nothing. When any id was already consumed, the ids this call
   * created are removed again and the conflicting ids are returned.
   */
  consume(kind: LedgerTokenKind, tokenIds: readonly string[], record: ConsumptionRecord): ConsumeResult;
}

/**
 * A ledger shared through the cluster database (src/cluster/ledger.ts): every call is a round trip,
 * so there is no local `isConsumed` hint. The approval step lets `consume` decide, and asks
 * `consumedAmong` only when its decision will not consume (a refusal, a dry run), so that such a
 * decision still names a used token `approval_token_consumed`, as with the file ledger.
 */
export interface SharedTokenLedger {
  /** The ids among `tokenIds` that some decision has consumed. */
  consumedAmong(kind: LedgerTokenKind, tokenIds: readonly string[]): Promise<string[]>;
  /** All or nothing, like `TokenLedger.consume`. */
  consume(kind: LedgerTokenKind, tokenIds: readonly string[], record: ConsumptionRecord): Promise<ConsumeResult>;
}

/** The ledger an approval step consults: local files (synchronous) or the cluster's (asynchronous). */
export type ApprovalLedger = TokenLedger | SharedTokenLedger;

/** The sha256 of a token id (hex): file names and database keys never hold the id itself. */
export function tokenIdHash(tokenId: string): string {
  return createHash('sha256').update(tokenId, 'utf8').digest('hex');
}

/** A ledger of one file per consumed token in `dir` (created on first use, mode 0700). */
export class FileTokenLedger implements TokenLedger {
  constructor(readonly dir: string) {}

  entryPath(kind: LedgerTokenKind, tokenId: string): string {
    return join(this.dir, `${kind}_${tokenIdHash(tokenId)}.json`);
  }

  isConsumed(kind: LedgerTokenKind, tokenId: string): boolean {
    return existsSync(this.entryPath(kind, tokenId));
  }

  consume(kind: LedgerTokenKind, tokenIds: readonly string[], record: ConsumptionRecord): ConsumeResult {
    const created: string[] = [];
    const conflicts: string[] = [];
    for (const tokenId of new Set(tokenIds)) {
      const path = this.entryPath(kind, tokenId);
      let fresh: boolean;
      try {
        fresh = createFileExclusive(path, entryText(kind, tokenId, record), 0o600);
      } catch (err) {
        this.release(created);
        // No silent pass: a token that cannot be recorded as used does not grant (exit 1, like a
        // rate-limit lock that cannot be taken).
        throw new WardError(ERROR_CODES.IO, `token ledger ${this.dir}: cannot record approval token ${tokenId} as used: ${(err as Error).message}`, {
          cause: err,
          hint: `the state directory must be writable by every process that decides (or pass --approval-token-reuse ttl to reuse tokens without a ledger)`,
        });
      }
      if (fresh) created.push(path);
      else conflicts.push(tokenId);
    }
    if (conflicts.length === 0) return { ok: true };
    // All or nothing: a decision that needed several tokens and lost one of them grants nothing,
    // so the tokens it did take are released for a later decision.
    this.release(created);
    return { ok: false, conflicts };
  }

  private release(paths: readonly string[]): void {
    for (const path of paths) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone (pruned): nothing to release.
      }
    }
    if (paths.length) syncDir(this.dir);
  }

  /**
   * Remove entries of tokens that expired before `olderThan` (an expired token is refused anyway).
   * Entries without a readable expiry are kept. Returns the number removed.
   */
  prune(olderThan: GoTime): number {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    const cutoff = toEpochMillis(olderThan);
    let removed = 0;
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const path = join(this.dir, name);
      try {
        const entry = JSON.parse(readFileSync(path, 'utf8')) as { expires_at?: unknown };
        const expires = typeof entry.expires_at === 'string' ? Date.parse(entry.expires_at) : NaN;
        if (Number.isFinite(expires) && expires < cutoff) {
          unlinkSync(path);
          removed++;
        }
      } catch {
        // Unreadable or vanished: keep (or already gone).
      }
    }
    if (removed) syncDir(this.dir);
    return removed;
  }
}

function entryText(kind: LedgerTokenKind, tokenId: string, record: ConsumptionRecord): string {
  const entry: Record<string, unknown> = {
    schema_id: TOKEN_LEDGER_SCHEMA_ID,
    schema_version: '1.0.0',
    kind,
    token_id: tokenId,
    consumed_at: formatRFC3339Nano(record.consumedAt),
    intent_digest: record.intentDigest,
    policy_digest: record.policyDigest,
    pid: process.pid,
  };
  if (record.expiresAt) entry['expires_at'] = formatRFC3339Nano(record.expiresAt);
  return JSON.stringify(entry, null, 2) + '\n';
}
