import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { isWardError } from '../errors.js';
import { diffPacks, inspectPack, PACK_OUTPUT_SCHEMA } from '../pack/index.js';
import { sortableTime } from '../store/level.js';
import { idProblem, LOOKUP_PATTERN, quoteId } from '../store/ids.js';
import { resolveOneEntry } from '../store/locate.js';
import { ENTRY_KINDS, isJsonKind, type EntryKind, type ListFilter, type StoreEntry } from '../store/types.js';
import { verifyTraceRecord, verifyTraceText, type TraceVerification } from '../trace/index.js';
import { openZip } from '../zip/index.js';
import { checkFields, parseEvalBody, parseJsonBody, type EvalBody } from './gate-body.js';
import { readBody, requireMediaType } from '../edge/body.js';
import { badRequest, errorResponse, HttpError } from '../edge/http-error.js';
import { sendJson, sendText } from './http.js';
import { withDeadline } from './pg-health.js';
import type { DaemonContext } from './context.js';
import type { DecisionReply } from './gate-service.js';
import { gateDecisionRecord, httpTraceCarrier } from '../telemetry/gate-record.js';

/** One request/response pair and what the request log says about it. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  id: string;
  route: string;
  status: number;
  exitCode: ExitCode;
  verdict?: string;
  errorCode?: string;
}

export type Handler = (ctx: DaemonContext, ex: Exchange, params: Record<string, string>) => Promise<void>;

export interface Route {
  name: string;
  /** Literal segments, or `:name` for a parameter. */
  segments: readonly string[];
  methods: Readonly<Record<string, Handler>>;
  /** Served without auth (liveness, readiness, public keys). */
  public?: boolean;
  /**
   * A console route (src/daemon/console): a browser session may change state here, with the CSRF
   * header; browser requests without one are refused (docs/console.md "Session and CSRF").
   */
  console?: boolean;
}

const JSON_TYPES = ['application/json'] as const;
const ZIP_TYPES = ['application/zip', 'application/octet-stream'] as const;
const PACK_SCHEMA = { schema_id: PACK_OUTPUT_SCHEMA.id, schema_version: PACK_OUTPUT_SCHEMA.version };

/** Ids in path parameters: event ids, trace ids, pack ids, prefixes and run ids. Nothing path-like (`store/ids.ts`). */
const ID = LOOKUP_PATTERN;

export function reply(ex: Exchange, status: number, value: unknown, exitCode: ExitCode = EXIT.OK): void {
  ex.status = status;
  ex.exitCode = exitCode;
  sendJson(ex.res, status, value, { 'x-ward-exit-code': String(exitCode) });
}

export async function jsonBody(ctx: DaemonContext, ex: Exchange): Promise<JsonValue> {
  requireMediaType(ex.req, JSON_TYPES);
  return parseJsonBody(await readBody(ex.req, ctx.options.maxBodyBytes));
}

/** Admission refused: more decisions wait for their traces than the sink admits (429, Retry-After). */
export function overloaded(): HttpError {
  return new HttpError('overload', 'too many decisions waiting for their traces to be written; retry shortly', {
    headers: { 'retry-after': '1' },
    hint: 'back off and retry after the Retry-After delay; raise ward serve --max-queue if this is sustained',
  });
}

// ---------------------------------------------------------------------------------------------
// Decisions

/**
 * On PostgreSQL a decision is answered within a bound whatever the database does (shared tokens and
 * limits, the trace commit): past it, 503 with Retry-After (docs/cluster.md "Frozen database").
 */
function decideBounded(ctx: DaemonContext, body: EvalBody, correlationId: string): ReturnType<DaemonContext['gate']['decide']> {
  const work = ctx.gate.decide(body, correlationId);
  return ctx.cluster ? withDeadline(work, ctx.options.postgres?.decisionTimeoutMs ?? 4500, 'decision') : work;
}

/** One span and decision-log line per answered decision (docs/observability.md); nothing when telemetry is off. */
function observe(ctx: DaemonContext, ex: Exchange, body: EvalBody, decision: DecisionReply, operation: string, correlationId: string, startedAt: number): void {
  const t = ctx.options.telemetry;
  t?.decision(gateDecisionRecord(decision.output, body.intent, operation, correlationId, t.includeTargets), httpTraceCarrier(ex.req.headers), startedAt);
}

