import type { JsonObject } from '../canon/index.js';
import { enrichHookCall, failedReason, readHookEvent, stopReason } from './hook-call.js';
import type { HookCallContext, HookDecision, HookDecisionRequest, HookHost, HookReply, HostHookInput } from './host.js';
import { applyPatchCall, shellPatchFiles } from './apply-patch.js';
import { emptyTarget, FieldReader, type ToolCall } from './tool-call.js';

// Codex's `PreToolUse` command hook (docs/integrations-codex.md), as its hook engine reads it
// (openai/codex codex-rs/hooks: schema/generated/pre-tool-use.command.{input,output}.schema.json and
// src/events/pre_tool_use.rs; developers.openai.com/codex/hooks):
// - stdin: `session_id`, `turn_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`,
//   `permission_mode`, `tool_name`, `tool_input`, `tool_use_id`. Shell calls are `Bash` with
//   `{command}`, file edits `apply_patch` with the patch in `command`, MCP tools `mcp__server__tool`
//   with their arguments.
// - stdout, exit 0: `hookSpecificOutput.permissionDecision: "deny"` with a non-empty reason blocks
//   and the reason reaches the model; empty output or `{}` lets Codex's own approval flow run.
//   `allow` (without `updatedInput`) and `ask` are "unsupported" and fail OPEN, and so does any key
//   the output schema does not list: the replies here use only listed keys.
// - exit 2 with a reason on stderr blocks; exit 2 without one, and any other exit, fails open.

const EVENT = 'PreToolUse';
const ADAPTER = 'codex';

/**
 * The decision request for one PreToolUse event. `Bash` and MCP tools have Claude Code's names and
 * argument shapes, so they are decoded by Claude Code's adapter and decide as Claude Code's calls
 * do; `apply_patch` is a write to every file its patch names (a patch that names none is refused:
 * Ward cannot tell what it writes).
 */
function request(payload: JsonObject, context: HookCallContext): HookDecisionRequest {
  const enrichCall = (call: ToolCall) => {
    enrichHookCall(call, payload, context, ADAPTER);
    call.context.auth_context = { hook_event_name: EVENT, adapter: ADAPTER };
  };
  const f = new FieldReader(ADAPTER);
  const name = f.string(payload, 'tool_name').trim();
  if (name === '') throw f.fail('tool_name is required');
  const args = f.argsValue(payload, 'tool_input');
  if (name !== 'apply_patch') {
    const command = args['command'];
    const files = typeof command === 'string' ? shellPatchFiles(command, (m) => f.fail(m)) : [];
    if (files.length === 0) return { payload, adapter: 'claude_code', enrichCall };
    return {
      payload,
      adapter: 'claude_code',
      enrichCall: (call) => {
        enrichCall(call);
        for (const file of files) call.targets.push({ ...emptyTarget('path', file), operation: 'write' });
      },
    };
  }
  const patch = args['command'];
  if (typeof patch !== 'string') throw f.fail('apply_patch tool_input.command (the patch) must be a string');
  const call: JsonObject = { ...applyPatchCall(patch, f), context: { session_id: f.string(payload, 'session_id') } };
  return { payload: call, adapter: 'mcp', enrichCall };
}

function parseInput(text: string): HostHookInput {
  const read = readHookEvent(text);
  if (!read.ok) return { kind: 'fail', event: undefined, message: read.message };
  const event = read.payload['hook_event_name'];
  // Codex names the event on every input; one without a name cannot be told from a tool call.
  if (typeof event !== 'string' || event === '') return { kind: 'fail', event: undefined, message: 'malformed hook input: hook_event_name is required' };
  return event === EVENT ? { kind: 'decide', payload: read.payload, event } : { kind: 'pass', event };
}

const deny = (reason: string, systemMessage?: string): HookReply => ({
  exitCode: 0,
  stdout: {
    hookSpecificOutput: { hookEventName: EVENT, permissionDecision: 'deny', permissionDecisionReason: reason },
    ...(systemMessage === undefined ? {} : { systemMessage }),
  },
});

/**
 * | verdict | reply (exit 0) |
 * |---|---|
 * | allow | no output: no objection; Codex's own approval policy and sandbox still apply |
 * | block, dry_run | `permissionDecision: deny` + reason |
 * | require_approval | `deny` + reason: Codex's PreToolUse cannot ask (`ask` fails open), so the call stops and the model is told to ask the user |
 */
function reply(event: string, result: HookDecision): HookReply {
  if (event !== EVENT) return pass(event);
  const reason = stopReason(result, 'Codex hooks cannot ask');
  return reason === undefined ? { exitCode: 0 } : deny(reason);
}

/** Events Ward does not decide get no output with exit 0: Codex carries on as without the hook. */
function pass(_event: string, message?: string): HookReply {
  return message === undefined ? { exitCode: 0 } : { exitCode: 0, stdout: { systemMessage: `Ward hook misconfigured: ${message}` }, stderr: `ward hook codex: ${message}\n` };
}

/** A deny for PreToolUse; exit 2 with the reason on stderr when no event could be read (Codex blocks on it). */
function fail(event: string | undefined, message: string): HookReply {
  const reason = failedReason(message);
  if (event === undefined) return { exitCode: 2, stderr: `${reason}\n` };
  if (event !== EVENT) return pass(event, message);
  return { ...deny(reason, `Ward hook failed closed: ${message}`), stderr: `ward hook codex: ${message}\n` };
}

export const codexHost: HookHost = {
  name: 'codex',
  label: 'Codex',
  events: [EVENT],
  parseInput,
  request,
  reply,
  pass,
  fail,
  // Codex has no HTTP hooks: the endpoint is reached through `curl … || exit 2`, and curl prints the
  // body. No objection is `{}`; an exit-2 answer becomes the deny Codex reads from stdout.
  httpBody: (r) => r.stdout ?? (r.exitCode === 2 ? deny(r.stderr?.trim() || 'Ward: the hook request could not be decided').stdout! : {}),
};
