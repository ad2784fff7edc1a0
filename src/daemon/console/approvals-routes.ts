import { isSha256Hex, nowUTC, uniqueSortedLower, type JsonObject, type JsonValue } from '../../canon/index.js';
import { badRequest, HttpError } from '../../edge/http-error.js';
import { checkFields } from '../gate-body.js';
import { jsonBody, query, reply, type Handler, type Route } from '../routes.js';
import type { ApprovalInbox, InboxEntry, NewEntry, TargetView } from './inbox.js';
import { acceptApproval, acceptDenial, Refused, approvalTemplate, DEFAULT_TTL_SECONDS, denialTemplate, MAX_TTL_SECONDS, parseSubmission, TEMPLATE_MAX_AGE_NS } from './records.js';
import type { ConsoleParts } from './parts.js';

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

const REPORT_FIELDS = new Set([
  'tool_name',
  'targets',
  'matched_rule',
  'reason_codes',
  'violations',
  'identity',
  'agent_id',
  'session_id',
  'requested_at',
  'intent_digest',
  'policy_digest',
  'delegation_binding_digest',
  'trace_id',
  'required_scope',
  'required_approvals',
  'args_digest',
  'reporter',
]);
const TARGET_FIELDS = new Set(['kind', 'value', 'operation', 'endpoint_class', 'endpoint_domain', 'sensitivity', 'destructive']);

/** `POST /v1/approvals/pending`: an MCP proxy (or any host) reports a call waiting for approval. */
const report =
  (parts: ConsoleParts): Handler =>
  async (ctx, ex) => {
    const b = checkFields(await jsonBody(ctx, ex), REPORT_FIELDS, 'body');
    const str = (k: string, opts: { required?: boolean; max?: number } = {}): string => {
      const v = b[k];
      if (v === undefined || v === null) {
        if (opts.required) throw badRequest(`body: ${k} is required`);
        return '';
      }
      if (typeof v !== 'string' || v.length > (opts.max ?? 512) || /[\0-\x1f]/.test(v)) throw badRequest(`body: ${k} must be a string of at most ${opts.max ?? 512} characters without control characters`);
      return v;
    };
    const strs = (k: string, max = 64): string[] => {
      const v = b[k];
      if (v === undefined || v === null) return [];
      if (!Array.isArray(v) || v.length > max || !v.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 200 && !/[\0-\x1f]/.test(x))) throw badRequest(`body: ${k} must be an array of at most ${max} short strings`);
      return v as string[];
    };
    const digest = (k: string, required: boolean): string => {
      const v = str(k, { required });
      if (v && !isSha256Hex(v)) throw badRequest(`body: ${k} must be sha256 hex (64 lowercase hex digits)`);
      return v;
    };
    const tool = str('tool_name', { required: true, max: 200 });
    const targets = targetsOf(b['targets']);
    const scope = strs('required_scope', 8).map((s) => s.toLowerCase());
    for (const s of scope) if (!/^(tool:.+|phase:apply|destructive:apply)$/.test(s)) throw badRequest(`body: required_scope entry ${JSON.stringify(s)} is not tool:<name>, phase:apply or destructive:apply`);
    if (scope.length > 0 && !scope.includes(`tool:${tool.toLowerCase()}`)) throw badRequest(`body: required_scope must include tool:${tool}`);
    const required = b['required_approvals'] ?? 1;
    if (typeof required !== 'number' || !Number.isInteger(required) || required < 1 || required > 16) throw badRequest('body: required_approvals must be an integer from 1 to 16');
    const requestedAt = str('requested_at', { max: 40 });
    if (requestedAt && Number.isNaN(Date.parse(requestedAt))) throw badRequest('body: requested_at must be an RFC 3339 time');
    const entry: NewEntry = {
      source: 'reported',
      reporter: str('reporter', { max: 200 }) || 'unnamed',
      tool_name: tool,
      targets,
      matched_rule: str('matched_rule', { max: 200 }),
      reason_codes: strs('reason_codes'),
      violations: strs('violations'),
      identity: str('identity', { max: 200 }),
      agent_id: str('agent_id', { max: 200 }),
      session_id: str('session_id', { max: 200 }),
      requested_at: requestedAt ? new Date(requestedAt).toISOString() : new Date().toISOString(),
      intent_digest: digest('intent_digest', true),
      policy_digest: digest('policy_digest', true),
      delegation_binding_digest: digest('delegation_binding_digest', false),
      trace_id: str('trace_id', { max: 128 }),
      required_scope: uniqueSortedLower(scope.length > 0 ? scope : [`tool:${tool}`]),
      required_approvals: required,
      // A reporter's counts are not known here: the token is not bounded by them.
      max_targets: 0,
      max_ops: 0,
      target_count: targets.length,
      op_count: Math.max(1, targets.length),
      // Reports never carry argument values, only their digest.
      args: { redacted: true, args_digest: digest('args_digest', false) },
    };
    const denial = parts.inbox.deniedFor(entry.intent_digest, entry.policy_digest);
    if (denial) {
      reply(ex, 200, { ok: true, denied: true, denial: { denial_id: denial.denial_id, approver_identity: denial.approver_identity, reason: denial.reason, expires_at: denial.expires_at }, reason_code: 'approval_denied' });
      return;
    }
    // Approved after the reporter stopped waiting (its call timed out): the identical retry gets
    // the tokens that are still unused and unexpired, instead of a new entry to approve again.
    const approved = parts.inbox.approvedFor(entry.intent_digest, entry.policy_digest);
    const unused = approved ? parts.tokensOf(approved).filter((t) => Date.parse(String(t['expires_at'])) > Date.now()) : [];
    if (approved && unused.length > 0) {
      reply(ex, 200, { ok: true, entry: view(approved), tokens: unused });
      return;
    }
    const before = parts.inbox.pending().length;
    const e = parts.inbox.add(entry);
    reply(ex, parts.inbox.pending().length > before ? 201 : 200, { ok: true, entry: view(e) });
  };

function targetsOf(v: JsonValue | undefined): TargetView[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > 256) throw badRequest('body: targets must be an array of at most 256 targets');
  return v.map((t, i) => {
    const o = checkFields(t, TARGET_FIELDS, `targets[${i}]`);
    const s = (k: string) => {
      const x = o[k];
      if (x === undefined || x === null) return '';
      if (typeof x !== 'string' || x.length > 1024) throw badRequest(`body: targets[${i}].${k} must be a string of at most 1024 characters`);
      return x;
    };
    const d = o['destructive'];
    if (d !== undefined && d !== null && typeof d !== 'boolean') throw badRequest(`body: targets[${i}].destructive must be true or false`);
    return { kind: s('kind'), value: s('value'), operation: s('operation'), endpoint_class: s('endpoint_class'), endpoint_domain: s('endpoint_domain'), sensitivity: s('sensitivity'), destructive: d === true };
  });
}

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
    const ttlText = q.get('ttl_seconds') ?? String(kind === 'approval' ? DEFAULT_TTL_SECONDS : MAX_TTL_SECONDS);
    if (!/^\d{1,6}$/.test(ttlText) || Number(ttlText) < 60 || Number(ttlText) > MAX_TTL_SECONDS) throw badRequest(`ttl_seconds must be an integer from 60 to ${MAX_TTL_SECONDS} (24h)`);
    const req = { approver, reasonCode: reason, ttlSeconds: Number(ttlText), now: nowUTC() };
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
    const record = parts.inbox.approve(e, accepted.token, { token_id: accepted.tokenId, approver_identity: accepted.approver, key_id: accepted.keyId, expires_at: accepted.expiresAt });
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
