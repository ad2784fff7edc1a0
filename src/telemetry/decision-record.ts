/**
 * One decision as telemetry sees it: names, digests and codes only — never argument values,
 * results, targets or secrets (seed 002). The same fields become a span's attributes and a
 * decision-log line (docs/observability.md), so either can be checked against the signed trace.
 */
export interface DecisionRecord {
  /** Which host decided: `serve`, `mcp-proxy`, `hook` (the command hook, `ward hook <host>`), or `sdk` (an application's `Ward`). */
  host: 'serve' | 'mcp-proxy' | 'hook' | 'sdk';
  /**
   * The endpoint or MCP method decided: `gate.eval`, `gate.eval.batch`, `evaluate`, `hook`,
   * `tools/call`, `resources/read`, ...; `result_firewall` for the proxy's decision on a result,
   * `roots_answer` for its decision on a client's `roots/list` answer.
   */
  operation: string;
  toolName: string;
  verdict: string;
  reasonCodes: readonly string[];
  matchedRule: string;
  policyDigest: string;
  intentDigest: string;
  /** The signed trace's `trace_id` (verify with `ward trace verify`). */
  traceId: string;
  /** Where the signed trace is (a file path, or a journal location), when the host knows it. */
  tracePath?: string | undefined;
  /** `required` (require_approval), `granted` (an approval token was used), or absent. */
  approval?: 'required' | 'granted' | undefined;
  /** The request's correlation id (the daemon's request id, or `<session>:<jsonrpc id>`). */
  correlationId: string;
  /** MCP only: the request's method (`tools/call`, `resources/read`, ...), its session and id. */
  mcpMethod?: string | undefined;
  mcpSessionId?: string | undefined;
  jsonRpcId?: string | undefined;
  /** The witness: how many arguments carry values of earlier tool results, and those results' trace ids. */
  witness?: { arguments: number; sources: readonly string[] } | undefined;
  /** The result firewall's action on a result (`pass`, `redact`, `block`) and the detectors that fired (names only). */
  firewall?: { action: string; detectors: readonly string[] } | undefined;
  /** Canonical targets (`kind:value`), only with the opt-in (`--otel-targets`): they can hold paths, hosts, record ids. */
  targets?: readonly string[] | undefined;
  /** MCP only: a request the server sent the client (`ward.direction`); absent on the client's requests. */
  direction?: Direction | undefined;
}

/**
 * `ward.direction` of a request the MCP server sent the client (`sampling/createMessage`,
 * `roots/list`, ...). Only those carry it: the client's requests, every proxied call, stay as they were.
 */
export const SERVER_TO_CLIENT = 'server_to_client' as const;
export type Direction = typeof SERVER_TO_CLIENT;

/** A request the MCP proxy relays without a policy decision (`initialize`, `tools/list`, `ping`, ...): a span, no log line. */
export interface RelayRecord {
  /** The span's name: the MCP method, or `UNREAD_METHOD_SPAN` for a refused request whose method Ward does not name. */
  method: string;
  mcpSessionId: string;
  /** Absent only on a refusal whose id could not be read (or is too long to be an attribute). */
  jsonRpcId?: string | undefined;
  /** A request the proxy refused itself, before any policy decision (docs/observability.md "Refusals"). */
  refusal?: RefusalFields | undefined;
  /** A request the server sent the client (`ward.direction`). */
  direction?: Direction | undefined;
}

/** What a refusal's span says beyond a relayed request's. */
export interface RefusalFields {
  /** The stable cause (`ward.refusal`): a name of the proxy's refusal registry. */
  cause: string;
  /**
   * `mcp.method.name` when it is not the span's name: `OTHER_METHOD` for a method Ward does not
   * know (the agent's own text stays out), null when the method could not be read at all.
   */
  mcpMethod?: string | null | undefined;
  /** The refusal's signed trace, when one was written. */
  traceId?: string | undefined;
  tracePath?: string | undefined;
}

/** The span name of a refused request whose method is not one Ward knows, or could not be read. */
export const UNREAD_METHOD_SPAN = 'mcp.request';
/** `mcp.method.name` of a method Ward does not know (the OpenTelemetry convention for a value outside a known set). */
export const OTHER_METHOD = '_OTHER';
/** `ward.operation` of the proxy's decision on the client's `roots/list` answer (span `ward.roots_answer`). */
export const ROOTS_ANSWER_OPERATION = 'roots_answer';

export type AttributeValue = string | number | boolean | string[];

/**
 * The span's name (GenAI / MCP conventions): `tools/call {tool}` and `{mcp.method.name}` for MCP
 * requests (a resource URI or prompt argument is a value, never in a name), `ward.result_firewall
 * {tool}` for a result's decision, `ward.roots_answer` for a `roots/list` answer's, `ward.decide
 * {tool}` for the daemon's gate.
 */
export function spanName(r: DecisionRecord): string {
  if (r.host !== 'mcp-proxy') return `ward.decide ${r.toolName}`;
  if (r.operation === 'result_firewall') return `ward.result_firewall ${r.toolName}`;
  if (r.operation === ROOTS_ANSWER_OPERATION) return 'ward.roots_answer';
  if (r.operation === OTHER_METHOD) return UNREAD_METHOD_SPAN; // a method Ward does not know (`--unknown-methods decide`)
  return r.operation === 'tools/call' ? `tools/call ${r.toolName}` : r.operation;
}

