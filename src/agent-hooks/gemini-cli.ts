import type { JsonObject } from '../canon/index.js';
import { claudeCodeMcpToolPart, claudeCodeToolName } from './claude-code.js';
import { declaredTargets, enrichHookCall, failedReason, lenientEventName, readHookEvent, stopReason, type TargetKey } from './hook-call.js';
import type { HookDecision, HookHost, HookReply, HostHookInput } from './host.js';
import { FieldReader } from './tool-call.js';

// Gemini CLI's `BeforeTool` command hook (docs/integrations-gemini-cli.md), from its hooks reference
// (google-gemini/gemini-cli docs/hooks/reference.md): the event on stdin with `session_id`, `cwd`,
// `hook_event_name`, `tool_name`, `tool_input`; the answer on stdout as JSON with exit 0 —
// `decision: "deny"` and a `reason` the agent reads as the tool's error — or exit 2 with the reason
// on stderr; any other exit is a warning and the tool runs. BeforeTool has no "ask".

const EVENT = 'BeforeTool';

/** Gemini CLI's built-in tools → Ward's tool names (the names Claude Code's equivalents get). */
const TOOL_NAMES: Readonly<Record<string, string>> = {
  read_file: 'tool.read',
  read_many_files: 'tool.read',
  list_directory: 'tool.read',
  glob: 'tool.read',
  search_file_content: 'tool.read',
  grep_search: 'tool.read',
  web_fetch: 'tool.read',
  google_web_search: 'tool.read',
  write_file: 'tool.write',
  replace: 'tool.write',
  run_shell_command: 'tool.exec',
};

/**
 * Argument keys that declare targets, as Claude Code's adapter declares them: file tools name their
 * file or directory `file_path`, `absolute_path`, `path` or `dir_path` (the name differs between
 * Gemini CLI releases), the shell its `command`. Anything else (a `web_fetch` prompt's URLs, a
 * shell's `directory`) the gate's discovery finds in the arguments.
 */
const TARGET_KEYS: readonly TargetKey[] = [
  { key: 'file_path', kind: 'path', operation: '' },
  { key: 'absolute_path', kind: 'path', operation: '' },
  { key: 'path', kind: 'path', operation: '' },
  { key: 'dir_path', kind: 'path', operation: '' },
  { key: 'url', kind: 'url', operation: '' },
  { key: 'command', kind: 'other', operation: 'execute' },
];

/** A Gemini CLI tool name as a Ward tool name; MCP tools (`mcp__server__tool`) as Claude Code's are. */
function geminiToolName(name: string): string {
  return TOOL_NAMES[name.trim()] ?? claudeCodeToolName(name);
}

/**
 * An MCP tool's Ward name from the event's `mcp_context` (Gemini CLI's `McpToolContext`: the
 * server's configured name and the tool's own name, present only for MCP tools): the name Claude
 * Code and `ward mcp proxy --tool-prefix tool.mcp__<server>__` give the same tool. Gemini CLI's own
 * `tool_name` for it has been `mcp__<server>__<tool>` in one release and `mcp_<server>_<tool>` in a
 * later one; the second cannot be split where a server's name has an underscore, the context can.
 */
function mcpContextToolName(f: FieldReader, event: JsonObject): string | undefined {
  const context = f.object(event, 'mcp_context');
  if (!context) return undefined;
  const cf = f.at('mcp_context.');
  const server = cf.string(context, 'server_name').trim();
  const tool = cf.string(context, 'tool_name').trim();
  if (server === '' || tool === '') throw cf.fail('mcp_context.server_name and mcp_context.tool_name are required when mcp_context is present');
  return claudeCodeToolName(`mcp__${server}__${claudeCodeMcpToolPart(tool)}`);
}

/** Glob metacharacters as Gemini CLI's `read_many_files` reads its `paths` and `include` (fast-glob). */
const GLOB = /[*?[\]{}]|^!|\(.*\|.*\)/;

/**
 * `read_many_files` reads every file its `paths` and `include` patterns match. Ward decides a read
 * by the path it names, so a pattern (`.e*`, `src/**`) would be decided as a file of that literal
 * name while the tool reads the files it matches: a call with a pattern is refused, one with plain
 * paths is decided by them.
 */
