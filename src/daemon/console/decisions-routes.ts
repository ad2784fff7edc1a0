import type { JsonObject, JsonValue } from '../../canon/index.js';
import { badRequest, HttpError } from '../../edge/http-error.js';
import { describeReasonCode, REASON_CODES } from '../../gate/reason-codes.js';
import { idProblem, LOOKUP_PATTERN, quoteId } from '../../store/ids.js';
import { verifyTraceRecord } from '../../trace/index.js';
import { newest, query, reply, type Handler, type Route } from '../routes.js';
import type { DecisionEvent } from './feed.js';
import type { InboxEvent } from './inbox.js';
import type { ConsoleParts } from './parts.js';

/*
 * The decision console's feed and detail. The feed is server-sent events: `decision` for every
 * answered decision (filtered by the query), `approval` for every change in the inbox (unfiltered:
 * an open inbox must see new entries at once). Heartbeat comments keep proxies from closing an
 * idle stream.
 */

const STREAM_QUERY = new Set(['verdict', 'tool', 'reason', 'identity', 'since_seq']);
const HEARTBEAT_MS = 15_000;
/** Open streams, at most: each holds a socket and a listener; beyond it 429 (a page reconnects). */
export const MAX_STREAMS = 64;

const stream = (parts: ConsoleParts): Handler => {
  const streams = parts.streams;
  return async (_ctx, ex) => {
    const q = query(ex.req, STREAM_QUERY);
    const want = {
      verdict: q.getAll('verdict'),
      tool: q.getAll('tool'),
      reason: q.getAll('reason'),
      identity: q.getAll('identity'),
    };
    const sinceText = q.get('since_seq') ?? ex.req.headers['last-event-id'];
    let since: number | undefined;
    if (sinceText !== undefined) {
      if (typeof sinceText !== 'string' || !/^\d{1,15}$/.test(sinceText)) throw badRequest('since_seq (or Last-Event-ID) must be a decision sequence number');
      since = Number(sinceText);
    }
    if (parts.closed) throw new HttpError('draining', 'shutting down', { headers: { 'retry-after': '1' } });
    if (streams.open >= MAX_STREAMS) throw new HttpError('overload', `${MAX_STREAMS} decision streams are open already`, { headers: { 'retry-after': '5' }, hint: 'close a console tab, or retry after Retry-After' });
    const matches = (e: DecisionEvent) =>
      (want.verdict.length === 0 || want.verdict.includes(e.verdict)) &&
      (want.tool.length === 0 || want.tool.includes(e.tool_name)) &&
      (want.reason.length === 0 || e.reason_codes.some((r) => want.reason.includes(r))) &&
      (want.identity.length === 0 || want.identity.includes(e.identity));
    const res = ex.res;
    ex.status = 200;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no', 'x-ward-exit-code': '0' });
    res.socket?.setNoDelay(true);
    const send = (text: string) => {
      if (!res.writableEnded) res.write(text);
    };
    send(': ward decision feed\nretry: 1000\n\n');
    const onDecision = (e: DecisionEvent) => {
      if (matches(e)) send(`event: decision\nid: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`);
    };
    const onApproval = (e: InboxEvent) => {
      send(`event: approval\ndata: ${JSON.stringify({ kind: e.kind, id: e.entry.id, status: e.entry.status, tool_name: e.entry.tool_name, identity: e.entry.identity, requested_at: e.entry.requested_at, trace_id: e.entry.trace_id, approvals: e.entry.approvals.length, required_approvals: e.entry.required_approvals })}\n\n`);
    };
    if (since !== undefined) for (const e of parts.feed.after(since)) onDecision(e);
    const offDecision = parts.feed.subscribe(onDecision);
    const offApproval = parts.inbox.subscribe(onApproval);
    const heartbeat = setInterval(() => send(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    streams.open++;
    try {
      await new Promise<void>((resolve) => {
        const offClose = parts.onClose(done);
        res.on('close', done);
        function done() {
          offClose();
          resolve();
        }
      });
    } finally {
      streams.open--;
      clearInterval(heartbeat);
    }
    offDecision();
    offApproval();
    if (!res.writableEnded) res.end();
  };
};

/** `GET /v1/decisions/{trace_id}`: the stored trace, its signature, its rule and what its codes mean. */
const detail =
  (parts: ConsoleParts): Handler =>
  async (ctx, ex, params) => {
    const wanted = params['id'] ?? '';
    const problem = idProblem(wanted, LOOKUP_PATTERN);
    if (problem) throw badRequest(`invalid trace id ${quoteId(wanted)}: ${problem}`);
    await ctx.sink.caughtUp(); // read-your-writes: a decision just answered is found
    const found = await ctx.store.resolve(wanted, 'trace');
    if (found.length === 0) throw new HttpError('not_found', `no decision with trace id ${wanted} in the store`);
    const entry = newest(found);
    const trace = JSON.parse((await ctx.store.read(entry)).toString('utf8')) as JsonObject;
    const v = verifyTraceRecord(trace as JsonValue, ctx.verifyKeys);
    const traceId = String(trace['trace_id'] ?? entry.id);
    const codes = Array.isArray(trace['reason_codes']) ? (trace['reason_codes'] as string[]) : (entry.reason_codes ?? []);
    const packs = [
      ...(await ctx.store.list({ kind: 'pack', ref: traceId, limit: 20 })),
      ...(typeof trace['run_id'] === 'string' && trace['run_id'] ? await ctx.store.list({ kind: 'runpack', run_id: trace['run_id'], limit: 20 }) : []),
    ].map((p) => ({ kind: p.kind, id: p.id, time: p.time, href: `/v1/packs/${p.id}` }));
    const live = parts.feed.find(traceId);
    const tokenRef = typeof trace['approval_token_ref'] === 'string' ? trace['approval_token_ref'].split(',').filter(Boolean) : [];
    const approvals = parts.inbox.approvalsOf(traceId, tokenRef);
    reply(ex, 200, {
      ok: true,
      trace_id: traceId,
      entry,
      trace,
      signature: { status: v.signature_status, key_id: v.key_id, ...(v.error ? { error: v.error } : {}) },
      verdict: v.verdict || String(trace['verdict'] ?? ''),
      matched_rule: String(trace['matched_rule'] ?? live?.matched_rule ?? ''),
      reason_codes: codes.map((code) => ({ code, meaning: describeReasonCode(code) ?? 'not in the registry (docs/reason-codes.md)', violation: REASON_CODES[code]?.violation ?? '', effect: REASON_CODES[code]?.effect ?? '' })),
      ...(live ? { identity: live.identity, agent_id: live.agent_id } : {}),
      // Given in this daemon's inbox since it started (the reason is also signed in each token).
      approvals,
      packs,
    });
  };

export function decisionRoutes(parts: ConsoleParts): Route[] {
  return [
    { name: 'decisions.stream', segments: ['v1', 'decisions', 'stream'], methods: { GET: stream(parts) }, console: true },
    { name: 'decisions.get', segments: ['v1', 'decisions', ':id'], methods: { GET: detail(parts) }, console: true },
  ];
}
