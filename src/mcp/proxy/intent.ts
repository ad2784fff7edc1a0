import { readFileSync } from 'node:fs';
import type { ResolvedHosts } from '../../intent/address.js';
import { isJsonObject, type JsonObject } from '../../canon/index.js';
import { PROVENANCE_SOURCES, TARGET_KINDS, ENDPOINT_CLASSES } from '../../contract/vocabulary.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { ContextEnvelope } from '../../context/index.js';
import { claudeCodeMcpToolPart, claudeCodeToolName } from '../../agent-hooks/claude-code.js';
import {
  argTargets,
  bareToolName,
  operationFromToolName,
  type ArgTargetRule as TargetRule,
  type ArgTargetRules as TargetsMap,
  type TargetMapping,
} from '../../intent/discover.js';

export type { ArgTargetRule as TargetRule, ArgTargetRules as TargetsMap, TargetMapping } from '../../intent/discover.js';
export { DEFAULT_TARGET_MAPPING, EXECUTE_RULE, operationFromToolName } from '../../intent/discover.js';

/**
 * A `--targets-map` file refines the defaults (intent/discover.ts):
 * `{"args": {"repo_dir": {"kind": "path"}, "file": null}, "tools": {"run_sql": {"query": {"kind": "other", "operation": "exec"}}}}`.
 * A rule names the kind of an argument's values; `null` says a name takes no targets, but what a
 * value itself shows (a URL, an absolute path) is a target all the same.
 */
export function loadTargetsMap(path: string): TargetMapping {
  let root: unknown;
  try {
    root = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `--targets-map ${path}: ${(err as Error).message}`, {
      hint: 'the file is JSON: {"args": {"<argument>": {"kind": "path"}}, "tools": {"<tool>": {"<argument>": {...}}}}',
    });
  }
  if (!isJsonObject(root)) throw new WardError(ERROR_CODES.USAGE, `--targets-map ${path}: expected a JSON object`);
  for (const key of Object.keys(root)) {
    if (key !== 'args' && key !== 'tools') throw new WardError(ERROR_CODES.USAGE, `--targets-map ${path}: unknown key ${key} (use args, tools)`);
  }
  const args = new Map<string, TargetRule | null>();
  for (const [name, rule] of Object.entries(objectAt(root, 'args', path))) args.set(name, parseRule(rule, `args.${name}`, path));
  const tools = new Map<string, TargetsMap>();
  for (const [tool, rules] of Object.entries(objectAt(root, 'tools', path))) {
    if (!isJsonObject(rules)) throw new WardError(ERROR_CODES.USAGE, `--targets-map ${path}: tools.${tool} must be an object`);
    const m = new Map<string, TargetRule | null>();
    for (const [name, rule] of Object.entries(rules)) m.set(name, parseRule(rule, `tools.${tool}.${name}`, path));
    tools.set(tool, m);
  }
  return { args, tools };
}

function objectAt(root: JsonObject, key: string, path: string): JsonObject {
  const v = root[key];
  if (v === undefined) return {};
  if (!isJsonObject(v)) throw new WardError(ERROR_CODES.USAGE, `--targets-map ${path}: ${key} must be an object`);
  return v;
}

function parseRule(v: unknown, where: string, path: string): TargetRule | null {
  if (v === null) return null;
  const bad = (why: string) => new WardError(ERROR_CODES.USAGE, `--targets-map ${path}: ${where}: ${why}`);
  if (!isJsonObject(v)) throw bad('expected an object or null');
  const rule: TargetRule = { kind: String(v['kind'] ?? '') };
  if (!TARGET_KINDS.has(rule.kind)) throw bad(`kind must be one of ${[...TARGET_KINDS].join(', ')}`);
  for (const key of Object.keys(v)) {
    if (!['kind', 'operation', 'endpoint_class', 'sensitivity'].includes(key)) throw bad(`unknown key ${key}`);
  }
  if (typeof v['operation'] === 'string') rule.operation = v['operation'];
  if (typeof v['sensitivity'] === 'string') rule.sensitivity = v['sensitivity'];
  if (typeof v['endpoint_class'] === 'string') {
    if (!ENDPOINT_CLASSES.has(v['endpoint_class'])) throw bad(`endpoint_class must be one of ${[...ENDPOINT_CLASSES].join(', ')}`);
    rule.endpoint_class = v['endpoint_class'];
  }
  return rule;
}