const gateEval: Handler = async (ctx, ex) => {
  const startedAt = Date.now();
  const body = parseEvalBody(await jsonBody(ctx, ex));
  if (!ctx.sink.admit()) throw overloaded();
  const correlationId = body.correlationId ?? ex.id;
  const decision = await decideBounded(ctx, body, correlationId);
  observe(ctx, ex, body, decision, 'gate.eval', correlationId, startedAt);
  ex.verdict = decision.verdict;
  reply(ex, 200, decision.json, decision.exitCode);
};

const BATCH_FIELDS = new Set(['requests']);

const gateEvalBatch: Handler = async (ctx, ex) => {
  const startedAt = Date.now();
  const body = checkFields(await jsonBody(ctx, ex), BATCH_FIELDS, 'body');
  const items = body['requests'];
  if (!Array.isArray(items) || items.length === 0) throw badRequest('body: requests must be a non-empty array of eval requests');
  if (items.length > ctx.options.maxBatchItems) throw badRequest(`body: at most ${ctx.options.maxBatchItems} requests per batch (got ${items.length})`);
  const parsed: EvalBody[] = items.map((item, i) => parseEvalBody(item, `requests[${i}]`));
  let admitted = 0;
  while (admitted < parsed.length && ctx.sink.admit()) admitted++;
  if (admitted < parsed.length) {
    for (let i = 0; i < admitted; i++) ctx.sink.release();
    throw overloaded();
  }
  const results = await Promise.all(
    parsed.map(async (item, i) => {
      try {
        const correlationId = item.correlationId ?? `${ex.id}-${i}`;
        const d = await decideBounded(ctx, item, correlationId);
        observe(ctx, ex, item, d, 'gate.eval.batch', correlationId, startedAt);
        return { ...d.json, exit_code: d.exitCode } as JsonObject;
      } catch (err) {
        const e = errorResponse(err);
        return { ...e.body, status: e.status, exit_code: e.exitCode } as JsonObject;
      }
    }),
  );
  const verdicts = results.map((r) => r['verdict']).filter((v) => typeof v === 'string');
  if (verdicts.length > 0) ex.verdict = [...new Set(verdicts)].join(',');
  reply(ex, 200, { ok: results.every((r) => r['ok'] === true), count: results.length, results });
};

// ---------------------------------------------------------------------------------------------
// Traces

const VERIFY_FIELDS = new Set(['trace', 'traces']);

const traceVerify: Handler = async (ctx, ex) => {
  const body = checkFields(await jsonBody(ctx, ex), VERIFY_FIELDS, 'body');
  const verifyWith = (value: JsonValue): TraceVerification =>
    typeof value === 'string' ? verifyTraceText(value, ctx.verifyKeys) : verifyTraceRecord(value, ctx.verifyKeys);
  // On PostgreSQL a trace may name a key another replica registered after this one last read the
  // cluster's key set: re-read it once (rate limited) and verify again.
  const verifyOne = async (value: JsonValue): Promise<TraceVerification> => {
    const r = verifyWith(value);
    if (r.ok || !ctx.cluster || r.key_id === '' || ctx.verifyKeys.some((k) => k.keyId === r.key_id)) return r;
    return (await ctx.cluster.keys.refreshOnMiss(r.key_id)) ? verifyWith(value) : r;
  };
  const json = (r: TraceVerification) => ({ ok: r.ok, format: r.format, trace_id: r.trace_id, verdict: r.verdict, signature_status: r.signature_status, key_id: r.key_id, error: r.error });
  if ('trace' in body === 'traces' in body) throw badRequest('body: send exactly one of trace (a record) or traces (a list)');
  if ('trace' in body) {
    const r = await verifyOne(body['trace']!);
    reply(ex, 200, json(r), r.ok ? EXIT.OK : EXIT.VERIFY_FAILED);
    return;
  }
  const list = body['traces'];
  if (!Array.isArray(list) || list.length === 0) throw badRequest('body: traces must be a non-empty array');
  if (list.length > ctx.options.maxBatchItems) throw badRequest(`body: at most ${ctx.options.maxBatchItems} traces per request`);
  const results: ReturnType<typeof json>[] = [];
  for (const t of list) results.push(json(await verifyOne(t)));
  const failed = results.filter((r) => !r.ok).length;
  const ok = failed === 0;
  reply(ex, 200, { ok, results, summary: { total: results.length, verified: results.length - failed, failed } }, ok ? EXIT.OK : EXIT.VERIFY_FAILED);
};

