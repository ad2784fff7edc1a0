import type { JsonObject } from '../canon/index.js';
import { enrichHookCall, failedReason, readHookEvent, stopReason } from './hook-call.js';
import type { HookCallContext, HookDecision, HookDecisionRequest, HookHost, HookReply, HostHookInput } from './host.js';
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

const PATCH_HEADERS = ['*** Add File: ', '*** Update File: ', '*** Delete File: ', '*** Move to: '] as const;

/**
 * Whitespace trimmed as Rust's `str::trim` (Unicode White_Space, which has U+0085 NEL) and as
 * JavaScript's `trim` (which has U+FEFF) would: a NEL before a header or after its path would hide
 * the file from JavaScript's `trim` while Codex's parser reads it.
 */
const trimBoth = (s: string): string => s.replace(/^[\s\u0085]+|[\s\u0085]+$/g, '');

/**
 * The files an `apply_patch` body touches: its `*** Add/Update/Delete File:` and `*** Move to:`
 * headers, read as Codex's parser reads them (codex-rs/apply-patch/src/parser.rs: lines split on
 * `\n`, each trimmed before its header is matched), so padding hides no file. A line that only
 * looks like a header (a context line) adds a file to check, never hides one.
 */
export function applyPatchFiles(patch: string): string[] {
  const files = new Set<string>();
  for (const raw of patch.split('\n')) {
    const line = trimBoth(raw);
    const header = PATCH_HEADERS.find((h) => line.startsWith(h));
    const path = header === undefined ? '' : trimBoth(line.slice(header.length));
    if (path !== '') files.add(path);
  }
  return [...files];
}

/**
 * The files a patch carried inside a shell command writes (`apply_patch <<'EOF'` … or
 * `cd <dir> && apply_patch <<'EOF'` …): Codex intercepts such a command and applies the patch as
 * its `apply_patch` tool does (codex-rs/apply-patch: heredoc invocations, the `cd` naming the
 * directory its paths are relative to), so each file is a write target beside the command. Empty
 * when the command carries no patch; a `cd` anywhere else before the patch throws: Ward cannot tell
 * which directory the patch's relative paths name.
 */
export function shellPatchFiles(command: string, fail: (message: string) => Error): string[] {
  const begin = command.indexOf('*** Begin Patch');
  if (begin < 0) return [];
  const files = applyPatchFiles(command.slice(begin));
  const before = command.slice(0, begin);
  const cd = /^\s*cd\s+(?:'([^']*)'|"([^"$`\\]*)"|([^\s'"$`\\;&|()<>]+))\s*&&/.exec(before);
  const rest = cd ? before.slice(cd[0].length) : before;
  if (/(^|[^\w.-])(cd|pushd|popd)(\s|$|;|&|\|)/.test(rest)) throw fail('a shell command carries an apply_patch body after a change of directory Ward cannot follow; use `cd <dir> && apply_patch` or the apply_patch tool');
  const dir = cd ? (cd[1] ?? cd[2] ?? cd[3] ?? '') : '';
  if (cd && dir === '') throw fail('a shell command carries an apply_patch body after `cd` to an empty directory name');
  return files.map((file) => (dir === '' || file.startsWith('/') ? file : `${dir.replace(/\/+$/, '')}/${file}`));
}

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

/**
 * An `apply_patch` call as Ward's own tool call (the `mcp` adapter's fields): a write to every file
 * the patch names. Codex and Copilot both run it; a patch that names no file is refused (Ward
 * cannot tell what it writes).
 */
export function applyPatchCall(patch: string, f: FieldReader): JsonObject {
  const files = applyPatchFiles(patch);
  if (files.length === 0) throw f.fail('the apply_patch patch names no file (no "*** Add File:", "*** Update File:" or "*** Delete File:" line)');
  return {
    name: 'tool.write',
    // The hosts carry the patch under `command` or as the bare arguments; the gate's target
    // discovery would read a `command` as a shell command: the argument is named for what it is.
    args: { patch },
    targets: files.map((value) => ({ kind: 'path', value, operation: '' })),
  };
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
