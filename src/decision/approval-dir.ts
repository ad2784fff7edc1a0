import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStrictJson, type JsonObject } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { TokenLedger } from '../state/token-ledger.js';
import type { ParsedToken } from '../tokens/index.js';

/**
 * The approval directory (`<state>/approvals`): `ward approve --out <dir>/…` drops a token there
 * and the next identical call finds it. Hosts that read it: the MCP proxy, the SDK and the daemon's
 * console. A file that is not strict JSON (a duplicate key, a half-written file) is skipped, never
 * used. With `callDigest`, a token bound to the call (`call_digest`, docs/approvals.md "Call or
 * session") is found from another session too; the decision still judges it.
 */
export function approvalTokensInDir(dir: string, intentDigest: string, callDigest?: string): (ParsedToken & { value: JsonObject })[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: (ParsedToken & { value: JsonObject })[] = [];
  for (const name of names.sort()) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    const path = join(dir, name);
    let value: unknown;
    try {
      value = parseStrictJson(readFileSync(path, 'utf8'));
    } catch {
      continue;
    }
    const v = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    if (v && (v['intent_digest'] === intentDigest || (callDigest !== undefined && callDigest !== '' && v['call_digest'] === callDigest))) {
      out.push({ source: path, value: value as JsonObject });
    }
  }
  return out;
}

export interface WaitForTokenOptions {
  /** Give up after this long (rejects with a `WardError`). Default: wait forever. */
  timeoutMs?: number;
  /** Stop waiting when aborted. */
  signal?: AbortSignal;
  /** How often the directory is read. Default 250 ms. */
  pollMs?: number;
}

export interface ApprovalTokenFile {
  path: string;
  tokenId: string;
  token: JsonObject;
}

/**
 * Resolves with the first token in `dir` for this intent and policy that no decision has used
 * yet (one use: a consumed token is not what anyone is waiting for). It does not judge the token:
 * the next decision does (signature, scope, expiry), exactly as for any other token.
 */
export async function waitForApprovalToken(
  dir: string,
  binding: { intentDigest: string; policyDigest: string },
  ledger: TokenLedger | undefined,
  options: WaitForTokenOptions = {},
): Promise<ApprovalTokenFile> {
  const poll = Math.max(10, options.pollMs ?? 250);
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  for (;;) {
    if (options.signal?.aborted) {
      throw new WardError(ERROR_CODES.USAGE, `stopped waiting for an approval of intent ${binding.intentDigest}`, { cause: options.signal.reason });
    }
    for (const t of approvalTokensInDir(dir, binding.intentDigest)) {
      const id = t.value['token_id'];
      if (t.value['policy_digest'] !== binding.policyDigest || typeof id !== 'string') continue;
      if (ledger?.isConsumed('approval', id)) continue;
      return { path: t.source, tokenId: id, token: t.value };
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new WardError(ERROR_CODES.USAGE, `no approval token for intent ${binding.intentDigest} appeared in ${dir} within ${options.timeoutMs} ms`, {
        hint: 'run the approve command this request printed (a person, not the agent), then retry the call',
      });
    }
    await sleep(Math.min(poll, left), options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