const TRACE_QUERY = new Set(['verdict', 'tool', 'reason', 'session', 'run', 'ref', 'since', 'until', 'limit', 'order', 'cursor']);
const PACK_QUERY = new Set(['kind', 'run', 'ref', 'since', 'until', 'limit', 'order', 'cursor']);

const traceList: Handler = async (ctx, ex) => {
  const q = query(ex.req, TRACE_QUERY);
  await ctx.sink.caughtUp(); // read-your-writes: decisions already answered are listed
  await listEntries(ctx, ex, q, {
    kind: 'trace',
    verdict: q.get('verdict') ?? undefined,
    tool_name: q.get('tool') ?? undefined,
    reason_code: q.get('reason') ?? undefined,
    session_id: q.get('session') ?? undefined,
    run_id: q.get('run') ?? undefined,
    ref: q.get('ref') ?? undefined,
  });
};

const traceGet: Handler = async (ctx, ex, params) => {
  const wanted = id(params);
  await ctx.sink.caughtUp();
  const found = await ctx.store.resolve(wanted, 'trace');
  if (found.length === 0) throw new HttpError('not_found', `no trace ${params['id']} in the store`);
  const entry = newest(found);
  const body = JSON.parse((await ctx.store.read(entry)).toString('utf8')) as JsonValue;
  reply(ex, 200, { ok: true, entry, trace: body, ...(found.length > 1 ? { matches: found.length } : {}) });
};

// ---------------------------------------------------------------------------------------------
// Packs

const packList: Handler = async (ctx, ex) => {
  const q = query(ex.req, PACK_QUERY);
  const kind = q.get('kind') ?? 'pack';
  if (kind !== 'pack' && kind !== 'runpack') throw badRequest('kind must be pack or runpack');
  await listEntries(ctx, ex, q, { kind, run_id: q.get('run') ?? undefined, ref: q.get('ref') ?? undefined });
};

async function findPack(ctx: DaemonContext, ref: string): Promise<{ entry: StoreEntry; bytes: Buffer }> {
  for (const kind of ['pack', 'runpack'] as const) {
    const found = await ctx.store.resolve(ref, kind);
    if (found.length === 0) continue;
    if (found.length > 1 && !found.every((e) => e.run_id === ref)) {
      throw badRequest(`${ref} is ambiguous: ${found.map((e) => e.id).join(', ')}`, 'use a longer id prefix');
    }
    const entry = newest(found);
    return { entry, bytes: await ctx.store.read(entry) };
  }
  throw new HttpError('not_found', `no pack or runpack ${ref} in the store`);
}

const packGet: Handler = async (ctx, ex, params) => {
  const { entry, bytes } = await findPack(ctx, id(params));
  const result = inspectPack(bytes);
  reply(ex, 200, {
    ok: true,
    operation: 'inspect',
    path: `store:${entry.kind}/${entry.id}`,
    pack_id: result.pack_id,
    pack_type: result.pack_type,
    source_ref: result.source_ref,
    inspect: result,
    ...PACK_SCHEMA,
    correlation_id: ex.id,
  });
};

const packDownload: Handler = async (ctx, ex, params) => {
  const { entry, bytes } = await findPack(ctx, id(params));
  ex.status = 200;
  sendText(ex.res, 200, bytes, 'application/zip', { 'content-disposition': `attachment; filename="${entry.kind}_${entry.id}.zip"` });
};

const packUpload: Handler = async (ctx, ex) => {
  requireMediaType(ex.req, ZIP_TYPES);
  const bytes = await readBody(ex.req, ctx.options.maxPackBytes);
  let kind: EntryKind;
  try {
    kind = openZip(bytes).get('pack_manifest.json') ? 'pack' : 'runpack';
  } catch (err) {
    throw badRequest(`not a pack or runpack zip: ${(err as Error).message}`);
  }
  const put = await ctx.store.put([{ kind, bytes }]);
  if (put.conflicts.length > 0) {
    throw new HttpError('conflict', `${kind} ${put.conflicts[0]!.id} is already stored with different bytes; the stored evidence is kept`, { exitCode: EXIT.VERIFY_FAILED });
  }
  const stored = put.stored[0];
  reply(ex, stored ? 201 : 200, { ok: true, kind, stored: put.stored.length, duplicates: put.duplicates, ...(stored ? { id: stored.id, entry: stored } : {}) });
};

