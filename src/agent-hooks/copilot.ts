import type { JsonObject, JsonValue } from '../canon/index.js';
import { claudeCodeToolName } from './claude-code.js';
import { applyPatchCall } from './apply-patch.js';
import { declaredTargets, enrichHookCall, failedReason, readHookEvent, stopReason, type TargetKey } from './hook-call.js';
import type { HookCallContext, HookDecision, HookDecisionRequest, HookHost, HookReply, HostHookInput } from './host.js';
import { FieldReader, type ToolCall } from './tool-call.js';

// GitHub Copilot's `preToolUse` command hook (docs/integrations-copilot.md), as the Copilot CLI and
// the Copilot coding agent read it from `.github/hooks/*.json` (github/docs: content/copilot/
// reference/copilot-cli-reference/cli-hooks-reference.md and reference/hooks-configuration.md):
// - stdin, camelCase (event `preToolUse`): `sessionId`, `timestamp`, `cwd`, `toolName`, `toolArgs`
//   (a JSON string, or the arguments); VS Code compatible (event `PreToolUse`): `hook_event_name`,
//   `session_id`, `cwd`, `tool_name`, `tool_input`. Other events carry no tool call.
// - stdout: `permissionDecision` `allow` | `deny` | `ask` with `permissionDecisionReason` (shown to
//   the agent, required for deny); empty output is the default behaviour. The coding agent
//   processes only `deny`.
// - "Hook failures (non-zero exit codes or timeouts) are logged and skipped — they never block":
//   exit 2 does not block here, so every failure is a deny on stdout with exit 0.

const EVENTS = ['preToolUse', 'PreToolUse'] as const;
const ADAPTER = 'copilot';

/** Copilot's built-in tools (the reference's "Tool names for hook matching") → Ward's tool names. */
const TOOL_NAMES: Readonly<Record<string, string>> = {
  bash: 'tool.exec',
  powershell: 'tool.exec',
  view: 'tool.read',
  glob: 'tool.read',
  grep: 'tool.read',
  web_fetch: 'tool.read',
  create: 'tool.write',
  edit: 'tool.write',
  task: 'tool.delegate',
};

/** Argument keys that declare targets: a file tool's `path`, `web_fetch`'s `url`, a shell's `command`. */
const TARGET_KEYS: readonly TargetKey[] = [
  { key: 'path', kind: 'path', operation: '' },
  { key: 'url', kind: 'url', operation: '' },
  { key: 'command', kind: 'other', operation: 'execute' },
];

/** Keys that mark a camelCase event without a tool call, and the event (for messages). */
const OTHER_EVENTS: readonly [string, string][] = [
  ['prompt', 'userPromptSubmitted'],
  ['source', 'sessionStart'],
  ['reason', 'sessionEnd'],
  ['stopReason', 'agentStop'],
  ['trigger', 'preCompact'],
  ['notification_type', 'notification'],
  ['agentName', 'subagentStart'],
  ['error', 'errorOccurred'],
];

/** The preToolUse event, in either format, as Ward's own tool call (the `mcp` adapter's payload). */
function copilotToolCall(event: JsonObject): JsonObject {
  const f = new FieldReader(ADAPTER);
  // The format is read from the fields the event has, not from whether it names itself: a tool
  // call in one format must never be read through the other's (empty) fields.
  const camel = event['toolName'] !== undefined;
  if (camel && event['tool_name'] !== undefined) throw f.fail('the event has both toolName and tool_name: Ward cannot tell which tool runs');
  const rawName = f.string(event, camel ? 'toolName' : 'tool_name').trim();
  if (rawName === '') throw f.fail(`${camel ? 'toolName' : 'tool_name'} is required`);
  const argsKey = camel ? 'toolArgs' : 'tool_input';
  if (rawName === 'apply_patch') return { ...applyPatchCall(copilotPatch(f, event[argsKey], argsKey), f), context: { session_id: f.string(event, camel ? 'sessionId' : 'session_id') } };
  const args = f.argsValue(event, argsKey);
  return {
    name: TOOL_NAMES[rawName] ?? claudeCodeToolName(rawName),
    args,
    targets: declaredTargets(args, TARGET_KEYS),
    context: { session_id: f.string(event, camel ? 'sessionId' : 'session_id') },
  };
}

/**
 * The patch of Copilot's `apply_patch` (the tool GPT models edit with): the CLI sends the patch
 * itself as `toolArgs`, not JSON (seen from Copilot CLI 1.0.63, pbakaus/impeccable#279); arguments
 * that are an object (or JSON text of one) hold it as their one string that starts a patch.
 */
