import { approvalState, type DecisionRecord, type Direction } from './decision-record.js';
import { str } from './fields.js';
import type { TraceCarrier } from './telemetry.js';

/** What the MCP proxy knows of a decided call (its `CallDecision`, structurally). */
export interface McpDecided {
  verdict: string;
  reasonCodes: readonly string[];
  matchedRule: string;
  traceId: string;
  intentDigest: string;
  policyDigest: string;
  toolName: string;
  tracePath?: string | undefined;
}

/** What the proxy knows of the call besides its decision (all optional). */
export interface McpCallContext {
  /** Arguments carrying witnessed values: argument name → the trace id of the result it came from. */
  witnessed?: ReadonlyMap<string, string> | undefined;
  /** Whether the witness runs at all (then a call without witnessed arguments says 0). */
  witnessOn?: boolean | undefined;
  targets?: readonly string[] | undefined;
  /** A request the server sent the client. */
  direction?: Direction | undefined;
}

/**
 * Longer JSON-RPC ids are not put in spans or logs: an id is the sender's own text, as long as its
 * message may be.
 */
const MAX_SPAN_ID_CHARS = 256;

/** A request's JSON-RPC id as telemetry carries it (`jsonrpc.request.id`): undefined when unread or over `MAX_SPAN_ID_CHARS`. */
export function spanRpcId(id: string | number | null | undefined): string | undefined {
  if (id === null || id === undefined) return undefined;
  const text = String(id);
  return text.length <= MAX_SPAN_ID_CHARS ? text : undefined;
}

/** The decision record of one request the MCP proxy decided (`tools/call`, `resources/read`, ...). */
export function mcpDecisionRecord(d: McpDecided, sessionId: string, id: string | number, correlationId: string, method = 'tools/call', call: McpCallContext = {}): DecisionRecord {
  const rpcId = spanRpcId(id);
  // Built key by key: a conditional spread is a slow path on every proxied call.
  const r: DecisionRecord = {
    host: 'mcp-proxy',
    operation: method,
    mcpMethod: method,
    toolName: d.toolName,
    verdict: d.verdict,
    reasonCodes: d.reasonCodes,
    matchedRule: d.matchedRule,
    policyDigest: d.policyDigest,
    intentDigest: d.intentDigest,
    traceId: d.traceId,
    tracePath: d.tracePath,
    approval: approvalState(d.verdict, d.reasonCodes),
    // The correlation id names the request by its id: an id too long for a span leaves only the session.
    correlationId: rpcId === undefined ? `${sessionId}:-` : correlationId,
    mcpSessionId: sessionId,
    jsonRpcId: rpcId,
  };
  if (call.witnessOn) r.witness = { arguments: call.witnessed?.size ?? 0, sources: call.witnessed?.size ? [...new Set(call.witnessed.values())] : [] };
  if (call.targets) r.targets = call.targets;
  if (call.direction) r.direction = call.direction;
  return r;
}

/** The decision record of the result firewall's decision on one forwarded request's result. */
export function mcpResultRecord(d: McpDecided, sessionId: string, id: string | number, correlationId: string, method: string, firewall: { action: string; detectors: readonly string[] }): DecisionRecord {
  return { ...mcpDecisionRecord(d, sessionId, id, correlationId, method), operation: 'result_firewall', firewall };
}

/** The W3C trace context an MCP request carries in `params._meta` (traceparent, tracestate); `meta` as the sender wrote it, any shape. */
export function mcpTraceCarrier(meta: unknown): TraceCarrier {
  const m = typeof meta === 'object' && meta !== null ? (meta as Readonly<Record<string, unknown>>) : undefined;
  return { traceparent: str(m?.['traceparent']) || undefined, tracestate: str(m?.['tracestate']) || undefined };
}

/**
 * The request as forwarded to the MCP server with Ward's span as its parent: `params._meta`
 * carries Ward's `traceparent` (and `tracestate`), everything else as the client sent it. A copy:
 * the client's message is not changed.
 */
export function withTraceContext<M extends { params?: Record<string, unknown> | undefined }>(msg: M, ctx: TraceCarrier): M {
  const params = msg.params ?? {};
  const meta = typeof params['_meta'] === 'object' && params['_meta'] !== null && !Array.isArray(params['_meta']) ? (params['_meta'] as Record<string, unknown>) : {};
  const { tracestate: _dropped, ...rest } = meta;
  const next: Record<string, unknown> = { ...rest, traceparent: ctx.traceparent };
  if (ctx.tracestate) next['tracestate'] = ctx.tracestate;
  return { ...msg, params: { ...params, _meta: next } };
}
