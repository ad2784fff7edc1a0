import { isJsonObject, type JsonObject } from '../../canon/index.js';

/**
 * Which MCP methods Ward decides and which it passes as protocol plumbing (docs/mcp-proxy.md
 * "Every method that reads or acts"). A method that reads or acts becomes an intent with a tool
 * name from Ward's scheme (`mcp.resource.read`, ...) and targets from its params; it is decided,
 * traced, and what it returns to the client is screened and witnessed like a tool result. A method
 * that is in neither list is unknown: refused unless `--unknown-methods decide`.
 */

/** Who sends a message: the MCP client (toward the server) or the MCP server (toward the client). */
export type Sender = 'client' | 'server';

/** One target an intent gets from a method's params (wrapped by `intentForCall` like an argument's). */
export interface MethodTarget {
  kind: string;
  value: string;
}

export interface MethodIntent {
  /** The intent's tool name: fixed, without `--tool-prefix` (a tool cannot take it: see `isReservedToolName`). */
  tool: string;
  /** The targets' operation. */
  operation: string;
  targets: (params: JsonObject) => MethodTarget[];
  /**
   * The member of params that holds arguments the way a tool call's do (`prompts/get`'s
   * `arguments`): their targets are found by the same discovery as a tool call's arguments
   * (`argTargets`, with `--targets-map`'s argument-name rules), so a prompt argument naming a path
   * or URL is a target of the intent itself.
   */
  discoverIn?: string;
}

export type MethodRoute =
  | { kind: 'plumbing' }
  /** `tools/call`: decided by the tool-call path. */
  | { kind: 'tool_call' }
  | { kind: 'intent'; intent: MethodIntent }
  /** `roots/list` (server → client): forwarded; the client's answer is decided (`ROOTS_ANSWER`) before the server gets it. */
  | { kind: 'roots' }
  | { kind: 'unknown' };

/** The intent of a method Ward does not know (`--unknown-methods decide`): the method is its target. */
export const UNKNOWN_METHOD: MethodIntent = { tool: 'mcp.method', operation: '', targets: () => [] };

/**
 * A server notification the result firewall flagged (a key in a log message or a progress
 * message): decided and traced as this intent, its method the target, before it is redacted or
 * dropped.
 */
export const SERVER_NOTIFICATION: MethodIntent = { tool: 'mcp.notification', operation: '', targets: () => [] };

/** The client's `roots/list` answer, decided before the server sees it: each root is a target. */
export const ROOTS_ANSWER: MethodIntent = {
  tool: 'mcp.roots.list',
  operation: '',
  targets: (result) => (Array.isArray(result['roots']) ? result['roots'].flatMap((r) => (isJsonObject(r) ? uriTargets(r['uri']) : [])) : []),
};

/**
 * A URI as a target: `file:` URIs are paths (the engine reads a file URL as its percent-decoded
 * path, so a rule on `/etc/shadow` matches `file:///etc/%73hadow`), `http(s):` URIs are URLs, any
 * other scheme is `other` with the URI as its value.
 */
export function uriTargets(uri: unknown): MethodTarget[] {
  if (typeof uri !== 'string' || uri.trim() === '') return [];
  if (/^file:/i.test(uri.trim())) return [{ kind: 'path', value: uri }];
  if (/^https?:/i.test(uri.trim())) return [{ kind: 'url', value: uri }];
  return [{ kind: 'other', value: uri }];
}

const stringTarget = (value: unknown): MethodTarget[] => (typeof value === 'string' && value !== '' ? [{ kind: 'other', value }] : []);
const none = (): MethodTarget[] => [];
const taskTarget = (p: JsonObject) => stringTarget(p['taskId']);

/** A completion's reference: a resource template's URI or a prompt's name. */
function completionTargets(p: JsonObject): MethodTarget[] {
  const ref = p['ref'];
  if (!isJsonObject(ref)) return [];
  return ref['type'] === 'ref/resource' ? uriTargets(ref['uri']) : stringTarget(ref['name']);
}

/** Tasks are polled in either direction (the receiver of a task-augmented request keeps them). */
const TASKS: Record<string, MethodIntent> = {
  'tasks/get': { tool: 'mcp.task.get', operation: 'read', targets: taskTarget },
  'tasks/result': { tool: 'mcp.task.result', operation: 'read', targets: taskTarget },
  'tasks/list': { tool: 'mcp.task.list', operation: 'read', targets: none },
  'tasks/cancel': { tool: 'mcp.task.cancel', operation: 'delete', targets: taskTarget },
};