/** The span's attributes: the OpenTelemetry GenAI/MCP ones where they apply, Ward's under `ward.`. */
export function decisionAttributes(r: DecisionRecord): Record<string, AttributeValue> {
  // Built key by key, in one order: a spread of a conditional object here cost more than the rest of the function.
  const a: Record<string, AttributeValue> = {};
  // The GenAI operation is a tool's execution for every decision but an MCP method that is not one.
  if (r.mcpMethod === undefined || r.mcpMethod === 'tools/call') a['gen_ai.operation.name'] = 'execute_tool';
  a['gen_ai.tool.name'] = r.toolName;
  a['gen_ai.tool.call.id'] = r.correlationId;
  a['ward.host'] = r.host;
  a['ward.operation'] = r.operation;
  a['ward.verdict'] = r.verdict;
  a['ward.reason_codes'] = r.reasonCodes.slice();
  a['ward.matched_rule'] = r.matchedRule;
  a['ward.policy_digest'] = r.policyDigest;
  a['ward.intent_digest'] = r.intentDigest;
  a['ward.trace_id'] = r.traceId;
  if (r.tracePath) a['ward.trace_path'] = r.tracePath;
  if (r.approval) a['ward.approval'] = r.approval;
  if (r.mcpMethod !== undefined) a['mcp.method.name'] = r.mcpMethod;
  if (r.mcpSessionId) a['mcp.session.id'] = r.mcpSessionId;
  if (r.jsonRpcId !== undefined) a['jsonrpc.request.id'] = r.jsonRpcId;
  if (r.witness) {
    a['ward.witness.arguments'] = r.witness.arguments;
    a['ward.witness.source_trace_ids'] = [...r.witness.sources];
  }
  if (r.firewall) {
    a['ward.firewall.action'] = r.firewall.action;
    a['ward.firewall.detectors'] = [...r.firewall.detectors];
  }
  if (r.targets) a['ward.targets'] = [...r.targets];
  if (r.direction) a['ward.direction'] = r.direction;
  return a;
}

/** A relayed request's span attributes (MCP conventions; no decision, so no `ward.verdict`); a refused one's with `ward.refusal`. */
export function relayAttributes(r: RelayRecord): Record<string, AttributeValue> {
  if (r.refusal === undefined && r.jsonRpcId !== undefined && r.direction === undefined) {
    return { 'mcp.method.name': r.method, 'mcp.session.id': r.mcpSessionId, 'jsonrpc.request.id': r.jsonRpcId, 'ward.host': 'mcp-proxy', 'ward.operation': 'relay' };
  }
  const f = r.refusal;
  const a: Record<string, AttributeValue> = {};
  const method = f?.mcpMethod === undefined ? r.method : f.mcpMethod;
  if (method !== null) a['mcp.method.name'] = method;
  a['mcp.session.id'] = r.mcpSessionId;
  if (r.jsonRpcId !== undefined) a['jsonrpc.request.id'] = r.jsonRpcId;
  a['ward.host'] = 'mcp-proxy';
  a['ward.operation'] = f ? 'refused' : 'relay';
  if (r.direction) a['ward.direction'] = r.direction;
  if (f) {
    a['ward.refusal'] = f.cause;
    if (f.traceId) a['ward.trace_id'] = f.traceId;
    if (f.tracePath) a['ward.trace_path'] = f.tracePath;
  }
  return a;
}

/** An intent's targets as `kind:value` (operation appended when given), for the `--otel-targets` opt-in; anything malformed is skipped. */
export function targetStrings(targets: unknown): string[] {
  if (!Array.isArray(targets)) return [];
  const out: string[] = [];
  for (const t of targets) {
    if (typeof t !== 'object' || t === null) continue;
    const { kind, value, operation } = t as Record<string, unknown>;
    if (typeof kind !== 'string' || typeof value !== 'string') continue;
    out.push(typeof operation === 'string' && operation ? `${kind}:${value} (${operation})` : `${kind}:${value}`);
  }
  return out;
}

/** The approval state a verdict and its reason codes show. */
export function approvalState(verdict: string, reasonCodes: readonly string[]): DecisionRecord['approval'] {
  if (verdict === 'require_approval') return 'required';
  return reasonCodes.includes('approval_granted') ? 'granted' : undefined;
}

/** Span identity of a decision when it was exported (hex, W3C). */
export interface SpanIds {
  traceId: string;
  spanId: string;
}

/** Version of the decision-log line format (docs/observability.md "Decision log"). */
export const DECISION_LOG_SCHEMA = 'ward.decision_log/v1';

/** One decision-log line (without its newline): the span's attributes (`decisionAttributes`), flat, and the span's ids. */
export function decisionLogLine(attributes: Readonly<Record<string, AttributeValue>>, time: Date, span: SpanIds | undefined): string {
  return JSON.stringify({
    schema: DECISION_LOG_SCHEMA,
    time: time.toISOString(),
    ...attributes,
    ...(span ? { 'otel.trace_id': span.traceId, 'otel.span_id': span.spanId } : {}),
  });
}
