import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../../canon/index.js';
import type { DecisionRequest, DecisionResult } from './evaluate.js';
import type { CallTarget, ToolCall } from './tool-call.js';
import { bareToolName, operationFromToolName } from '../../intent/discover.js';

// The Claude Code hook protocol: its events, the reply for each verdict and for a failure, and how
// its input is read. `ward hook claude-code` (cli/commands/hook.ts) runs it.

/** The Claude Code events the hook answers, each with its own reply shape. */
export const HOOK_EVENTS = ['PreToolUse', 'PermissionRequest', 'PostToolUse'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export type PermissionDecision = 'allow' | 'deny' | 'ask';

/** The PreToolUse reply (kept for callers of the earlier API). */
export interface HookOutput {
  hookSpecificOutput: {
    hookEventName: 'PreToolUse';
    permissionDecision: PermissionDecision;
    permissionDecisionReason: string;
  };
}

/**
 * What the hook process does: print `stdout` (one JSON line) and exit 0, or print nothing on stdout,
 * `stderr` as the reason, and exit 2. Claude Code acts on the JSON only on exit 0, blocks on exit 2
 * (stderr goes to Claude), and treats every other exit as a non-blocking error — the tool runs.
 */
export interface HookReply {
  exitCode: 0 | 2;
  stdout?: JsonObject;
  stderr?: string;
}

/** The PreToolUse reply Claude Code reads from stdout. */
export function hookOutput(permissionDecision: PermissionDecision, permissionDecisionReason: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason } };
}

/** Verdict → PreToolUse permission: allow → allow, block → deny, require_approval → ask, dry_run → deny. */
export function hookOutputFor(result: DecisionResult): HookOutput {
  return replyForVerdict('PreToolUse', result).stdout as unknown as HookOutput;
}

function describe(result: DecisionResult): { reasons: string; trace: string } {
  return {
    reasons: result.reasonCodes.length > 0 ? result.reasonCodes.join(', ') : 'none',
    trace: `trace ${String(result.output['trace_id'])}`,
  };
}

/**
 * The reply for an evaluated call, in the shape of its event:
 *
 * | verdict | PreToolUse | PermissionRequest | PostToolUse (the tool already ran) |
 * |---|---|---|---|
 * | allow | `permissionDecision: allow` | `decision.behavior: allow` | `{}` (no decision) |
 * | require_approval | `ask` | no decision: Claude Code shows you its dialog; `systemMessage` says why | no decision; `additionalContext` says approval was required |
 * | block, dry_run | `deny` + reason | `decision.behavior: deny` + `message` | `decision: block` + `reason` |
 */