const DIFF_FIELDS = new Set(['left', 'right']);

const packDiff: Handler = async (ctx, ex) => {
  const body = checkFields(await jsonBody(ctx, ex), DIFF_FIELDS, 'body');
  const ref = (key: string) => {
    const v = body[key];
    if (typeof v !== 'string' || !ID.test(v)) throw badRequest(`body: ${key} must be a pack id, id prefix or run id`);
    return v;
  };
  const left = await findPack(ctx, ref('left'));
  const right = await findPack(ctx, ref('right'));
  const diff = diffPacks(left.bytes, right.bytes);
  const changed = diff.summary.changed;
  reply(ex, 200, { ok: !changed, operation: 'diff', diff: { result: diff }, ...PACK_SCHEMA, correlation_id: ex.id }, changed ? EXIT.VERIFY_FAILED : EXIT.OK);
};

// ---------------------------------------------------------------------------------------------
// Store entries of any kind (`ward store show --daemon`)

const STORE_QUERY = new Set(['kind']);
const SERVED_KINDS: readonly EntryKind[] = ['trace', 'runpack', 'pack'];

/**
 * One entry resolved exactly as `ward store show` resolves it locally (id, unique prefix, trace id,
 * run id or source ref; optionally of one kind): the same not-found and ambiguity errors. Decision
 * captures hold normalized intents and are not served.
 */
async function resolveStoreEntry(ctx: DaemonContext, ex: Exchange, params: Record<string, string>): Promise<StoreEntry> {
  const wanted = id(params);
  const kindText = query(ex.req, STORE_QUERY).get('kind') ?? undefined;
  if (kindText !== undefined && !(ENTRY_KINDS as readonly string[]).includes(kindText)) throw badRequest(`kind must be one of ${ENTRY_KINDS.join(', ')}`);
  const kind = kindText as EntryKind | undefined;
  const noCaptures = () => badRequest('decision captures are not served by the daemon; run ward store show locally', 'decision captures hold normalized intents; read them where the store lives');
  if (kind === 'capture') throw noCaptures();
  await ctx.sink.caughtUp(); // read-your-writes, as for trace queries
  const entry = await resolveOneEntry(ctx.store, wanted, kind);
  if (!SERVED_KINDS.includes(entry.kind)) throw noCaptures();
  return entry;
}

const storeEntry: Handler = async (ctx, ex, params) => {
  reply(ex, 200, { ok: true, entry: await resolveStoreEntry(ctx, ex, params) });
};

/** The stored bytes as stored: a trace file's text, a pack or runpack zip. */
const storeContent: Handler = async (ctx, ex, params) => {
  const entry = await resolveStoreEntry(ctx, ex, params);
  const bytes = await ctx.store.read(entry);
  ex.status = 200;
  sendText(ex.res, 200, bytes, isJsonKind(entry.kind) ? 'application/json' : 'application/zip', { 'x-ward-entry-kind': entry.kind, 'x-ward-entry-id': entry.id });
};

// ---------------------------------------------------------------------------------------------
// Operations

const policyGet: Handler = async (ctx, ex) => {
  reply(ex, 200, { ok: true, ...ctx.policies.status(), signing_key: ctx.keys.status() });
};

const jwks: Handler = async (ctx, ex) => {
  ex.status = 200;
  sendText(ex.res, 200, ctx.jwksText, 'application/json', { 'cache-control': 'max-age=60' });
};

const healthz: Handler = async (_ctx, ex) => {
  reply(ex, 200, { ok: true });
};