/** MCP tool annotations (`tools/list`), as the server claims them. */
export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export function hintsOf(annotations: unknown): ToolHints | undefined {
  if (!isJsonObject(annotations)) return undefined;
  const out: ToolHints = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof annotations[key] === 'boolean') out[key] = annotations[key];
  }
  return Object.keys(out).length ? out : undefined;
}

export interface MappingOptions {
  toolPrefix: string;
  targets: TargetMapping;
  /** `--arg-source`: where the model's arguments are taken to come from. */
  argSource: string;
  /** `--identity`; default `mcp-client:<clientInfo.name>`. */
  identity?: string;
  /**
   * Absolute; or UNKNOWN_WORKSPACE when the server's base for relative paths is unknown (no
   * `--workspace`): relative path targets are then not evaluable (docs/canonical-targets.md).
   */
  workspace: string;
  riskClass: string;
}

/** The intent workspace when none is known: not absolute, so a relative path cannot be joined to it (as the decision service's default). */
export const UNKNOWN_WORKSPACE = '.';

export interface CallInput {
  /** The MCP tool name, as called. */
  name: string;
  arguments: JsonObject;
  sessionId: string;
  runId: string;
  clientName: string;
  /** The server's annotations for this tool, when a `tools/list` reported them. */
  hints?: ToolHints | undefined;
  /** `params._meta` (W3C trace context is taken from it). */
  meta?: Record<string, unknown> | undefined;
  createdAt: string;
  /**
   * Arguments Ward saw come out of an earlier tool result in this session (the witness), by
   * argument name → the trace id of the earliest call whose result held the value. Their
   * provenance is `tool_output` whatever `--arg-source` says, with that trace id as `source_ref`.
   */
  witnessed?: ReadonlyMap<string, string> | undefined;
  /**
   * The session's witnessed context envelope (records Ward built from retrieval results it
   * forwarded), bound instead of `--context-envelope` when the policy reads context evidence for
   * this tool. Not part of the intent mapping: the gatekeeper binds it.
   */
  witnessedContext?: ContextEnvelope | undefined;
  /**
   * An MCP method other than `tools/call` (docs/mcp-proxy.md "Every method that reads or acts"):
   * the intent's tool name as is (no `--tool-prefix`), its targets from the method's params instead
   * of from argument names, and a risk class of its own when set (`--unknown-method-risk-class`).
   */
  method?:
    | {
        intentName: string;
        operation: string;
        targets: readonly { kind: string; value: string }[];
        riskClass?: string | undefined;
        /** Arguments inside the params (`prompts/get`'s `arguments`): discovered like a tool call's. */
        discoverArgs?: JsonObject | undefined;
      }
    | undefined;
  /** The targets' host names resolved before the decision (Gatekeeper.resolveHosts); kept for a re-decision after approval. */
  resolvedHosts?: ResolvedHosts | undefined;
}

export function checkArgSource(source: string): string {
  if (!PROVENANCE_SOURCES.has(source)) {
    throw new WardError(ERROR_CODES.USAGE, `--arg-source must be one of ${[...PROVENANCE_SOURCES].join(', ')}`);
  }
  return source;
}

/**
 * The intent's tool name: `--tool-prefix` + the MCP tool name. A prefix `tool.mcp__<server>__` names
 * the tool exactly as `ward hook claude-code` names the same tool called through Claude Code
 * (`mcp__<server>__<tool>` → `tool.mcp__<server>__<tool>`, camelCase and separators written as the
 * reference's claude_code adapter writes them), so one policy matches both.
 */