function refuseGlobReads(f: FieldReader, args: JsonObject): void {
  for (const key of ['paths', 'include']) {
    const value = args[key];
    const entries = Array.isArray(value) ? value : [value];
    const pattern = entries.find((e) => typeof e === 'string' && GLOB.test(e));
    if (pattern !== undefined) {
      throw f.fail(`read_many_files ${key} has the glob pattern ${JSON.stringify(pattern)}: Ward decides reads by the files they name and cannot tell which files a pattern reads; name each file instead`);
    }
  }
}

/** The BeforeTool event as Ward's own tool call (the `mcp` adapter's payload). */
function geminiToolCall(event: JsonObject): JsonObject {
  const f = new FieldReader('gemini_cli');
  const rawName = f.string(event, 'tool_name').trim();
  if (rawName === '') throw f.fail('tool_name is required');
  const mcpName = mcpContextToolName(f, event);
  const args = f.argsValue(event, 'tool_input');
  if (mcpName === undefined && rawName === 'read_many_files') refuseGlobReads(f, args);
  return {
    name: mcpName ?? geminiToolName(rawName),
    args,
    targets: declaredTargets(args, TARGET_KEYS),
    context: { session_id: f.string(event, 'session_id') },
  };
}

function parseInput(text: string): HostHookInput {
  const read = readHookEvent(text);
  if (!read.ok) return { kind: 'fail', event: lenientEventName(text), message: read.message };
  const payload = read.payload;
  const raw = payload['hook_event_name'];
  // Gemini CLI always names the event; a bare tool event (a test, a script) is taken as BeforeTool.
  if (raw === undefined || raw === null || raw === '') return { kind: 'decide', payload, event: EVENT };
  if (typeof raw !== 'string') return { kind: 'fail', event: undefined, message: 'malformed hook input: hook_event_name must be a string' };
  return raw === EVENT ? { kind: 'decide', payload, event: EVENT } : { kind: 'pass', event: raw };
}

/**
 * | verdict | reply (exit 0) |
 * |---|---|
 * | allow | `{}`: no objection; Gemini CLI's own confirmation still applies |
 * | block | `decision: deny` + reason |
 * | dry_run | `decision: deny` + reason |
 * | require_approval | `decision: deny` + reason: BeforeTool cannot ask, so the call stops and the agent is told to ask the user |
 */
function reply(event: string, result: HookDecision): HookReply {
  if (event !== EVENT) return pass(event);
  const reason = stopReason(result, 'Gemini CLI hooks cannot ask');
  return reason === undefined ? { exitCode: 0, stdout: {} } : deny(reason);
}

const deny = (reason: string): HookReply => ({ exitCode: 0, stdout: { decision: 'deny', reason } });

/**
 * Events Ward does not decide get `{}` with exit 0: exit 2 on BeforeAgent would erase the user's
 * prompt, and a deny there would discard it.
 */
function pass(_event: string, message?: string): HookReply {
  return message === undefined ? { exitCode: 0, stdout: {} } : { exitCode: 0, stdout: { systemMessage: `Ward hook misconfigured: ${message}` }, stderr: `ward hook gemini-cli: ${message}\n` };
}

/** A deny for BeforeTool (and for an event that could not be read: exit 2); other events pass. */
function fail(event: string | undefined, message: string): HookReply {
  const reason = failedReason(message);
  if (event === undefined) return { exitCode: 2, stderr: `${reason}\n` };
  if (event !== EVENT) return pass(event, message);
  return { exitCode: 0, stdout: { decision: 'deny', reason, systemMessage: `Ward hook failed closed: ${message}` }, stderr: `ward hook gemini-cli: ${message}\n` };
}

export const geminiCliHost: HookHost = {
  name: 'gemini-cli',
  label: 'Gemini CLI',
  events: [EVENT],
  parseInput,
  request: (payload, context) => ({
    payload: geminiToolCall(payload),
    adapter: 'mcp',
    enrichCall: (call) => {
      enrichHookCall(call, payload, context, 'gemini-cli');
      call.context.auth_context = { hook_event_name: EVENT, adapter: 'gemini_cli' };
    },
  }),
  reply,
  pass,
  fail,
  // The endpoint is reached through `curl … || exit 2` (Gemini CLI has no HTTP hooks): its body is
  // what the command hook prints; an exit-2 answer becomes a deny.
  httpBody: (r) => r.stdout ?? { decision: 'deny', reason: r.stderr?.trim() || 'Ward: the hook request could not be decided' },
};
