import { approvalCommand, approvalRetryNote, approvalSignerFor, approvalTokenPath } from '../../decision/approval-command.js';
import { approvalCallOf } from '../../tokens/index.js';
import type { CallDecision } from './gatekeeper.js';
import { errorResponse, resultResponse, RPC, type JsonRpcId, type JsonRpcMessage } from './jsonrpc.js';
import { shapeResult } from './protocol.js';

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

/**
 * The exact command a person runs to approve this call, verbatim from any directory: the token is
 * signed with the key the proxy verifies with (its state directory's, or its --private-key) and
 * lands where the proxy looks
 * (src/decision/approval-command.ts builds it for gate eval, the proxy and the SDK alike).
 */
/** An approval of this call may bind the call (not the session): the policy allows it and the approval step ran. */
function callBound(d: CallDecision): boolean {
  return d.approvalIntent !== undefined && d.approvalSessionBound !== true;
}

export function approveCommand(d: CallDecision, approvalDir: string): string {
  return approvalCommand({
    intentDigest: d.intentDigest,
    policyDigest: d.policyDigest,
    scope: d.approvalScope,
    callDigest: callBound(d) ? approvalCallOf(d.approvalIntent!).callDigest : undefined,
    signer: approvalSignerFor(approvalDir),
    out: approvalTokenPath(approvalDir, d.intentDigest),
  });
}

/**
 * The reply to a `tools/call` that was not forwarded: block, require_approval or dry_run. `note`
 * adds a sentence (e.g. why no inline approval happened) and `extra` fields to the `ward` object.
 *
 * The result form is valid for every client and protocol revision: `isError: true`, the text a
 * model reads (what happened and why), and the machine-readable `ward` object in `_meta`, which
 * the specification allows on every result. It has no `structuredContent`: a tool that declares an
 * `outputSchema` constrains it, and TS SDK 1.x clients validate it even on an error result
 * (`-32602 Structured content does not match the tool's output schema`), so the model would never
 * see the block. `wire.modern` (a 2026-07-28+ request) adds the `resultType: "complete"` those
 * revisions require.
 */
export function verdictReply(
  id: JsonRpcId,
  d: CallDecision,
  denyAs: DenyAs,
  approvalDir: string,
  note?: { text: string; ward?: Record<string, unknown> },
  wire: { modern?: boolean } = {},
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
        `then the identical call can be retried. ${approvalRetryNote(d.toolName, callBound(d))}`;
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
  return resultResponse(
    id,
    shapeResult(
      {
        content: [{ type: 'text', text }],
        isError: true,
        _meta: { ward },
      },
      wire.modern === true,
    ),
  );
}