export function intentToolName(prefix: string, name: string): string {
  if (/^tool\.mcp__/i.test(prefix)) return claudeCodeToolName(prefix.slice('tool.'.length) + claudeCodeMcpToolPart(name));
  return prefix + name;
}

/**
 * The intent request for one `tools/call` (mcp.md "From tools/call to an intent"). With `withHints`
 * the server's annotations are copied into the targets; the caller evaluates both variants and keeps
 * the stricter, so an annotation can never loosen a decision.
 */
export function intentForCall(call: CallInput, opts: MappingOptions, withHints: boolean, discover = true): JsonObject {
  const method = call.method;
  const toolName = method ? method.intentName : intentToolName(opts.toolPrefix, call.name);
  const operation = method ? method.operation : operationFromToolName(bareToolName(toolName));
  const hints = withHints ? call.hints : undefined;
  const provenance: JsonObject[] = [];
  for (const key of Object.keys(call.arguments)) {
    const from = call.witnessed?.get(key);
    provenance.push(from === undefined ? { arg_path: `$.${key}`, source: opts.argSource } : { arg_path: `$.${key}`, source: 'tool_output', source_ref: from });
  }
  // The one target model (intent/discover.ts): the gate adds the same discovery to every host's
  // intent, so these are the targets the hook, the CLI and the daemon check for this call too. A
  // method's targets come from its params (the gate's discovery still runs over them).
  // `discover = false` is for a refusal only: arguments past discovery's bounds must still be traced.
  const found = !discover
    ? []
    : !method
      ? argTargets(toolName, call.arguments, { mapping: opts.targets, mappingToolName: call.name })
      : method.discoverArgs
        ? // A method is no tool: `--targets-map`'s per-tool rules do not apply, its argument-name rules do.
          argTargets(toolName, method.discoverArgs, { mapping: { args: opts.targets.args, tools: new Map() } })
        : [];
  const targets = found.map((t) => target(t, t.value, t.operation, hints));
  for (const t of method?.targets ?? []) targets.push(target({ kind: t.kind }, t.value, operation, undefined));
  if (hints?.destructiveHint && targets.length === 0) {
    // A destructive tool without a recognizable target still gets one, so destructive rules see it.
    targets.push(target({ kind: 'other' }, call.name, operation, hints));
  }
  const context: JsonObject = {
    identity: opts.identity ?? `mcp-client:${call.clientName || 'unknown'}`,
    workspace: opts.workspace,
    risk_class: method?.riskClass ?? opts.riskClass,
    session_id: call.sessionId,
    run_id: call.runId,
  };
  const tp = call.meta?.['traceparent'];
  if (typeof tp === 'string') {
    context['traceparent'] = tp;
    const ts = call.meta?.['tracestate'];
    if (typeof ts === 'string') context['tracestate'] = ts;
  }
  return {
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: call.createdAt,
    producer_version: 'ward-mcp-proxy',
    tool_name: toolName,
    args: call.arguments,
    targets,
    arg_provenance: provenance,
    context,
  };
}

function target(rule: TargetRule, value: string, operation: string, hints: ToolHints | undefined): JsonObject {
  const t: JsonObject = { kind: rule.kind, value, discovery_method: 'mcp' };
  if (operation) t['operation'] = operation;
  if (rule.endpoint_class) t['endpoint_class'] = rule.endpoint_class;
  if (rule.sensitivity) t['sensitivity'] = rule.sensitivity;
  if (hints) {
    if (hints.readOnlyHint) t['read_only_hint'] = true;
    if (hints.destructiveHint) {
      t['destructive_hint'] = true;
      t['destructive'] = true;
    }
    if (hints.idempotentHint) t['idempotent_hint'] = true;
    if (hints.openWorldHint) t['open_world_hint'] = true;
  }
  return t;
}
