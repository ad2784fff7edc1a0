import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { bareToolName, operationFromToolName } from '../intent/discover.js';
import type { HookCallContext, HookDecision } from './host.js';
import type { ToolCall } from './tool-call.js';

// What every host's hook adds to the call its event decodes to, so that all hosts — and the MCP
// proxy, which gives the same targets and provenance — decide a call alike.

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
  for (const t of call.targets) {
    if (t.kind === 'path' && t.operation === '' && operation !== '') t.operation = operation;
    if (t.kind === 'other' && t.operation === 'execute') t.endpoint_class = 'proc.exec';
  }
}

/** The provenance of a hook call's arguments when nothing says otherwise: the MCP proxy's default. */
const DEFAULT_ARG_SOURCE = 'tool_output';

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

/** A hook's stdin as one JSON object, or why it is not one (the host then fails closed). */
export function readHookEvent(text: string): { ok: true; payload: JsonObject } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: false, message: 'empty hook input on stdin' };
  let payload: JsonValue;
  try {
    payload = parseJsonText(text);
  } catch (err) {
    return { ok: false, message: `malformed hook input: ${(err as Error).message}` };
  }
  return isJsonObject(payload) ? { ok: true, payload } : { ok: false, message: 'malformed hook input: expected a JSON object' };
}

/**
 * The `hook_event_name` a lenient reader finds in input `readHookEvent` refused (a repeated key,
 * say), so that the deny can still take the event's shape; undefined when there is none.
 */
export function lenientEventName(text: string): string | undefined {
  try {
    const v: unknown = JSON.parse(text);
    const e = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)['hook_event_name'] : undefined;
    return typeof e === 'string' ? e : undefined;
  } catch {
    return undefined;
  }
}

/** An argument key that declares a target of the call, as the host's tools name it. */
export interface TargetKey {
  key: string;
  kind: string;
  operation: string;
}

/** The targets a call's arguments declare under `keys` (non-empty strings only). */
export function declaredTargets(args: JsonObject, keys: readonly TargetKey[]): JsonObject[] {
  const targets: JsonObject[] = [];
  for (const { key, kind, operation } of keys) {
    const value = args[key];
    if (typeof value === 'string' && value.trim() !== '') targets.push({ kind, value, operation });
  }
  return targets;
}

/**
 * Why Ward stops a call, in the words every host's reply uses; undefined for allow. A host whose
 * hook cannot ask stops an approval too, and `cannotAsk` says so to the model.
 */
export function stopReason(result: HookDecision, cannotAsk: string): string | undefined {
  const reasons = result.reasonCodes.length > 0 ? result.reasonCodes.join(', ') : 'none';
  const trace = `trace ${String(result.output['trace_id'])}`;
  switch (result.verdict) {
    case 'allow':
      return undefined;
    case 'require_approval':
      return `Ward: approval required by policy (${reasons}); ${trace}, intent ${result.intentDigest}. ${cannotAsk}: the call was not run; ask the user to approve it outside this session`;
    case 'dry_run':
      return `Ward: dry run — the policy evaluates this call as dry_run, so it is not executed (${reasons}); ${trace}`;
    default:
      return `Ward: blocked by policy (${reasons}); ${trace}. Do not retry this call unchanged`;
  }
}

/** The reason a hook gives when it cannot evaluate a call. */
export const failedReason = (message: string): string => `Ward: denied because the hook could not evaluate this call (fail closed): ${message}`;