const CLIENT_INTENTS: Record<string, MethodIntent> = {
  'resources/read': { tool: 'mcp.resource.read', operation: 'read', targets: (p) => uriTargets(p['uri']) },
  'resources/subscribe': { tool: 'mcp.resource.subscribe', operation: 'read', targets: (p) => uriTargets(p['uri']) },
  'prompts/get': { tool: 'mcp.prompt.get', operation: 'read', targets: (p) => stringTarget(p['name']), discoverIn: 'arguments' },
  'completion/complete': { tool: 'mcp.completion.complete', operation: 'read', targets: completionTargets },
  ...TASKS,
};

const SERVER_INTENTS: Record<string, MethodIntent> = {
  'sampling/createMessage': { tool: 'mcp.sampling.create_message', operation: '', targets: none },
  // URL-mode elicitation sends the user to a URL: that URL is the target.
  'elicitation/create': { tool: 'mcp.elicitation.create', operation: '', targets: (p) => uriTargets(p['url']) },
  ...TASKS,
};

/** Requests that only negotiate, list or tune the session: forwarded as they are. */
const CLIENT_PLUMBING = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/unsubscribe',
  'prompts/list',
  'logging/setLevel',
]);
const SERVER_PLUMBING = new Set(['ping']);

/** Notifications each side may send; anything else is an unknown method. */
const CLIENT_NOTIFICATIONS = new Set([
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
]);
const SERVER_NOTIFICATIONS = new Set([
  'notifications/cancelled',
  'notifications/progress',
  'notifications/message',
  'notifications/resources/updated',
  'notifications/resources/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/tasks/status',
  'notifications/elicitation/complete',
]);

/** How a request from `sender` is handled. Exact method names only: MCP methods are case-sensitive. */
export function requestRoute(sender: Sender, method: string): MethodRoute {
  const own = Object.prototype.hasOwnProperty;
  if (sender === 'client') {
    if (method === 'tools/call') return { kind: 'tool_call' };
    if (CLIENT_PLUMBING.has(method)) return { kind: 'plumbing' };
    if (own.call(CLIENT_INTENTS, method)) return { kind: 'intent', intent: CLIENT_INTENTS[method]! };
    return { kind: 'unknown' };
  }
  if (SERVER_PLUMBING.has(method)) return { kind: 'plumbing' };
  if (method === 'roots/list') return { kind: 'roots' };
  if (own.call(SERVER_INTENTS, method)) return { kind: 'intent', intent: SERVER_INTENTS[method]! };
  return { kind: 'unknown' };
}

/** Is a notification from `sender` one Ward knows (forwarded), or unknown? */
export function knownNotification(sender: Sender, method: string): boolean {
  return (sender === 'client' ? CLIENT_NOTIFICATIONS : SERVER_NOTIFICATIONS).has(method);
}

const RESERVED = new Set([UNKNOWN_METHOD.tool, SERVER_NOTIFICATION.tool, ROOTS_ANSWER.tool, ...[...Object.values(CLIENT_INTENTS), ...Object.values(SERVER_INTENTS)].map((i) => i.tool)]);

/**
 * Is an intent tool name one of the method scheme's? A server's tool by that name would share the
 * policy's rules for the method: such a `tools/call` is refused.
 */
export function isReservedToolName(intentToolName: string): boolean {
  return RESERVED.has(intentToolName.toLowerCase());
}

/** `--unknown-methods`: refuse (traced, never forwarded) or decide as `mcp.method`. */
export type UnknownMethods = 'refuse' | 'decide';

/** The scheme's table, for the docs test: method → intent tool name, per sender. */
export function methodIntentTable(): { sender: Sender; method: string; tool: string }[] {
  const rows: { sender: Sender; method: string; tool: string }[] = [];
  for (const [method, i] of Object.entries(CLIENT_INTENTS)) rows.push({ sender: 'client', method, tool: i.tool });
  for (const [method, i] of Object.entries(SERVER_INTENTS)) rows.push({ sender: 'server', method, tool: i.tool });
  rows.push({ sender: 'client', method: 'roots/list (answer)', tool: ROOTS_ANSWER.tool });
  rows.push({ sender: 'server', method: 'notifications/* (flagged by the firewall)', tool: SERVER_NOTIFICATION.tool });
  return rows;
}
