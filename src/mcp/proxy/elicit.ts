import { mkdirSync, renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isJsonObject, nowUTC, type JsonObject } from '../../canon/index.js';
import type { SigningKey } from '../../keys/index.js';
import { createUniqueFile, syncDir } from '../../state/atomic-file.js';
import { mintApprovalToken } from '../../tokens/index.js';
import { traceFileText } from '../../trace/index.js';
import { WARD_VERSION } from '../../version.js';
import type { CallDecision } from './gatekeeper.js';

/**
 * Approvals through MCP elicitation (`--approval elicit`, mcp.md "Verdicts on the wire"): when a
 * call needs approval and the client declared the elicitation capability, Ward asks the user
 * inline (`elicitation/create`, form mode). An accept becomes a signed approval token in the
 * approval directory, bound to the intent and policy digests, and the call is decided again
 * through the ordinary approval path; nothing else in the answer can loosen the decision.
 */

/** `--approval`: tokens only, also inline (MCP elicitation), or also a daemon's approvals inbox (approval-inbox.ts). */
export type ApprovalMode = 'token' | 'elicit' | 'inbox';

/** Prefix of the ids of Ward's own requests to the client (never forwarded to the server). */
export const ELICIT_ID_PREFIX = 'ward-elicit-';

/** Lifetime of an approval given inline: long enough for the re-decision, short enough to be one call's. */
export const ELICIT_TOKEN_TTL_NS = 5n * 60n * 1_000_000_000n;

/** Default wait for the user's answer (inline or in the approvals inbox) when `--call-timeout` is not set. */
export const ELICIT_DEFAULT_TIMEOUT_MS = 5 * 60 * 1000;

/** Does an `initialize` request's `capabilities` declare form-mode elicitation? (`{}` means form.) */
export function declaresFormElicitation(capabilities: unknown): boolean {
  if (!isJsonObject(capabilities)) return false;
  const e = capabilities['elicitation'];
  if (!isJsonObject(e)) return false;
  const keys = Object.keys(e);
  return keys.length === 0 || isJsonObject(e['form']) || !('url' in e);
}

/** The `elicitation/create` params asking a person to approve exactly this call. */
export function elicitParams(d: CallDecision, tool: string, method = false): JsonObject {
  const targets = d.targets.length ? d.targets.map((t) => `  - ${t}`).join('\n') : '  (none inferred from the arguments)';
  const reasons = d.reasonCodes.length ? d.reasonCodes.join(', ') : 'policy rule';
  // A method other than tools/call (`resources/read`...) is named with the intent Ward made of it.
  const what = method ? `the request "${tool}" (${d.toolName})` : `the tool call "${tool}"`;
  const message =
    `Ward: the policy requires a person's approval before ${what} runs.\n` +
    `Targets:\n${targets}\n` +
    `Reasons: ${reasons}${d.matchedRule ? ` (rule ${d.matchedRule})` : ''}\n` +
    (/^[0-9a-f]{64}$/.test(d.argsDigest) ? `Argument digest: ${d.argsDigest}\n` : '') +
    `Intent digest: ${d.intentDigest}\n` +
    `Approve only if you, not the agent, want this exact call to run. The approval is recorded as a signed ` +
    `token for this one call (valid 5 minutes).`;
  return {
    message,
    requestedSchema: {
      type: 'object',
      properties: {
        approve: { type: 'boolean', title: `Approve ${tool}`, description: 'Run this exact call once', default: false },
        reason: { type: 'string', title: 'Reason (optional)', description: 'Recorded in the approval token', maxLength: 200 },
      },
      required: ['approve'],
    },
  };
}

export type ElicitOutcome =
  | { kind: 'approved'; reason: string }
  | { kind: 'declined' | 'cancelled' | 'not_approved' | 'insufficient' | 'error' | 'timeout' | 'unsupported'; detail?: string };

/** Read the client's answer. Only `accept` with `approve: true` (or "yes") approves; anything else does not. */
export function elicitOutcome(reply: { result?: unknown; error?: { message?: string } }): ElicitOutcome {
  if (reply.error) return { kind: 'error', detail: String(reply.error.message ?? 'error') };
  const r = reply.result;
  if (!isJsonObject(r)) return { kind: 'error', detail: 'the answer has no result object' };
  const action = r['action'];
  if (action === 'decline') return { kind: 'declined' };
  if (action === 'cancel') return { kind: 'cancelled' };
  if (action !== 'accept') return { kind: 'error', detail: `unknown action ${JSON.stringify(action)}` };
  const content = r['content'];
  const approve = isJsonObject(content) ? content['approve'] : undefined;
  if (approve !== true && approve !== 'yes' && approve !== 'approve') return { kind: 'not_approved' };
  const reason = isJsonObject(content) && typeof content['reason'] === 'string' ? content['reason'].trim().slice(0, 200) : '';
  return { kind: 'approved', reason };
}

/** The sentence added to the require_approval reply when no inline approval happened. */
export function outcomeNote(o: ElicitOutcome): string {
  switch (o.kind) {
    case 'unsupported':
      return 'This client did not declare the MCP elicitation capability, so Ward could not ask for approval inline; use the command above.';
    case 'declined':
      return 'The user declined the approval request; the call was not run.';
    case 'cancelled':
      return 'The approval request was cancelled; the call was not run.';
    case 'not_approved':
      return 'The approval form was submitted without approving; the call was not run.';
    case 'insufficient':
      return 'The inline approval was recorded, but the policy still does not allow this call (for example, it needs more approvers); the call was not run.';
    case 'timeout':
      return 'No answer to the approval request in time; the call was not run.';
    case 'error':
      return `The approval request failed (${o.detail ?? 'error'}); the call was not run.`;
    default:
      return '';
  }
}

/**
 * Mint the approval a person just gave inline: signed with the proxy's signing key (the default
 * approval verify key), bound to the decision's intent and policy digests and scope, short-lived,
 * written 0600 and atomically into the approval directory. Returns the token path and id.
 */
export function writeElicitedApproval(opts: {
  decision: CallDecision;
  key: SigningKey;
  clientName: string;
  reason: string;
  approvalDir: string;
}): { path: string; tokenId: string } {
  const token = mintApprovalToken({
    intentDigest: opts.decision.intentDigest,
    policyDigest: opts.decision.policyDigest,
    ttlNs: ELICIT_TOKEN_TTL_NS,
    scope: opts.decision.approvalScope,
    approver: `mcp-elicitation:${opts.clientName || 'unknown'}`,
    reasonCode: opts.reason || 'mcp_elicitation',
    now: nowUTC(),
    producerVersion: WARD_VERSION,
    key: opts.key,
  });
  const tokenId = String(token['token_id']);
  mkdirSync(opts.approvalDir, { recursive: true, mode: 0o700 });
  const path = createUniqueFile(opts.approvalDir, [`approval_elicited_${tokenId}.json`], traceFileText(token), 0o600);
  return { path, tokenId };
}

/**
 * An inline approval is for one call: once the re-decision used it, it moves to `<dir>/used/`
 * (still evidence, no longer picked up by the next identical call).
 */
export function retireElicitedApproval(path: string, approvalDir: string): string | undefined {
  const usedDir = join(approvalDir, 'used');
  try {
    mkdirSync(usedDir, { recursive: true, mode: 0o700 });
    const to = join(usedDir, basename(path));
    renameSync(path, to);
    syncDir(usedDir);
    syncDir(approvalDir);
    return to;
  } catch {
    return undefined;
  }
}
