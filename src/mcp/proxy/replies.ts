import { join } from 'node:path';
import type { CallDecision } from './gatekeeper.js';
import { errorResponse, resultResponse, RPC, type JsonRpcId, type JsonRpcMessage } from './jsonrpc.js';

export type DenyAs = 'result' | 'error';

/** The `ward` object of a reply that was not forwarded (mcp.md "Verdicts on the wire"). */
export function wardObject(d: CallDecision, extra?: Record<string, unknown>): Record<string, unknown> {
  return {
    verdict: d.verdict,
    reason_codes: d.reasonCodes,
    violations: d.violations,
    trace_id: d.traceId,
    intent_digest: d.intentDigest,
    policy_digest: d.policyDigest,
    ...extra,
  };
}

/** POSIX shell quoting, only when needed. */
function sh(arg: string): string {
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The exact command a person runs to approve this call; the token lands where the proxy looks. */
export function approveCommand(d: CallDecision, approvalDir: string): string {
  return [
    'ward',
    'approve',
    '--intent-digest',
    d.intentDigest,
    '--policy-digest',
    d.policyDigest,
    '--ttl',
    '1h',
    '--scope',
    d.approvalScope.join(','),
    '--approver',
    '<your-name>',
    '--reason-code',
    '<why>',
    '--out',
    sh(join(approvalDir, `approval_${d.intentDigest.slice(0, 16)}.json`)),
  ].join(' ');
}

/**
 * The reply to a `tools/call` that was not forwarded: block, require_approval or dry_run. `note`
 * adds a sentence (e.g. why no inline approval happened) and `extra` fields to the `ward` object.
 */
export function verdictReply(
  id: JsonRpcId,
  d: CallDecision,
  denyAs: DenyAs,
  approvalDir: string,
  note?: { text: string; ward?: Record<string, unknown> },
): JsonRpcMessage {
  const codes = d.reasonCodes.length ? d.reasonCodes.join(', ') : 'no reason given';
  let text: string;
  let ward: Record<string, unknown>;
  switch (d.verdict) {
    case 'require_approval': {
      const command = approveCommand(d, approvalDir);
      ward = wardObject(d, { approve_command: command, approval_dir: approvalDir });
      text =
        `Approval required by policy: ${codes}. This call was not run. ` +
        `A person (not the agent) can approve exactly this call with:\n  ${command}\n` +
        `then the identical call can be retried.`;
      break;
    }
    case 'dry_run':
      ward = wardObject(d);
      text = `Dry run by policy: ${codes}. The call was evaluated but not run.`;
      break;
    default:
      ward = wardObject(d);
      text = `Blocked by policy: ${codes}. Do not retry this call unchanged.`;
  }
  if (note) {
    if (note.text) text += `\n${note.text}`;
    if (note.ward) ward = { ...ward, ...note.ward };
  }
  if (denyAs === 'error') return errorResponse(id, RPC.DENIED, text, ward);
  return resultResponse(id, {
    content: [{ type: 'text', text }],
    isError: true,
    structuredContent: { ward },
    _meta: { ward },
  });
}