export function replyForVerdict(event: HookEvent, result: DecisionResult): HookReply {
  const { reasons, trace } = describe(result);
  const blocked =
    result.verdict === 'dry_run'
      ? `Ward: dry run — the policy evaluates this call as dry_run, so it is not executed (${reasons}); ${trace}`
      : `Ward: blocked by policy (${reasons}). Do not retry this call unchanged; ${trace}`;
  const approval = `Ward: approval required by policy (${reasons}); ask the user before running this tool call; ${trace}, intent ${result.intentDigest}`;
  switch (event) {
    case 'PreToolUse':
      if (result.verdict === 'allow') return ok(preToolUse('allow', `Ward: allowed by policy (${reasons}); ${trace}`));
      if (result.verdict === 'require_approval') return ok(preToolUse('ask', approval));
      return ok(preToolUse('deny', blocked));
    case 'PermissionRequest':
      if (result.verdict === 'allow') return ok({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
      if (result.verdict === 'require_approval') return ok({ systemMessage: approval });
      return ok(permissionDeny(blocked));
    case 'PostToolUse':
      if (result.verdict === 'allow') return ok({});
      if (result.verdict === 'require_approval') {
        return ok({
          hookSpecificOutput: {
            hookEventName: 'PostToolUse',
            additionalContext: `Ward: this call needs approval under the policy (${reasons}); it has already run. If the user did not approve it, tell them; ${trace}`,
          },
        });
      }
      return ok(postToolUseBlock(`${blocked.replace('. Do not retry this call unchanged', '')}. The tool has already run: tell the user, and do not repeat it`));
  }
}

/**
 * The reply when the hook cannot evaluate the call: a deny in the event's shape, with the reason for
 * Claude and a `systemMessage` for the user; when the event is not known (unreadable or invalid
 * input, an event Ward does not answer), exit 2 with the reason on stderr, which blocks in every
 * event that can block.
 */
export function failReply(event: HookEvent | undefined, message: string): HookReply {
  const stderr = `ward hook claude-code: ${message}\n`;
  const reason = `Ward: denied because the hook could not evaluate this call (fail closed): ${message}`;
  const systemMessage = `Ward hook failed closed: ${message}`;
  switch (event) {
    case undefined:
      return { exitCode: 2, stderr: `${reason}\n` };
    case 'PreToolUse':
      return { exitCode: 0, stdout: { ...preToolUse('deny', reason), systemMessage }, stderr };
    case 'PermissionRequest':
      return { exitCode: 0, stdout: { ...permissionDeny(reason), systemMessage }, stderr };
    case 'PostToolUse':
      return { exitCode: 0, stdout: { ...postToolUseBlock(reason), systemMessage }, stderr };
  }
}

const ok = (stdout: JsonObject): HookReply => ({ exitCode: 0, stdout });

function preToolUse(permissionDecision: PermissionDecision, permissionDecisionReason: string): JsonObject {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason } };
}

function permissionDeny(message: string): JsonObject {
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message } } };
}

function postToolUseBlock(reason: string): JsonObject {
  return { decision: 'block', reason };
}

/** The hook input as far as it could be read: the payload (a JSON object) and its event. */
export type HookInput = { ok: true; payload: JsonObject; event: HookEvent } | { ok: false; event: HookEvent | undefined; message: string };

/**
 * Read Claude Code's hook input text. An object without `hook_event_name` is taken as PreToolUse
 * (the `claude_code` payload of the decision service has no event); an event Ward does not answer,
 * or input that is not a JSON object, has no event to shape a reply for.
 */
export function parseHookInput(text: string): HookInput {
  if (text.trim() === '') return { ok: false, event: undefined, message: 'empty hook input on stdin' };
  let payload: JsonValue;
  try {
    payload = parseJsonText(text);
  } catch (err) {
    // Refused by the strict reader (a repeated key, say): still a deny, shaped for the event a
    // lenient reader finds, if it finds one.
    return { ok: false, event: lenientEvent(text), message: `malformed hook input: ${(err as Error).message}` };
  }
  if (!isJsonObject(payload)) return { ok: false, event: undefined, message: 'malformed hook input: expected a JSON object' };
  const raw = payload['hook_event_name'];
  if (raw === undefined || raw === null || raw === '') return { ok: true, payload, event: 'PreToolUse' };
  if (typeof raw !== 'string') return { ok: false, event: undefined, message: 'malformed hook input: hook_event_name must be a string' };
  if (!(HOOK_EVENTS as readonly string[]).includes(raw)) {
    return {
      ok: false,
      event: undefined,
      message: `unsupported hook event ${JSON.stringify(raw)}: register ward hook claude-code for PreToolUse (PermissionRequest and PostToolUse are answered too)`,
    };
  }
  return { ok: true, payload, event: raw as HookEvent };
}

