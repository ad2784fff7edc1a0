/**
 * One decision as telemetry sees it: names, digests and codes only — never argument values,
 * results, targets or secrets (seed 002). The same fields become a span's attributes and a
 * decision-log line (docs/observability.md), so either can be checked against the signed trace.
 */
export interface DecisionRecord {
  /** Which host decided: `serve` or `mcp-proxy`. */
  host: 'serve' | 'mcp-proxy';
  /** The endpoint or MCP method: `gate.eval`, `gate.eval.batch`, `tools/call`. */
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
  /** MCP only. */
  mcpSessionId?: string | undefined;
  jsonRpcId?: string | undefined;
}

export type AttributeValue = string | number | boolean | string[];

/** The span's name (GenAI / MCP conventions: `{mcp.method.name} {tool}` for MCP, `ward.decide {tool}` for the gate). */
export function spanName(r: DecisionRecord): string {
  return r.host === 'mcp-proxy' ? `${r.operation} ${r.toolName}` : `ward.decide ${r.toolName}`;
}

/** The span's attributes: the OpenTelemetry GenAI/MCP ones where they apply, Ward's under `ward.`. */
export function decisionAttributes(r: DecisionRecord): Record<string, AttributeValue> {
  const a: Record<string, AttributeValue> = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': r.toolName,
    'gen_ai.tool.call.id': r.correlationId,
    'ward.host': r.host,
    'ward.operation': r.operation,
    'ward.verdict': r.verdict,
    'ward.reason_codes': [...r.reasonCodes],
    'ward.matched_rule': r.matchedRule,
    'ward.policy_digest': r.policyDigest,
    'ward.intent_digest': r.intentDigest,
    'ward.trace_id': r.traceId,
  };
  if (r.tracePath) a['ward.trace_path'] = r.tracePath;
  if (r.approval) a['ward.approval'] = r.approval;
  if (r.host === 'mcp-proxy') {
    a['mcp.method.name'] = r.operation;
    if (r.mcpSessionId) a['mcp.session.id'] = r.mcpSessionId;
    if (r.jsonRpcId !== undefined) a['jsonrpc.request.id'] = r.jsonRpcId;
  }
  return a;
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
