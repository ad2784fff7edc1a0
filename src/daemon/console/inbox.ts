import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseStrictJson, type JsonObject } from '../../canon/index.js';
import type { EntryBinding } from './records.js';

/*
 * The approvals inbox: decisions waiting for a person. Entries live in memory (a restarted daemon
 * starts empty; the agent's next retry enters its call again). What must outlive the process is on
 * disk in the state directory: approved tokens in `<state>/approvals/` (the approval directory the
 * MCP proxy and the SDK read too, so the next identical call finds them) and signed denials in
 * `<state>/approvals/denials/`.
 */

export type EntryStatus = 'pending' | 'approved' | 'denied';

export interface TargetView {
  kind: string;
  /** As the intent spells it. */
  value: string;
  /** What the target will touch (docs/canonical-targets.md): the form the approver is shown first. */
  canonical: string;
  operation: string;
  endpoint_class: string;
  endpoint_domain: string;
  sensitivity: string;
  destructive: boolean;
}

/** Argument values, or only their digest (the default: values stay with the agent). */
export type ArgsView = { redacted: true; args_digest: string } | { redacted: false; args_digest: string; values: JsonObject };

export interface ApprovalRecord {
  token_id: string;
  approver_identity: string;
  /** What the approver typed (signed in the token); "" when nothing. */
  reason: string;
  key_id: string;
  expires_at: string;
  approved_at: string;
  token_path: string;
}

export interface DenialRecord {
  denial_id: string;
  approver_identity: string;
  reason: string;
  key_id: string;
  expires_at: string;
  denied_at: string;
  record_path: string;
}

export interface InboxEntry {
  id: string;
  status: EntryStatus;
  /** `daemon`: a decision of this daemon; `reported`: sent by an MCP proxy or another host. */
  source: 'daemon' | 'reported';
  reporter?: string;
  tool_name: string;
  targets: TargetView[];
  matched_rule: string;
  reason_codes: string[];
  violations: string[];
  identity: string;
  agent_id: string;
  session_id: string;
  requested_at: string;
  last_seen_at: string;
  /** How many identical calls (same intent and policy digests) asked while pending. */
  requests: number;
  intent_digest: string;
  policy_digest: string;
  delegation_binding_digest: string;
  trace_id: string;
  required_scope: string[];
  required_approvals: number;
  max_targets: number;
  max_ops: number;
  target_count: number;
  op_count: number;
  args: ArgsView;
  /** The call as the token names it (tokens/approval.ts `approvalCallOf`): what the browser checks the template against. */
  call: CallView;
  approvals: ApprovalRecord[];
  denial?: DenialRecord;
}

export interface CallView {
  tool_name: string;
  targets: string[];
  args_digest: string;
  /** Set when the token binds the call across sessions (docs/approvals.md "Call or session"). */
  call_digest: string;
}

export type NewEntry = Omit<InboxEntry, 'id' | 'status' | 'last_seen_at' | 'requests' | 'approvals' | 'denial'>;

export interface InboxEvent {
  kind: 'pending' | 'approved' | 'denied' | 'approval_added';
  entry: InboxEntry;
}

interface Denial {
  intentDigest: string;
  policyDigest: string;
  /** Set when the denial covers the call from any session. */
  callDigest: string;
  expiresAtMs: number;
  record: DenialRecord;
}

/** Resolved entries kept for GET /v1/approvals/{id}, at most. */
const KEEP_RESOLVED = 1000;
/** Pending entries, at most: beyond it the oldest is dropped (it can be asked for again). */
const MAX_PENDING = 10_000;