function copilotPatch(f: FieldReader, raw: JsonValue | undefined, key: string): string {
  if (typeof raw === 'string' && raw.trimStart().startsWith('*** Begin Patch')) return raw;
  const patches = Object.values(f.argsValue({ [key]: raw ?? null }, key)).filter((v): v is string => typeof v === 'string' && v.trimStart().startsWith('*** Begin Patch'));
  if (patches.length !== 1) throw f.fail(`apply_patch ${key} must be a patch or hold exactly one (it holds ${patches.length})`);
  return patches[0]!;
}

function request(payload: JsonObject, context: HookCallContext): HookDecisionRequest {
  return {
    payload: copilotToolCall(payload),
    adapter: 'mcp' as const,
    enrichCall: (call: ToolCall) => {
      enrichHookCall(call, payload, context, ADAPTER);
      call.context.auth_context = { hook_event_name: 'preToolUse', adapter: ADAPTER };
    },
  };
}

/**
 * Which event this is. The VS Code compatible format names it; the camelCase format does not, so a
 * tool call is an input with `toolName` and neither a result nor an error (postToolUse,
 * postToolUseFailure), and any other input is read from its documented fields. An input that is
 * none of these is refused: it could be a tool call Ward cannot read.
 */
function parseInput(text: string): HostHookInput {
  const read = readHookEvent(text);
  if (!read.ok) return { kind: 'fail', event: undefined, message: read.message };
  const payload = read.payload;
  const named = payload['hook_event_name'];
  if (named !== undefined) {
    if (typeof named !== 'string' || named === '') return { kind: 'fail', event: undefined, message: 'malformed hook input: hook_event_name must be a string' };
    // Both spellings of the tool-call event are decided, whichever format carries them: a
    // preToolUse that names itself is still a tool call about to run.
    return (EVENTS as readonly string[]).includes(named) ? { kind: 'decide', payload, event: named } : { kind: 'pass', event: named };
  }
  if (payload['toolName'] !== undefined) {
    // Only a result or an error that is there (not null) makes the input an after-the-call event.
    if (payload['toolResult'] !== undefined && payload['toolResult'] !== null) return { kind: 'pass', event: 'postToolUse' };
    if (payload['error'] !== undefined && payload['error'] !== null) return { kind: 'pass', event: 'postToolUseFailure' };
    return { kind: 'decide', payload, event: 'preToolUse' };
  }
  const other = OTHER_EVENTS.find(([key]) => payload[key] !== undefined);
  if (other) return { kind: 'pass', event: other[1] };
  return { kind: 'fail', event: undefined, message: 'not a Copilot hook event: no toolName and none of the fields of the other events' };
}

const deny = (permissionDecisionReason: string): HookReply => ({ exitCode: 0, stdout: { permissionDecision: 'deny', permissionDecisionReason } });

/**
 * | verdict | reply (exit 0) |
 * |---|---|
 * | allow | no output: the default behaviour, Copilot's own permission rules still apply |
 * | block, dry_run | `permissionDecision: deny` + reason |
 * | require_approval | `deny` + reason: the coding agent ignores `ask` (the tool would run), and the same `.github/hooks` file serves the CLI and the agent |
 */
function reply(event: string, result: HookDecision): HookReply {
  if (!(EVENTS as readonly string[]).includes(event)) return pass(event);
  const reason = stopReason(result, "Copilot's coding agent cannot ask");
  return reason === undefined ? { exitCode: 0 } : deny(reason);
}

/** Events Ward does not decide get no output (Copilot ignores their output anyway); a broken hook command is said on stderr. */
function pass(_event: string, message?: string): HookReply {
  return message === undefined ? { exitCode: 0 } : { exitCode: 0, stderr: `ward hook copilot: misconfigured: ${message}\n` };
}

/**
 * A deny on stdout with exit 0, whatever the event: Copilot never blocks on an exit code, and a
 * `permissionDecision` on an event that is not preToolUse is ignored, so an unreadable input is
 * denied as if it were a tool call.
 */
function fail(event: string | undefined, message: string): HookReply {
  if (event !== undefined && !(EVENTS as readonly string[]).includes(event)) return pass(event, message);
  return { ...deny(failedReason(message)), stderr: `ward hook copilot: ${message}\n` };
}

export const copilotHost: HookHost = {
  name: 'copilot',
  label: 'GitHub Copilot',
  events: [...EVENTS],
  parseInput,
  request,
  reply,
  pass,
  fail,
  // Copilot has no HTTP hooks: the endpoint is reached through curl from the command, which prints
  // the body. No objection is `{}`.
  httpBody: (r) => r.stdout ?? {},
};