const readyz: Handler = async (ctx, ex) => {
  // On PostgreSQL the store is ready only while the database answers (probed, see pg-health.ts).
  const storeUp = ctx.cluster ? ctx.state.ready && (await ctx.cluster.health.check()) : ctx.state.ready;
  const fault = ctx.sink.storageFault;
  const ready = ctx.state.ready && !ctx.state.draining && storeUp && !fault;
  const body = {
    ok: ready,
    policy: true,
    policy_digest: ctx.policies.current.digest,
    store: storeUp,
    // A full or failing disk (docs/daemon.md "Disk full"): not ready until a write succeeds again.
    ...(fault ? { storage_fault: { errno: fault.code, source: fault.source, since: fault.since.toISOString(), error: fault.message } } : {}),
    key: true,
    draining: ctx.state.draining,
    trace_durability: ctx.sink.durable,
    ...(ctx.cluster ? { replica: ctx.cluster.replica, ...(storeUp ? {} : { store_error: ctx.cluster.health.error ?? 'unavailable' }) } : {}),
  };
  if (ready) reply(ex, 200, body);
  else {
    ex.status = 503;
    sendJson(ex.res, 503, body, { 'retry-after': '1' });
  }
};

const metrics: Handler = async (ctx, ex) => {
  ex.status = 200;
  sendText(ex.res, 200, ctx.metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
};

export const ROUTES: readonly Route[] = [
  { name: 'gate.eval', segments: ['v1', 'gate', 'eval'], methods: { POST: gateEval } },
  { name: 'gate.eval.batch', segments: ['v1', 'gate', 'eval', 'batch'], methods: { POST: gateEvalBatch } },
  { name: 'trace.verify', segments: ['v1', 'trace', 'verify'], methods: { POST: traceVerify } },
  { name: 'traces.list', segments: ['v1', 'traces'], methods: { GET: traceList } },
  { name: 'traces.get', segments: ['v1', 'traces', ':id'], methods: { GET: traceGet } },
  { name: 'packs.list', segments: ['v1', 'packs'], methods: { GET: packList, POST: packUpload } },
  { name: 'packs.diff', segments: ['v1', 'packs', 'diff'], methods: { POST: packDiff } },
  { name: 'packs.get', segments: ['v1', 'packs', ':id'], methods: { GET: packGet } },
  { name: 'packs.download', segments: ['v1', 'packs', ':id', 'download'], methods: { GET: packDownload } },
  { name: 'store.entry', segments: ['v1', 'store', ':id'], methods: { GET: storeEntry } },
  { name: 'store.content', segments: ['v1', 'store', ':id', 'content'], methods: { GET: storeContent } },
  { name: 'policy', segments: ['v1', 'policy'], methods: { GET: policyGet } },
  { name: 'jwks', segments: ['.well-known', 'jwks.json'], methods: { GET: jwks }, public: true },
  { name: 'healthz', segments: ['healthz'], methods: { GET: healthz }, public: true },
  { name: 'readyz', segments: ['readyz'], methods: { GET: readyz }, public: true },
  { name: 'metrics', segments: ['metrics'], methods: { GET: metrics } },
];


/**
 * Match the request path. Every segment is percent-decoded and checked first: `.`/`..`, slashes,
 * backslashes and NUL are refused (400) before any route sees them, so no parameter can name a
 * path outside the store. Literal routes win over parameter routes.
 */
export function matchRoute(req: IncomingMessage, routes: readonly Route[] = ROUTES): { route?: Route; params: Record<string, string> } {
  const raw = (req.url ?? '/').split('?', 1)[0]!;
  if (!raw.startsWith('/')) throw badRequest('request target must be an absolute path');
  const parts = raw.slice(1).split('/');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  const segments = parts.map((p) => {
    let s: string;
    try {
      s = decodeURIComponent(p);
    } catch {
      throw badRequest('malformed percent-encoding in path');
    }
    if (s === '.' || s === '..' || /[/\\\0]/.test(s)) throw badRequest('path segments must not be ".", ".." or contain slashes, backslashes or NUL');
    return s;
  });
  let best: { route: Route; params: Record<string, string>; literal: number } | undefined;
  for (const route of routes) {
    if (route.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let literal = 0;
    let ok = true;
    route.segments.forEach((seg, i) => {
      if (!ok) return;
      if (seg.startsWith(':')) params[seg.slice(1)] = segments[i]!;
      else if (seg === segments[i]) literal++;
      else ok = false;
    });
    if (ok && (!best || literal > best.literal)) best = { route, params, literal };
  }
  return best ? { route: best.route, params: best.params } : { params: {} };
}

function id(params: Record<string, string>): string {
  const value = params['id'] ?? '';
  const problem = idProblem(value, LOOKUP_PATTERN);
  if (problem) throw badRequest(`invalid id ${quoteId(value)}: ${problem}`);
  return value;
}

export function newest(entries: readonly StoreEntry[]): StoreEntry {
  return [...entries].sort((a, b) => (sortableTime(a.time) < sortableTime(b.time) ? 1 : sortableTime(a.time) > sortableTime(b.time) ? -1 : a.id < b.id ? 1 : -1))[0]!;
}

export function query(req: IncomingMessage, allowed: ReadonlySet<string>): URLSearchParams {
  const url = req.url ?? '';
  const q = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  for (const key of q.keys()) {
    if (!allowed.has(key)) throw badRequest(`unknown query parameter ${JSON.stringify(key)}`, `allowed: ${[...allowed].join(', ')}`);
  }
  return q;
}

interface Cursor {
  t: string;
  i: string;
}

/**
 * A page of entries, newest first unless `order=asc`. The cursor names the last entry returned
 * (time and id); the next page continues strictly after it, also among entries with equal times.
 */
async function listEntries(ctx: DaemonContext, ex: Exchange, q: URLSearchParams, base: ListFilter): Promise<void> {
  const limitText = q.get('limit') ?? '50';
  if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 1000) throw badRequest('limit must be an integer from 1 to 1000');
  const limit = Number(limitText);
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw badRequest('order must be asc or desc');
  const filter: ListFilter = { ...base, order, since: q.get('since') ?? undefined, until: q.get('until') ?? undefined };
  try {
    if (filter.since) sortableTime(filter.since);
    if (filter.until) sortableTime(filter.until);
  } catch (err) {
    throw badRequest(isWardError(err) ? `${err.message}: since and until are RFC 3339 times` : 'invalid time');
  }
  const cursorText = q.get('cursor');
  let cursor: Cursor | undefined;
  if (cursorText) {
    try {
      const value: unknown = parseJsonText(Buffer.from(cursorText, 'base64url').toString('utf8')); // strict, like every body
      if (!isJsonObject(value as JsonValue) || typeof (value as Cursor).t !== 'string' || typeof (value as Cursor).i !== 'string') throw new Error('shape');
      cursor = value as Cursor;
      sortableTime(cursor.t);
    } catch {
      throw badRequest('invalid cursor: pass next_cursor from the previous page unchanged');
    }
    if (order === 'desc') {
      const bound = nextNanosecond(cursor.t);
      if (!filter.until || sortableTime(filter.until) > sortableTime(bound)) filter.until = bound;
    } else if (!filter.since || sortableTime(filter.since) < sortableTime(cursor.t)) filter.since = cursor.t;
  }
  const after = (e: StoreEntry): boolean => {
    if (!cursor) return true;
    const t = sortableTime(e.time);
    const ct = sortableTime(cursor.t);
    if (t !== ct) return order === 'desc' ? t < ct : t > ct;
    return order === 'desc' ? e.id < cursor.i : e.id > cursor.i;
  };
  let fetch = limit + 1;
  let page: StoreEntry[];
  for (;;) {
    const raw = await ctx.store.list({ ...filter, limit: fetch });
    page = raw.filter(after);
    if (page.length > limit || raw.length < fetch) break;
    fetch *= 2; // entries sharing the cursor's time were skipped; look further
  }
  const entries = page.slice(0, limit);
  const last = entries[entries.length - 1];
  const next = page.length > limit && last ? Buffer.from(JSON.stringify({ t: last.time, i: last.id })).toString('base64url') : undefined;
  reply(ex, 200, { ok: true, count: entries.length, entries, ...(next ? { next_cursor: next } : {}) });
}

/** The RFC 3339 time one nanosecond later (an exclusive bound that still includes `time`). */
function nextNanosecond(time: string): string {
  const s = sortableTime(time); // YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ
  const nanos = Number(s.slice(20, 29)) + 1;
  if (nanos < 1e9) return `${s.slice(0, 20)}${String(nanos).padStart(9, '0')}Z`;
  const next = new Date(Date.parse(`${s.slice(0, 19)}Z`) + 1000).toISOString().slice(0, 19);
  return `${next}.000000000Z`;
}
