import { nowUTC, type JsonObject } from '../../canon/index.js';
import { badRequest, HttpError } from '../../edge/http-error.js';
import { jsonBody, query, reply, type Handler, type Route } from '../routes.js';
import type { ApprovalInbox, InboxEntry } from './inbox.js';
import { acceptApproval, acceptDenial, Refused, approvalTemplate, DEFAULT_TTL_SECONDS, denialTemplate, MAX_TTL_SECONDS, parseSubmission, TEMPLATE_MAX_AGE_NS } from './records.js';
import type { ConsoleParts } from './parts.js';
import { reportedEntry } from './report.js';

/*
 * The approvals inbox over HTTP (docs/console.md "API"): list, one entry, a report from an MCP
 * proxy, the template an approver signs, and the signed approve and deny.
 */

const APPROVAL_ID = /^apr_[0-9a-f]{16}$/;

function entryOf(inbox: ApprovalInbox, params: Record<string, string>): InboxEntry {
  const id = params['id'] ?? '';
  if (!APPROVAL_ID.test(id)) throw badRequest(`invalid approval id ${JSON.stringify(id.slice(0, 40))}: expected apr_ and 16 hex digits`);
  const e = inbox.get(id);
  if (!e) throw new HttpError('not_found', `no approval ${id} in the inbox`, { hint: 'entries live in memory: after a restart the agent\'s retry enters its call again' });
  return e;
}

/** The entry as the API shows it; the token path is the daemon's business, the token id is not. */
function view(e: InboxEntry): JsonObject {
  return JSON.parse(JSON.stringify({ ...e, approvals: e.approvals.map(({ token_path: _p, ...a }) => a), ...(e.denial ? { denial: { ...e.denial, record_path: undefined } } : {}) })) as JsonObject;
}

const LIST_QUERY = new Set(['status', 'limit']);

const list =
  (parts: ConsoleParts): Handler =>
  async (_ctx, ex) => {
    const q = query(ex.req, LIST_QUERY);
    const status = q.get('status') ?? 'pending';
    if (!['pending', 'approved', 'denied', 'all'].includes(status)) throw badRequest('status must be pending, approved, denied or all');
    const limit = Number(q.get('limit') ?? '100');
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest('limit must be an integer from 1 to 1000');
    const entries = (status === 'pending' ? parts.inbox.pending() : parts.inbox.all().filter((e) => status === 'all' || e.status === status)).slice(0, limit);
    reply(ex, 200, { ok: true, count: entries.length, entries: entries.map(view) });
  };

const get =
  (parts: ConsoleParts): Handler =>
  async (_ctx, ex, params) => {
    const e = entryOf(parts.inbox, params);
    const token = e.status === 'approved' ? parts.tokensOf(e) : undefined;
    reply(ex, 200, { ok: true, entry: view(e), ...(token ? { tokens: token } : {}) });
  };

/** `POST /v1/approvals/pending`: an MCP proxy (or any host) reports a call waiting for approval (report.ts). */
const report =
  (parts: ConsoleParts): Handler =>
  async (ctx, ex) => {
    const body = await jsonBody(ctx, ex);
    const entry = counted(parts, () => reportedEntry(body, ctx.policies.current, parts.showArgs, nowUTC()));
    const denial = parts.inbox.deniedFor(entry.intent_digest, entry.policy_digest, entry.call.call_digest);
    if (denial) {
      reply(ex, 200, { ok: true, denied: true, denial: { denial_id: denial.denial_id, approver_identity: denial.approver_identity, reason: denial.reason, expires_at: denial.expires_at }, reason_code: 'approval_denied' });
      return;
    }
    // Approved after the reporter stopped waiting (its call timed out): the identical retry gets
    // the tokens that are still unused and unexpired, instead of a new entry to approve again.
    const approved = parts.inbox.approvedFor(entry.intent_digest, entry.policy_digest, entry.call.call_digest);
    const unused = approved ? parts.tokensOf(approved).filter((t) => Date.parse(String(t['expires_at'])) > Date.now()) : [];
    if (approved && unused.length > 0) {
      reply(ex, 200, { ok: true, entry: view(approved), tokens: unused });
      return;
    }
    const before = parts.inbox.pending().length;
    const e = parts.inbox.add(entry);
    reply(ex, parts.inbox.pending().length > before ? 201 : 200, { ok: true, entry: view(e) });
  };

const TEMPLATE_QUERY = new Set(['kind', 'approver', 'reason_code', 'reason', 'ttl_seconds']);

