import type { JsonObject } from '../canon/index.js';
import { enrichHookCall, failedReason, lenientEventName, readHookEvent } from './hook-call.js';
import type { HookCallContext, HookDecision, HookDecisionRequest, HookHost, HookReply } from './host.js';
import { FieldReader, emptyCall, emptyTarget, type ToolCall } from './tool-call.js';

// Claude Code (docs/integrations-claude-code.md): its tool names, how its event becomes a tool call
// (the decision service's `claude_code` adapter), its events, the reply for each verdict and for a
// failure, and how its input is read. `ward hook claude-code` and `POST /v1/hooks/claude-code` run it.

/** The Claude Code events the hook answers, each with its own reply shape. */
export const HOOK_EVENTS = ['PreToolUse', 'PermissionRequest', 'PostToolUse'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export type PermissionDecision = 'allow' | 'deny' | 'ask';

function describe(result: HookDecision): { reasons: string; trace: string } {
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
function replyForVerdict(event: HookEvent, result: HookDecision): HookReply {
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
function failReply(event: HookEvent | undefined, message: string): HookReply {
  const stderr = `ward hook claude-code: ${message}\n`;
  const reason = failedReason(message);
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
  const read = readHookEvent(text);
  // Refused by the strict reader (a repeated key, say): still a deny, shaped for the event a
  // lenient reader finds, if it is one Ward answers.
  if (!read.ok) return { ok: false, event: answeredEvent(lenientEventName(text)), message: read.message };
  const payload = read.payload;
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

function answeredEvent(name: string | undefined): HookEvent | undefined {
  return name !== undefined && (HOOK_EVENTS as readonly string[]).includes(name) ? (name as HookEvent) : undefined;
}

/**
 * The decision request for one Claude Code event: the same for `ward hook claude-code` and for
 * `POST /v1/hooks/claude-code` on the daemon, so both decide a call the same way. The workspace is
 * the session's `cwd` from the event; without one (and no default), relative paths are not evaluable.
 */
function claudeCodeHookRequest(payload: JsonObject, context: HookCallContext): HookDecisionRequest {
  return { payload, adapter: 'claude_code', enrichCall: (call) => enrichHookCall(call, payload, context, 'claude-code') };
}

/**
 * A reply as an HTTP hook's response body. Claude Code reads the same JSON from an HTTP hook as
 * from a command hook's stdout; what a command hook says with exit 2 (a failure before any event
 * could be read) becomes the generic blocking answer, `{"decision": "block", "reason": …}`.
 */
function httpHookBody(reply: HookReply): JsonObject {
  return reply.stdout ?? { decision: 'block', reason: reply.stderr?.trim() || 'Ward: the hook request could not be decided' };
}

// --- the tool call ------------------------------------------------------------------------------------

const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  Read: 'tool.read',
  Grep: 'tool.read',
  Glob: 'tool.read',
  WebFetch: 'tool.read',
  WebSearch: 'tool.read',
  Write: 'tool.write',
  Edit: 'tool.write',
  NotebookEdit: 'tool.write',
  Bash: 'tool.exec',
  Task: 'tool.delegate',
};

/** Claude Code tool names → Ward tool names (§6.1). */
export function claudeCodeToolName(name: string): string {
  const trimmed = name.trim();
  const mapped = CLAUDE_TOOL_NAMES[trimmed];
  if (mapped) return mapped;
  if (trimmed.includes('.')) return trimmed.toLowerCase();
  return `tool.${snakeLower(trimmed)}`;
}

/** An MCP tool's own name as it stands in Claude Code's `mcp__<server>__<tool>`: characters other than letters, digits, `_` and `-` become `_`. */
export function claudeCodeMcpToolPart(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** `MultiEdit` → `multi_edit`, `mcp__github__create_issue` stays, other separators become `_`. */
function snakeLower(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .toLowerCase();
}

/** Argument keys that name targets (§6.1), in the order they are inferred. */
const CLAUDE_TARGET_KEYS: readonly { keys: readonly string[]; kind: string; operation: string }[] = [
  { keys: ['path', 'file_path', 'filepath', 'file'], kind: 'path', operation: '' },
  { keys: ['url', 'uri'], kind: 'url', operation: '' },
  { keys: ['command', 'cmd', 'script'], kind: 'other', operation: 'execute' },
  { keys: ['task', 'prompt', 'description'], kind: 'other', operation: 'delegate' },
];

/** The decision service's `claude_code` adapter (§6.1): a Claude Code hook event as a tool call. */
export function decodeClaudeCodeCall(raw: JsonObject): ToolCall {
  const f = new FieldReader('claude_code');
  const rawName = (f.string(raw, 'tool_name') || f.string(raw, 'name')).trim();
  if (rawName === '') throw f.fail('tool_name is required');
  const input = raw['tool_input'] !== undefined && raw['tool_input'] !== null ? f.argsValue(raw, 'tool_input') : f.argsValue(raw, 'input');
  const call = emptyCall(claudeCodeToolName(rawName), input);
  for (const { keys, kind, operation } of CLAUDE_TARGET_KEYS) {
    for (const key of keys) {
      const value = input[key];
      if (typeof value !== 'string' || value.trim() === '') continue;
      const target = emptyTarget(kind, value);
      target.operation = operation;
      call.targets.push(target);
    }
  }
  call.context.session_id = f.string(raw, 'session_id');
  const hookEvent = f.string(raw, 'hook_event_name');
  call.context.auth_context = { hook_event_name: hookEvent, adapter: 'claude_code' };
  return call;
}

/** Claude Code's hook protocol, as the registry (index.ts) lists it. */
export const claudeCodeHost: HookHost = {
  name: 'claude-code',
  label: 'Claude Code',
  events: HOOK_EVENTS,
  parseInput(text) {
    const input = parseHookInput(text);
    return input.ok ? { kind: 'decide', payload: input.payload, event: input.event } : { kind: 'fail', event: input.event, message: input.message };
  },
  request: claudeCodeHookRequest,
  reply: (event, result) => replyForVerdict(event as HookEvent, result),
  // Claude Code's hook answers every event it is registered for; there is no event it passes.
  pass: (event, message) => failReply(event as HookEvent, message ?? `unsupported hook event ${JSON.stringify(event)}`),
  fail: (event, message) => failReply(event as HookEvent | undefined, message),
  httpBody: httpHookBody,
};
