import { mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { hostname } from 'node:os';
import { isJsonObject, parseStrictJson, type JsonObject } from '../../canon/index.js';
import { createUniqueFile } from '../../state/atomic-file.js';
import { normalizedIntentJson } from '../../intent/digest.js';
import { traceFileText } from '../../trace/index.js';
import type { CallDecision } from './gatekeeper.js';

/**
 * Approvals through a daemon's approvals inbox (`--approval inbox`, docs/mcp-proxy.md "Approvals"):
 * a call that needs approval is reported to `ward serve` (`POST /v1/approvals/pending` with the
 * intent itself: the daemon derives what the approver sees from it), and the proxy
 * holds the call while it polls the entry. An approval comes back as the signed tokens a person
 * made in the browser; they go into the approval directory and the call is decided again, so the
 * ordinary token path (signature, binding, one-use ledger) has the last word. The daemon is only
 * a mailbox: nothing it answers can loosen a decision except a token that verifies here.
 */

/** Between polls of a pending entry: quick enough to feel live, light on the daemon. */
export const INBOX_POLL_MS = 500;
/** One request to the daemon; a slower answer counts as a failure. */
export const INBOX_REQUEST_TIMEOUT_MS = 5_000;
/** Failed polls in a row before the proxy gives up on the daemon (the call is then refused). */
export const INBOX_POLL_FAILURES = 3;

export type InboxOutcome =
  | { kind: 'approved'; id: string; tokens: JsonObject[] }
  | { kind: 'denied'; id: string; approver: string; reason: string }
  | { kind: 'timeout'; id: string }
  /** `refused`: the daemon answered and refused the report (e.g. it runs another policy). */
  | { kind: 'unreachable'; detail: string; id?: string | undefined; refused?: boolean }
  | { kind: 'cancelled' };

export interface InboxConfig {
  /** The daemon's base URL (`--approval-inbox`), e.g. http://127.0.0.1:8787. */
  url: string;
  /** Bearer token (from `--approval-inbox-token-env`); never logged, never in a URL. */
  token?: string | undefined;
  /** Names the proxy in the inbox (`reporter`). */
  reporter?: string | undefined;
  pollMs?: number | undefined;
}

/**
 * The report of one require_approval decision: the prepared intent the proxy's gate checks tokens
 * against (argument values included: the daemon derives everything it shows and everything the
 * token binds from the intent itself, and keeps the values out of the inbox unless it runs with
 * `--approval-args show`), the policy digest it was decided under, and cross-checks. Undefined
 * when the approval step did not run (nothing a token could grant).
 */
export function inboxReport(d: CallDecision, reporter: string): JsonObject | undefined {
  if (!d.approvalIntent) return undefined;
  const body: JsonObject = {
    intent: normalizedIntentJson(d.approvalIntent),
    intent_digest: d.intentDigest,
    policy_digest: d.policyDigest,
    tool_name: d.toolName,
    trace_id: d.traceId,
    requested_at: new Date().toISOString(),
    reporter: reporter.slice(0, 200),
  };
  if (/^[0-9a-f]{64}$/.test(d.argsDigest)) body['args_digest'] = d.argsDigest;
  return body;
}

export function defaultReporter(): string {
  return `ward-mcp-proxy@${hostname()}`.slice(0, 200);
}

interface Answer {
  status: number;
  json: JsonObject;
}

class InboxError extends Error {
  constructor(
    message: string,
    /** The daemon's HTTP status, when it answered. */
    readonly status = 0,
  ) {
    super(message);
  }
}

/** One JSON request to the daemon. Only 2xx answers with a JSON object count; anything else throws. */
function send(cfg: InboxConfig, method: 'GET' | 'POST', path: string, body?: JsonObject, signal?: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(path, cfg.url.endsWith('/') ? cfg.url : `${cfg.url}/`);
    } catch {
      return reject(new InboxError('the approvals inbox URL is not valid'));
    }
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (text !== undefined) headers['content-type'] = 'application/json';
    if (cfg.token) headers['authorization'] = `Bearer ${cfg.token}`;
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers, timeout: INBOX_REQUEST_TIMEOUT_MS, ...(signal ? { signal } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 4 * 1024 * 1024) return req.destroy(new InboxError('the answer is too large'));
        chunks.push(c);
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        let json: unknown;
        try {
          json = parseStrictJson(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reject(new InboxError(`HTTP ${status} without a JSON answer`));
        }
        if (!isJsonObject(json)) return reject(new InboxError(`HTTP ${status} without a JSON object`));
        if (status < 200 || status > 299) {
          const err = isJsonObject(json['error']) ? json['error'] : {};
          const code = typeof json['refusal'] === 'string' ? json['refusal'] : err['code'];
          return reject(new InboxError(`HTTP ${status}${typeof code === 'string' ? ` ${code.slice(0, 80)}` : ''}${typeof err['message'] === 'string' ? `: ${err['message'].slice(0, 300)}` : ''}`, status));
        }
        resolve({ status, json });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new InboxError(`no answer within ${INBOX_REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(text);
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    t.unref?.();
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

const APPROVAL_ID = /^apr_[0-9a-f]{16}$/;

/**
 * Report a decision and wait for a person: resolves with the approval's tokens, a denial, a
 * timeout, or `unreachable` (the daemon did not take the report, or stopped answering). `signal`
 * ends the wait early (the client cancelled the call, the session ended).
 */
export async function awaitInboxApproval(cfg: InboxConfig, d: CallDecision, timeoutMs: number, signal: AbortSignal): Promise<InboxOutcome> {
  const deadline = Date.now() + timeoutMs;
  const body = inboxReport(d, cfg.reporter ?? defaultReporter());
  if (!body) return { kind: 'unreachable', detail: 'the decision has no intent to report' };
  let reported: Answer;
  try {
    reported = await send(cfg, 'POST', 'v1/approvals/pending', body, signal);
  } catch (err) {
    if (signal.aborted) return { kind: 'cancelled' };
    const status = err instanceof InboxError ? err.status : 0;
    return { kind: 'unreachable', detail: (err as Error).message, ...(status >= 400 && status < 500 ? { refused: true } : {}) };
  }
  if (reported.json['denied'] === true) {
    const denial = isJsonObject(reported.json['denial']) ? reported.json['denial'] : {};
    return { kind: 'denied', id: '', approver: String(denial['approver_identity'] ?? ''), reason: String(denial['reason'] ?? '') };
  }
  const entry = isJsonObject(reported.json['entry']) ? reported.json['entry'] : {};
  const id = entry['id'];
  if (typeof id !== 'string' || !APPROVAL_ID.test(id)) return { kind: 'unreachable', detail: 'the inbox answered without an approval id' };
  let failures = 0;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return { kind: 'timeout', id };
    await sleep(Math.min(cfg.pollMs ?? INBOX_POLL_MS, left), signal);
    if (signal.aborted) return { kind: 'cancelled' };
    let got: Answer;
    try {
      got = await send(cfg, 'GET', `v1/approvals/${id}`, undefined, signal);
    } catch (err) {
      if (signal.aborted) return { kind: 'cancelled' };
      if (++failures >= INBOX_POLL_FAILURES) return { kind: 'unreachable', detail: (err as Error).message, id };
      continue;
    }
    failures = 0;
    const e = isJsonObject(got.json['entry']) ? got.json['entry'] : {};
    if (e['status'] === 'approved') {
      const tokens = Array.isArray(got.json['tokens']) ? got.json['tokens'].filter(isJsonObject) : [];
      return { kind: 'approved', id, tokens };
    }
    if (e['status'] === 'denied') {
      const denial = isJsonObject(e['denial']) ? e['denial'] : {};
      return { kind: 'denied', id, approver: String(denial['approver_identity'] ?? ''), reason: String(denial['reason'] ?? '') };
    }
  }
}

/**
 * Put approved tokens into the approval directory (0600, never overwriting), where the decision
 * that follows — and an identical later retry — find them. Returns the paths written.
 */
export function writeInboxTokens(tokens: readonly JsonObject[], approvalDir: string): string[] {
  mkdirSync(approvalDir, { recursive: true, mode: 0o700 });
  return tokens.map((t) => {
    const id = String(t['token_id'] ?? '').replace(/[^A-Za-z0-9_-]/g, '').slice(0, 80) || 'token';
    return createUniqueFile(approvalDir, [`approval_inbox_${id}.json`], traceFileText(t), 0o600);
  });
}

/** The sentence added to the reply when the inbox did not lead to a run. */
export function inboxNote(o: InboxOutcome, url: string): string {
  switch (o.kind) {
    case 'denied':
      return `A person${o.approver ? ` (${o.approver})` : ''} denied this call in the approvals inbox${o.reason ? `: ${o.reason}` : ''}. Do not retry it unchanged.`;
    case 'timeout':
      return `The call waited in the approvals inbox (${o.id}) and no one approved it in time; it was not run.`;
    case 'unreachable':
      return o.refused
        ? `The approvals inbox at ${safeUrl(url)} refused to enter this call (${o.detail}); the call was not run.`
        : `The approvals inbox at ${safeUrl(url)} could not be reached (${o.detail}); the call was not run.`;
    case 'approved':
      return 'The call was approved in the approvals inbox, but the policy still does not allow it (for example, the token does not verify with the approval keys, or it needs more approvers); it was not run.';
    default:
      return '';
  }
}

/** The URL without credentials or query (a token never appears in a reply or a log). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