export class ApprovalInbox {
  private readonly entries = new Map<string, InboxEntry>();
  private readonly denials = new Map<string, Denial>();
  private readonly listeners = new Set<(e: InboxEvent) => void>();
  readonly dir: string;
  readonly denialDir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'approvals');
    this.denialDir = join(this.dir, 'denials');
    this.loadDenials();
  }

  subscribe(listener: (e: InboxEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A decision waiting for approval. An identical call (same intent and policy digests, or the same
   * call from another session when approvals bind the call) already pending is the same entry: it
   * counts the request and keeps the newest trace id.
   */
  add(e: NewEntry): InboxEntry {
    const now = new Date().toISOString();
    for (const existing of this.entries.values()) {
      if (existing.status === 'pending' && sameCall(existing, e.intent_digest, e.policy_digest, e.call.call_digest)) {
        existing.requests++;
        existing.last_seen_at = now;
        if (e.trace_id) existing.trace_id = e.trace_id;
        return existing;
      }
    }
    const entry: InboxEntry = { ...e, id: `apr_${randomBytes(8).toString('hex')}`, status: 'pending', last_seen_at: now, requests: 1, approvals: [] };
    this.entries.set(entry.id, entry);
    this.trim();
    this.emit({ kind: 'pending', entry });
    return entry;
  }

  /** The newest approved entry for this intent under this policy (its tokens may be used already). */
  approvedFor(intentDigest: string, policyDigest: string, callDigest = ''): InboxEntry | undefined {
    let found: InboxEntry | undefined;
    for (const e of this.entries.values()) {
      if (e.status === 'approved' && sameCall(e, intentDigest, policyDigest, callDigest) && (!found || newestFirst(e, found) < 0)) found = e;
    }
    return found;
  }

  /**
   * The approvals a decision is about: those given to the entry this decision asked (its trace id),
   * and those whose tokens it used (`approval_token_ref`). With the entry id and the approver's reason.
   */
  approvalsOf(traceId: string, tokenIds: readonly string[]): (Omit<ApprovalRecord, 'token_path'> & { approval_id: string })[] {
    const out: (Omit<ApprovalRecord, 'token_path'> & { approval_id: string })[] = [];
    for (const e of this.entries.values()) {
      for (const { token_path: _p, ...a } of e.approvals) {
        if (e.trace_id === traceId || tokenIds.includes(a.token_id)) out.push({ ...a, approval_id: e.id });
      }
    }
    return out;
  }

  get(id: string): InboxEntry | undefined {
    return this.entries.get(id);
  }

  /** Every entry kept (pending and recently resolved), newest first. */
  all(): InboxEntry[] {
    return [...this.entries.values()].sort(newestFirst);
  }

  pendingCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.status === 'pending') n++;
    return n;
  }

  /** Pending entries, newest first. */
  pending(): InboxEntry[] {
    return [...this.entries.values()].filter((e) => e.status === 'pending').sort(newestFirst);
  }

  binding(e: InboxEntry): EntryBinding {
    return {
      approvalId: e.id,
      intentDigest: e.intent_digest,
      policyDigest: e.policy_digest,
      delegationDigest: e.delegation_binding_digest,
      requiredScope: e.required_scope,
      maxTargets: e.max_targets,
      maxOps: e.max_ops,
      call: { toolName: e.call.tool_name, targets: e.call.targets, argsDigest: e.call.args_digest, callDigest: e.call.call_digest },
      bindCall: e.call.call_digest !== '',
    };
  }

  /**
   * Store an approved token where the retry finds it, and record it. The entry leaves the pending
   * list once it holds as many approvals as the rule requires.
   */
  approve(e: InboxEntry, token: JsonObject, r: Omit<ApprovalRecord, 'token_path' | 'approved_at'>): ApprovalRecord {
    const path = join(this.dir, `console_${r.token_id}.json`);
    writeAtomic(path, JSON.stringify(token, null, 2) + '\n');
    const record: ApprovalRecord = { ...r, approved_at: new Date().toISOString(), token_path: path };
    e.approvals.push(record);
    if (e.approvals.length >= e.required_approvals) e.status = 'approved';
    this.emit({ kind: e.status === 'approved' ? 'approved' : 'approval_added', entry: e });
    return record;
  }

  deny(e: InboxEntry, signed: JsonObject, r: Omit<DenialRecord, 'record_path' | 'denied_at'>): DenialRecord {
    const path = join(this.denialDir, `denial_${r.denial_id}.json`);
    writeAtomic(path, JSON.stringify(signed, null, 2) + '\n');
    const record: DenialRecord = { ...r, denied_at: new Date().toISOString(), record_path: path };
    e.status = 'denied';
    e.denial = record;
    this.remember({ intentDigest: e.intent_digest, policyDigest: e.policy_digest, callDigest: e.call.call_digest, expiresAtMs: Date.parse(r.expires_at), record });
    this.emit({ kind: 'denied', entry: e });
    return record;
  }

  /**
   * The denial in force for this intent under this policy — or for this call from another session,
   * when the denial covers the call — if any (expired ones are forgotten).
   */
  deniedFor(intentDigest: string, policyDigest: string, callDigest = ''): DenialRecord | undefined {
    for (const k of [key(intentDigest, policyDigest), ...(callDigest ? [key(`call:${callDigest}`, policyDigest)] : [])]) {
      const d = this.denials.get(k);
      if (!d) continue;
      if (d.expiresAtMs > Date.now()) return d.record;
      this.denials.delete(k);
    }
    return undefined;
  }

  private remember(d: Denial): void {
    this.denials.set(key(d.intentDigest, d.policyDigest), d);
    if (d.callDigest) this.denials.set(key(`call:${d.callDigest}`, d.policyDigest), d);
  }

  /** After a grant: the console's token files the decision consumed are removed (one use). */
  consumed(tokenIds: readonly string[]): void {
    for (const id of tokenIds) {
      if (!/^[0-9a-f]{1,64}$/.test(id)) continue;
      rmSync(join(this.dir, `console_${id}.json`), { force: true });
    }
  }

  /**
   * Console token files past their expiry are removed as they are met (an expired token is refused
   * anyway; left alone, every later identical call would read it again). Other files are left to
   * whoever wrote them.
   */
  dropExpired<T extends { source: string; value: JsonObject }>(tokens: T[]): T[] {
    const now = Date.now();
    return tokens.filter((t) => {
      const expires = Date.parse(String(t.value['expires_at']));
      if (!(expires <= now) || !basename(t.source).startsWith('console_')) return true;
      rmSync(t.source, { force: true });
      return false;
    });
  }

  private emit(e: InboxEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // a subscriber's failure (a closed stream) is its own
      }
    }
  }

  private trim(): void {
    const resolved = [...this.entries.values()].filter((e) => e.status !== 'pending');
    for (const e of resolved.slice(0, Math.max(0, resolved.length - KEEP_RESOLVED))) this.entries.delete(e.id);
    const pending = [...this.entries.values()].filter((e) => e.status === 'pending');
    for (const e of pending.slice(0, Math.max(0, pending.length - MAX_PENDING))) this.entries.delete(e.id);
  }

  /** Denials signed before a restart still refuse their retries until they expire. */
  private loadDenials(): void {
    let names: string[];
    try {
      names = readdirSync(this.denialDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!/^denial_[0-9a-f]+\.json$/.test(name)) continue;
      try {
        const v = parseStrictJson(readFileSync(join(this.denialDir, name), 'utf8')) as Record<string, unknown>;
        const sig = v['signature'] as Record<string, unknown> | undefined;
        const d: Denial = {
          intentDigest: String(v['intent_digest']),
          policyDigest: String(v['policy_digest']),
          callDigest: typeof v['call_digest'] === 'string' ? v['call_digest'] : '',
          expiresAtMs: Date.parse(String(v['expires_at'])),
          record: {
            denial_id: String(v['denial_id']),
            approver_identity: String(v['approver_identity']),
            reason: String(v['reason']),
            key_id: String(sig?.['key_id'] ?? ''),
            expires_at: String(v['expires_at']),
            denied_at: String(v['created_at']),
            record_path: join(this.denialDir, name),
          },
        };
        if (d.expiresAtMs > Date.now()) this.remember(d);
      } catch {
        // unreadable: skipped, as the approval directory skips files it cannot parse
      }
    }
  }
}

/** The same intent under the same policy, or the same call from another session when both bind the call. */
function sameCall(e: InboxEntry, intentDigest: string, policyDigest: string, callDigest: string): boolean {
  if (e.policy_digest !== policyDigest) return false;
  return e.intent_digest === intentDigest || (callDigest !== '' && e.call.call_digest === callDigest);
}

function newestFirst(a: InboxEntry, b: InboxEntry): number {
  return a.requested_at < b.requested_at ? 1 : a.requested_at > b.requested_at ? -1 : a.id < b.id ? 1 : -1;
}

function key(intentDigest: string, policyDigest: string): string {
  return `${intentDigest}:${policyDigest}`;
}

function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
  renameSync(tmp, path);
}