/** `GET /v1/approvals/{id}/token-template`: the exact payload and bytes an approver signs. */
const tokenTemplate =
  (parts: ConsoleParts): Handler =>
  async (_ctx, ex, params) => {
    const e = entryOf(parts.inbox, params);
    if (e.status !== 'pending') throw new HttpError('conflict', `approval ${e.id} is ${e.status}, not pending`);
    const q = query(ex.req, TEMPLATE_QUERY);
    const kind = q.get('kind') ?? 'approval';
    if (kind !== 'approval' && kind !== 'denial') throw badRequest('kind must be approval or denial');
    const approver = (q.get('approver') ?? '').trim();
    if (!approver || approver.length > 200 || /[\0-\x1f]/.test(approver)) throw badRequest('approver is required: the identity of the person signing (at most 200 characters)');
    const reason = (kind === 'approval' ? q.get('reason_code') ?? 'manual_approval' : q.get('reason') ?? '').trim();
    if (!reason || reason.length > 500 || /[\0-\x1f]/.test(reason)) throw badRequest(kind === 'approval' ? 'reason_code must be 1-500 characters' : 'reason is required for a denial (1-500 characters)');
    // An approval's reason is the approver's own words, signed into the token beside its code.
    const said = kind === 'approval' ? (q.get('reason') ?? '').trim() : undefined;
    const ttlText = q.get('ttl_seconds') ?? String(kind === 'approval' ? DEFAULT_TTL_SECONDS : MAX_TTL_SECONDS);
    if (!/^\d{1,6}$/.test(ttlText) || Number(ttlText) < 60 || Number(ttlText) > MAX_TTL_SECONDS) throw badRequest(`ttl_seconds must be an integer from 60 to ${MAX_TTL_SECONDS} (24h)`);
    const req = { approver, reasonCode: reason, reason: said, ttlSeconds: Number(ttlText), now: nowUTC() };
    const t = kind === 'approval' ? approvalTemplate(parts.inbox.binding(e), req) : denialTemplate(parts.inbox.binding(e), req);
    reply(ex, 200, {
      ok: true,
      approval_id: e.id,
      kind,
      payload: t.payload,
      signed_digest: t.digest,
      bytes_to_sign: t.bytesToSign,
      signature: {
        alg: 'ed25519',
        construction: 'Ed25519 over the 32 bytes of bytes_to_sign (base64), which are sha256(JCS(payload)); key_id = sha256 hex of the raw 32-byte public key',
        submit: `POST /v1/approvals/${e.id}/${kind === 'approval' ? 'approve' : 'deny'} with {"payload": <payload unchanged>, "key_id": "<hex>", "sig": "<base64 signature>"}`,
      },
      valid_for_seconds: Number(TEMPLATE_MAX_AGE_NS / 1_000_000_000n),
    });
  };

const approve =
  (parts: ConsoleParts): Handler =>
  async (ctx, ex, params) => {
    const e = entryOf(parts.inbox, params);
    const s = parseSubmission(await jsonBody(ctx, ex));
    if (e.status !== 'pending') throw new HttpError('conflict', `approval ${e.id} is ${e.status}, not pending`);
    const accepted = counted(parts, () => acceptApproval(parts.inbox.binding(e), s, parts.approvers.list(), parts.extraKeys(), { targets: e.target_count, ops: e.op_count }, nowUTC()));
    if (e.approvals.some((a) => a.key_id === accepted.keyId || a.token_id === accepted.tokenId)) throw new HttpError('conflict', `approval ${e.id} already holds an approval signed with this key`, { hint: 'a second approval must come from another approver with their own key' });
    const record = parts.inbox.approve(e, accepted.token, { token_id: accepted.tokenId, approver_identity: accepted.approver, reason: accepted.reason, key_id: accepted.keyId, expires_at: accepted.expiresAt });
    const { token_path: _p, ...shown } = record;
    reply(ex, 200, { ok: true, approval_id: e.id, status: e.status, approval: shown, approvals: e.approvals.length, required_approvals: e.required_approvals, token: accepted.token });
  };

const deny =
  (parts: ConsoleParts): Handler =>
  async (ctx, ex, params) => {
    const e = entryOf(parts.inbox, params);
    const s = parseSubmission(await jsonBody(ctx, ex));
    if (e.status !== 'pending') throw new HttpError('conflict', `approval ${e.id} is ${e.status}, not pending`);
    const accepted = counted(parts, () => acceptDenial(parts.inbox.binding(e), s, parts.approvers.list(), parts.extraKeys(), nowUTC()));
    const record = parts.inbox.deny(e, accepted.record, { denial_id: accepted.denialId, approver_identity: accepted.approver, reason: accepted.reason, key_id: accepted.keyId, expires_at: accepted.expiresAt });
    const { record_path: _p, ...shown } = record;
    reply(ex, 200, { ok: true, approval_id: e.id, status: e.status, denial: shown, record: accepted.record });
  };

/** Refusals are counted by code (`ward_console_refusals_total`): a burst of bad signatures is worth an alert. */
function counted<T>(parts: ConsoleParts, accept: () => T): T {
  try {
    return accept();
  } catch (err) {
    if (err instanceof Refused) parts.metrics.consoleRefusals.inc({ refusal: err.refusal });
    throw err;
  }
}

export function approvalRoutes(parts: ConsoleParts): Route[] {
  return [
    { name: 'approvals.list', segments: ['v1', 'approvals'], methods: { GET: list(parts) }, console: true },
    { name: 'approvals.report', segments: ['v1', 'approvals', 'pending'], methods: { POST: report(parts) }, console: true },
    { name: 'approvals.get', segments: ['v1', 'approvals', ':id'], methods: { GET: get(parts) }, console: true },
    { name: 'approvals.template', segments: ['v1', 'approvals', ':id', 'token-template'], methods: { GET: tokenTemplate(parts) }, console: true },
    { name: 'approvals.approve', segments: ['v1', 'approvals', ':id', 'approve'], methods: { POST: approve(parts) }, console: true },
    { name: 'approvals.deny', segments: ['v1', 'approvals', ':id', 'deny'], methods: { POST: deny(parts) }, console: true },
  ];
}
