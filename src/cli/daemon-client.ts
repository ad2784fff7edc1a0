import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseJsonText, type JsonValue } from '../canon/index.js';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { StoreEntry } from '../store/types.js';
import type { CliContext } from './context.js';
import { readInputText } from './input.js';
import { correlationId, goJsonLine } from './output.js';
import { writeFileAtomic } from '../state/atomic-file.js';

/**
 * The CLI side of `ward serve`: commands given `--daemon URL` (or `WARD_DAEMON_URL`) ask a running
 * daemon instead of opening the store or loading keys themselves. `WARD_DAEMON_TOKEN` is sent as
 * the bearer token. Output and exit codes are those of the local command.
 */
export function daemonUrl(ctx: CliContext, flag: string | undefined): string | undefined {
  const url = (flag || ctx.env['WARD_DAEMON_URL'] || '').trim();
  if (url === '') return undefined;
  if (!/^https?:\/\/[^/]+\/?$/.test(url)) {
    throw new WardError(ERROR_CODES.USAGE, `invalid daemon URL ${JSON.stringify(url)}`, { hint: 'use e.g. --daemon http://127.0.0.1:7433 (scheme, host and port only)' });
  }
  return url.replace(/\/$/, '');
}

export interface DaemonReply {
  status: number;
  exitCode: ExitCode;
  json: Record<string, unknown>;
  bytes: Buffer;
}

/** One request; any error reply becomes the WardError the local command would have raised. */
export async function daemonCall(ctx: CliContext, base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<DaemonReply> {
  const token = (ctx.env['WARD_DAEMON_TOKEN'] ?? '').trim();
  // undici is loaded only when a daemon is used, so local commands do not pay for it.
  const { request } = await import('undici');
  let res;
  try {
    res = await request(base + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  } catch (err) {
    throw new WardError(ERROR_CODES.IO, `cannot reach the ward daemon at ${base}: ${(err as Error).message}`, {
      hint: 'start it with ward serve, or unset WARD_DAEMON_URL / drop --daemon to work locally',
    });
  }
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const header = Number(res.headers['x-ward-exit-code']);
  const exitCode = (Number.isInteger(header) && header >= 0 && header <= 8 ? header : res.statusCode >= 500 ? EXIT.INTERNAL : EXIT.OK) as ExitCode;
  let json: Record<string, unknown> = {};
  if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      json = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    } catch {
      json = {};
    }
  }
  if (res.statusCode >= 400) {
    const message = typeof json['error'] === 'string' ? json['error'] : `daemon answered HTTP ${res.statusCode}`;
    const hint = typeof json['hint'] === 'string' ? json['hint'] : undefined;
    const code = res.statusCode === 404 ? ERROR_CODES.STORE_NOT_FOUND : res.statusCode >= 500 || res.statusCode === 429 ? ERROR_CODES.IO : ERROR_CODES.USAGE;
    const fallback = res.statusCode === 401 ? EXIT.INVALID_INPUT : res.statusCode >= 500 || res.statusCode === 429 ? EXIT.INTERNAL : EXIT.INVALID_INPUT;
    throw new WardError(code, res.statusCode === 401 ? `${message} (set WARD_DAEMON_TOKEN)` : message, {
      exitCode: Number.isInteger(header) ? exitCode : fallback,
      ...(hint ? { hint } : {}),
    });
  }
  return { status: res.statusCode, exitCode, json, bytes };
}

/** Print a daemon reply as the local command prints its JSON: this invocation's correlation id. */
export function printDaemonJson(ctx: CliContext, json: Record<string, unknown>): void {
  ctx.stdout(goJsonLine({ ...json, correlation_id: correlationId(ctx.argv) }) + '\n');
}

// ---------------------------------------------------------------------------------------------
// gate eval

