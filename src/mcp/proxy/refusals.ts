import { isJsonObject } from '../../canon/index.js';
import { OTHER_METHOD, SERVER_TO_CLIENT, UNREAD_METHOD_SPAN } from '../../telemetry/decision-record.js';
import { mcpTraceCarrier, spanRpcId } from '../../telemetry/mcp-record.js';
import type { DecisionTelemetry, OpenSpan } from '../../telemetry/telemetry.js';
import type { JsonRpcId } from './jsonrpc.js';
import { requestRoute, type Sender } from './methods.js';

/**
 * Why the MCP proxy answered a request itself (the client's, or one the server sent the client),
 * before any policy decision: its span's `ward.refusal` (docs/observability.md "Refusals").
 * Public names, like reason codes: one registry here, documented, and a test drives every refusal
 * path to its name.
 */
export const REFUSAL_CAUSES = {
  id_reused: 'the request reused the id of a request still in flight',
  limit_exceeded: 'the request is over --max-call-bytes, --max-call-keys or --max-message-bytes',
  malformed: 'not JSON, not a JSON-RPC 2.0 message, a repeated member name, or nested too deep to read',
  method_unknown: 'a method Ward does not know, under --unknown-methods refuse',
  method_not_canonical: 'a tool call whose method is spelled other than exactly tools/call',
  invalid_params: 'a tools/call without a string params.name and an object params.arguments',
  server_unavailable: 'the MCP server had gone before the request could be relayed',
  hosts_unresolved: "the host names the policy's domain lists need could not be resolved",
  decision_thread_failed: 'the decision thread did not answer',
  not_signed: 'neither a decision nor its refusal could be signed',
} as const;

export type RefusalCause = keyof typeof REFUSAL_CAUSES;

/** A refused request, as much of it as Ward read. */
export interface Refused {
  cause: RefusalCause;
  /** Who sent it: the client (the default), or the MCP server (a request toward the client). */
  from?: Sender | undefined;
  /** Undefined or null when the request's id could not be read. */
  id?: JsonRpcId | null | undefined;
  /** The JSON-RPC method as the client wrote it, when read. */
  method?: unknown;
  /** `params._meta` (its traceparent and tracestate are the span's parent), when read. */
  meta?: unknown;
  /** The refusal's signed trace, when one was written. */
  trace?: { traceId: string; tracePath?: string | undefined } | undefined;
}

/**
 * The span of a refused request (`--otel`), child of its `_meta.traceparent`: named by its MCP
 * method when Ward knows the method (from that sender), `mcp.request` otherwise — a method the
 * agent or the server invented (or misspelled) is its own text, kept out of span names and
 * attributes (`mcp.method.name = _OTHER`). The caller ends it with the JSON-RPC error code the
 * sender was answered with.
 */
export function refusalSpan(telemetry: DecisionTelemetry, sessionId: string, r: Refused): OpenSpan {
  const known = typeof r.method === 'string' && requestRoute(r.from ?? 'client', r.method).kind !== 'unknown';
  return telemetry.relay(
    {
      method: known ? (r.method as string) : UNREAD_METHOD_SPAN,
      mcpSessionId: sessionId,
      jsonRpcId: spanRpcId(r.id),
      refusal: { cause: r.cause, mcpMethod: known ? undefined : typeof r.method === 'string' ? OTHER_METHOD : null, traceId: r.trace?.traceId, tracePath: r.trace?.tracePath },
      direction: r.from === 'server' ? SERVER_TO_CLIENT : undefined,
    },
    mcpTraceCarrier(r.meta),
  );
}

/** `params._meta` of a request, when it has one. */
export function metaOf(params: unknown): unknown {
  return isJsonObject(params) ? params['_meta'] : undefined;
}