function lenientEvent(text: string): HookEvent | undefined {
  try {
    const v: unknown = JSON.parse(text);
    const e = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)['hook_event_name'] : undefined;
    return typeof e === 'string' && (HOOK_EVENTS as readonly string[]).includes(e) ? (e as HookEvent) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One mapping for the hook and the MCP proxy (docs/integrations-claude-code.md "One policy for the
 * hook and the proxy"): an MCP tool's path targets get the operation its tool name makes obvious
 * (`write_file` → write), as the proxy gives them, and command targets are `proc.exec` whatever
 * the tool is called. The reference's `claude_code` adapter leaves both unset; the decision service
 * keeps that, the hook adds them.
 */
export function alignMcpToolTargets(call: ToolCall): void {
  // The operation the gate's discovery gives the same values (intent/discover.ts), so a declared
  // target and a discovered one agree, as the proxy's targets do.
  const operation = /^tool\.mcp__.+?__./.test(call.name) ? operationFromToolName(bareToolName(call.name)) : '';
  // The reference's adapter reads `prompt`/`description` as a delegation target for every tool;
  // only Task delegates. WebFetch's `prompt` says what to look for in the page: free text, not a
  // target of unknown class that a fail-closed policy would refuse.
  if (call.name !== 'tool.delegate') call.targets = call.targets.filter((t) => !(t.kind === 'other' && t.operation === 'delegate'));
  for (const t of call.targets as (CallTarget & { endpoint_class?: string })[]) {
    if (t.kind === 'path' && t.operation === '' && operation !== '') t.operation = operation;
    if (t.kind === 'other' && t.operation === 'execute') t.endpoint_class = 'proc.exec';
  }
}

/** The provenance of a hook call's arguments when nothing says otherwise: the MCP proxy's default. */
export const DEFAULT_ARG_SOURCE = 'tool_output';

/** How the host running the hook describes the agent, beside what the event itself says. */
export interface HookCallContext {
  identity?: string | undefined;
  riskClass?: string | undefined;
  /** Provenance of the model's arguments (`--arg-source`); default `tool_output`, as the MCP proxy's. */
  argSource?: string | undefined;
  /** The workspace when the event has no `cwd` (the CLI hook's own directory; none on the daemon). */
  defaultWorkspace?: string | undefined;
}

/**
 * The decision request for one Claude Code event: the same for `ward hook claude-code` and for
 * `POST /v1/hooks/claude-code` on the daemon, so both decide a call the same way. The workspace is
 * the session's `cwd` from the event; without one (and no default), relative paths are not evaluable.
 */
export function claudeCodeHookRequest(payload: JsonObject, context: HookCallContext): DecisionRequest {
  return { payload, adapter: 'claude_code', enrichCall: (call) => enrichHookCall(call, payload, context, 'claude-code') };
}

/**
 * What every host's hook adds to a decoded call, so that hosts decide alike: identity (default the
 * host's name), the workspace from the event's `cwd`, the MCP proxy's targets and the default
 * provenance of the model's arguments.
 */
export function enrichHookCall(call: ToolCall, payload: JsonObject, context: HookCallContext, defaultIdentity: string): void {
  const hookCwd = typeof payload['cwd'] === 'string' ? payload['cwd'].trim() : '';
  call.context.identity = (context.identity ?? '').trim() || defaultIdentity;
  call.context.workspace = hookCwd || context.defaultWorkspace || '';
  if (context.riskClass) call.context.risk_class = context.riskClass;
  alignMcpToolTargets(call);
  // The host does not say who wrote an argument: the model did, possibly steered by earlier tool
  // output. Every argument gets the provenance the MCP proxy gives it by default, so a policy's
  // fail-closed `arg_provenance` check is met and all hosts decide alike.
  if (call.argProvenance.length === 0) {
    call.argProvenance = Object.keys(call.args).map((key) => ({ arg_path: `$.${key}`, source: context.argSource || DEFAULT_ARG_SOURCE }));
  }
}

/**
 * A reply as an HTTP hook's response body. Claude Code reads the same JSON from an HTTP hook as
 * from a command hook's stdout; what a command hook says with exit 2 (a failure before any event
 * could be read) becomes the generic blocking answer, `{"decision": "block", "reason": …}`.
 */
export function httpHookBody(reply: HookReply): JsonObject {
  return reply.stdout ?? { decision: 'block', reason: reply.stderr?.trim() || 'Ward: the hook request could not be decided' };
}