export interface GateEvalOverDaemon {
  intent: string;
  contextEnvelope?: string | undefined;
  approvalToken?: string | undefined;
  approvalTokenChain?: string | undefined;
  delegationToken?: string | undefined;
  delegationTokenChain?: string | undefined;
  evaluationTime?: string | undefined;
  simulate?: boolean | undefined;
  explain?: boolean | undefined;
}

/** `gate eval --daemon`: the intent, envelope and token files are read here and sent as JSON. */
export async function gateEvalOverDaemon(ctx: CliContext, base: string, flags: GateEvalOverDaemon): Promise<DaemonReply> {
  const intent = parseIntent(await readInputText(ctx, flags.intent, 'intent'));
  const tokens = (single: string | undefined, chain: string | undefined) => {
    const paths = new Set<string>();
    for (const p of [single ?? '', ...(chain ?? '').split(',')]) if (p.trim() !== '') paths.add(p.trim());
    return [...paths].sort().map((p) => {
      try {
        return readFileSync(resolve(ctx.cwd, p), 'utf8');
      } catch (err) {
        return `unreadable token file ${p}: ${(err as Error).message}`; // judged as an invalid token, as locally
      }
    });
  };
  const approvals = tokens(flags.approvalToken, flags.approvalTokenChain);
  const delegations = tokens(flags.delegationToken, flags.delegationTokenChain);
  const body: Record<string, unknown> = { intent, correlation_id: correlationId(ctx.argv) };
  if (flags.contextEnvelope) body['context_envelope'] = await readInputText(ctx, flags.contextEnvelope, 'context envelope');
  if (approvals.length) body['approval_tokens'] = approvals;
  if (delegations.length) body['delegation_tokens'] = delegations;
  if (flags.evaluationTime) body['evaluation_time'] = flags.evaluationTime;
  if (flags.simulate) body['simulate'] = true;
  if (flags.explain) body['explain'] = true;
  return daemonCall(ctx, base, 'POST', '/v1/gate/eval', body);
}

