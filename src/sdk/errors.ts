import { EXIT } from '../contract/exit-codes.js';
import { describeReasonCode } from '../gate/reason-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { Verdict } from '../policy/types.js';
import type { ApprovalRequest } from './approval-request.js';

/** What a refused tool call carries: enough to explain it and to find its signed trace. */
export interface BlockedDecision {
  verdict: Exclude<Verdict, 'allow'>;
  reasonCodes: readonly string[];
  violations: readonly string[];
  toolName: string;
  traceId: string;
  tracePath: string;
  intentDigest: string;
  policyDigest: string;
  /** On `require_approval`: the approve command and a way to wait for the token. */
  approval?: ApprovalRequest;
}

/**
 * Thrown by a guarded tool when Ward did not allow the call (`block`, `require_approval` or
 * `dry_run`): the tool did not run. `code` is `ERR_TOOL_BLOCKED`; `exitCode` is the gate's
 * (3 for block, 4 for approval required, 0 for dry_run).
 */
export class WardBlockedError extends WardError {
  readonly verdict: BlockedDecision['verdict'];
  readonly reasonCodes: readonly string[];
  readonly violations: readonly string[];
  readonly toolName: string;
  readonly traceId: string;
  readonly tracePath: string;
  readonly intentDigest: string;
  readonly policyDigest: string;
  /** On `require_approval`: `approval.command` for a person to run, `approval.waitForToken()`. */
  readonly approval: ApprovalRequest | undefined;

  constructor(decision: BlockedDecision) {
    const reasons = decision.reasonCodes.length ? decision.reasonCodes.join(', ') : 'no reason codes';
    super(ERROR_CODES.TOOL_BLOCKED, `ward: ${decision.toolName} not run (verdict ${decision.verdict}: ${reasons})`, {
      exitCode: decision.verdict === 'block' ? EXIT.BLOCKED : decision.verdict === 'require_approval' ? EXIT.APPROVAL_REQUIRED : EXIT.OK,
      hint: hintFor(decision),
      details: {
        verdict: decision.verdict,
        reason_codes: [...decision.reasonCodes],
        trace_id: decision.traceId,
        intent_digest: decision.intentDigest,
      },
    });
    this.name = 'WardBlockedError';
    this.verdict = decision.verdict;
    this.reasonCodes = decision.reasonCodes;
    this.violations = decision.violations;
    this.toolName = decision.toolName;
    this.traceId = decision.traceId;
    this.tracePath = decision.tracePath;
    this.intentDigest = decision.intentDigest;
    this.policyDigest = decision.policyDigest;
    this.approval = decision.approval;
  }
}

function hintFor(d: BlockedDecision): string {
  if (d.verdict === 'require_approval') {
    if (d.approval) return `a person approves exactly this call with: ${d.approval.command} — then retry it; the decision is in ${d.tracePath}`;
    return `an approver can mint a token for intent ${d.intentDigest}: ward approve --help; the decision is in ${d.tracePath}`;
  }
  if (d.verdict === 'dry_run') return `the policy only allows a dry run (plan phase) of ${d.toolName}; see ${d.tracePath}`;
  return `${explainReasons(d.reasonCodes)}; the signed trace is ${d.tracePath} (every code: REASON_CODES exported by ward)`;
}

/**
 * The codes with their meanings from the registry, so a consumer project needs no docs of Ward's
 * to read why a call was not run. Codes a policy defines itself are named as such.
 */
function explainReasons(codes: readonly string[]): string {
  if (codes.length === 0) return 'no reason codes';
  return codes.map((code) => `${code}: ${describeReasonCode(code) ?? 'a code set by the policy'}`).join('; ');
}

export function isWardBlockedError(value: unknown): value is WardBlockedError {
  return value instanceof WardBlockedError;
}

/** What agent frameworks tell a model when a tool throws something other than Ward's refusal. */
const GENERIC_TOOL_ERROR = 'An error occurred while running the tool. Please try again.';

/**
 * The text a model should read when a guarded tool was not run: the verdict and what each reason
 * code means, and what it may do next. Any other error gets the frameworks' usual generic line:
 * an exception's text can hold paths or secrets the model should not see. Meant for a framework's
 * tool-error hook, e.g. `@openai/agents` `tool({ …, errorFunction: (_ctx, err) => modelToolError(err) })`,
 * whose default sentence would otherwise hide why the call was refused.
 *
 * The approve command is left out on purpose: approving is a person's act, and a model with a
 * shell tool must not be handed the command that approves its own call.
 */
export function modelToolError(error: unknown): string {
  if (!isWardBlockedError(error)) return GENERIC_TOOL_ERROR;
  const why = explainReasons(error.reasonCodes);
  if (error.verdict === 'require_approval') {
    return `Ward did not run ${error.toolName}: it needs a person's approval (${why}). Tell the user what you wanted to do and why; once they have approved this exact call, retry it unchanged.`;
  }
  if (error.verdict === 'dry_run') {
    return `Ward did not run ${error.toolName}: the policy allows only a dry run (plan) of it (${why}). Do not retry it as is.`;
  }
  return `Ward blocked ${error.toolName} (${why}). Do not retry the same call; choose another way or tell the user it is not allowed.`;
}
