import { readFileSync } from 'node:fs';
import { parseStrictJson, type JsonObject } from '../../canon/index.js';
import type { VerifyKey } from '../../keys/index.js';
import type { DaemonMetrics } from '../metrics.js';
import type { ApproverKeys } from './approvers.js';
import type { DecisionFeed } from './feed.js';
import type { ApprovalInbox, InboxEntry } from './inbox.js';
import type { ConsoleSessions } from './session.js';

/** What the console's routes share; one per daemon. */
export interface ConsoleParts {
  inbox: ApprovalInbox;
  feed: DecisionFeed;
  approvers: ApproverKeys;
  sessions: ConsoleSessions;
  metrics: DaemonMetrics;
  /** `ward serve --approval-args show`: argument values appear in inbox entries. */
  showArgs: boolean;
  /** Open decision streams (GET /v1/decisions/stream). */
  streams: { open: number };
  /** Keys trusted for approvals besides the approvers list (`--approval-public-key`). */
  extraKeys(): readonly VerifyKey[];
  /** The approved tokens of an entry, as stored (for hosts that poll: an MCP proxy elsewhere). */
  tokensOf(e: InboxEntry): JsonObject[];
  /** Ends every open event stream (shutdown). */
  close(): void;
  readonly closed: boolean;
  onClose(listener: () => void): () => void;
}

export function storedTokens(e: InboxEntry): JsonObject[] {
  const out: JsonObject[] = [];
  for (const a of e.approvals) {
    try {
      out.push(parseStrictJson(readFileSync(a.token_path, 'utf8')) as JsonObject);
    } catch {
      // consumed by a decision since (its file is removed): nothing to hand out
    }
  }
  return out;
}