function parseIntent(text: string): JsonValue {
  try {
    return parseJsonText(text);
  } catch (err) {
    throw new WardError(ERROR_CODES.INTENT_PARSE, `parse intent json: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// store list | show

export interface StoreListOverDaemon {
  kind?: string | undefined;
  run?: string | undefined;
  session?: string | undefined;
  tool?: string | undefined;
  verdict?: string | undefined;
  reason?: string | undefined;
  ref?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  limit?: string | undefined;
  order?: string | undefined;
}

/** Entries from `/v1/traces` and `/v1/packs` (packs and runpacks), merged in the requested order. */
export async function storeListOverDaemon(ctx: CliContext, base: string, f: StoreListOverDaemon): Promise<Record<string, unknown>[]> {
  const limit = Math.min(Number(f.limit ?? 50), 1000);
  const common: [string, string | undefined][] = [['since', f.since], ['until', f.until], ['order', f.order], ['limit', String(limit)], ['run', f.run], ['ref', f.ref]];
  const traceOnly = [f.session, f.tool, f.verdict, f.reason].some((v) => v !== undefined);
  const kinds = f.kind ? [f.kind] : traceOnly ? ['trace'] : ['trace', 'pack', 'runpack'];
  const lists: Record<string, unknown>[][] = [];
  for (const kind of kinds) {
    if (kind === 'capture') throw new WardError(ERROR_CODES.USAGE, 'decision captures are not served by the daemon; run store list --kind capture locally');
    const params =
      kind === 'trace'
        ? [...common, ['session', f.session], ['tool', f.tool], ['verdict', f.verdict], ['reason', f.reason]]
        : [...common, ['kind', kind]];
    const q = new URLSearchParams(params.filter((p): p is [string, string] => p[1] !== undefined)).toString();
    const reply = await daemonCall(ctx, base, 'GET', `${kind === 'trace' ? '/v1/traces' : '/v1/packs'}?${q}`);
    lists.push(reply.json['entries'] as Record<string, unknown>[]);
  }
  const merged = lists.flat().sort((a, b) => (String(a['time']) < String(b['time']) ? -1 : String(a['time']) > String(b['time']) ? 1 : 0));
  if (f.order !== 'asc') merged.reverse();
  return merged.slice(0, limit);
}

/**
 * The entry `store show` names, and its stored bytes, from the daemon: it resolves the id as the
 * local store would (`GET /v1/store/{id}`), then serves that entry's bytes
 * (`GET /v1/store/{id}/content`), so the command shows it exactly as it does locally.
 */
export async function storeEntryOverDaemon(ctx: CliContext, base: string, id: string, kind?: string): Promise<{ entry: StoreEntry; bytes: Buffer }> {
  const resolved = await daemonCall(ctx, base, 'GET', `/v1/store/${encodeURIComponent(id)}${kind ? `?kind=${encodeURIComponent(kind)}` : ''}`);
  const entry = resolved.json['entry'] as StoreEntry;
  const content = await daemonCall(ctx, base, 'GET', `/v1/store/${encodeURIComponent(entry.id)}/content?kind=${encodeURIComponent(entry.kind)}`);
  return { entry, bytes: content.bytes };
}

// ---------------------------------------------------------------------------------------------
// trace verify

const TRACE_FILE = /^(?:trace_.*\.json|.*\.jws|.*\.dsse\.json)$/;

/** Verify local trace files (or stdin) against the daemon's key set (sent as text: strict parsing, JWS and DSSE as locally). */
export async function traceVerifyOverDaemon(ctx: CliContext, base: string, path: string): Promise<{ single: boolean; results: Record<string, unknown>[]; dir: string }> {
  const send = async (items: { path: string; text: string }[]) => {
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < items.length; i += 256) {
      const chunk = items.slice(i, i + 256);
      const reply = await daemonCall(ctx, base, 'POST', '/v1/trace/verify', { traces: chunk.map((c) => c.text) });
      (reply.json['results'] as Record<string, unknown>[]).forEach((r, j) => out.push({ ...r, path: chunk[j]!.path }));
    }
    return out;
  };
  if (path === '-') return { single: true, results: await send([{ path: '-', text: await ctx.readStdin() }]), dir: '-' };
  const full = resolve(ctx.cwd, path);
  let isDir: boolean;
  try {
    isDir = statSync(full).isDirectory();
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `read trace ${full}: ${(err as Error).message}`);
  }
  if (!isDir) return { single: true, results: await send([{ path, text: readFileSync(full, 'utf8') }]), dir: full };
  const files = readdirSync(full, { withFileTypes: true })
    .filter((e) => e.isFile() && TRACE_FILE.test(e.name))
    .map((e) => e.name)
    .sort();
  return { single: false, results: files.length ? await send(files.map((name) => ({ path: join(full, name), text: readFileSync(join(full, name), 'utf8') }))) : [], dir: full };
}

// ---------------------------------------------------------------------------------------------
// pack inspect | diff

export function isLocalArtifact(ctx: CliContext, ref: string): boolean {
  if (/[\\/]/.test(ref) || ref.endsWith('.zip')) return true;
  try {
    statSync(resolve(ctx.cwd, ref));
    return true;
  } catch {
    return false;
  }
}

export async function packInspectOverDaemon(ctx: CliContext, base: string, ref: string): Promise<DaemonReply> {
  return daemonCall(ctx, base, 'GET', `/v1/packs/${encodeURIComponent(ref)}`);
}

export async function packDiffOverDaemon(ctx: CliContext, base: string, left: string, right: string, output?: string): Promise<DaemonReply> {
  const reply = await daemonCall(ctx, base, 'POST', '/v1/packs/diff', { left, right });
  const result = (reply.json['diff'] as { result: unknown } | undefined)?.result;
  if (output) writeFileAtomic(resolve(ctx.cwd, output), JSON.stringify(result), 0o600);
  return reply;
}
