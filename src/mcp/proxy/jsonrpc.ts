import { foldSpelling } from '../../canon/index.js';
/**
 * The few JSON-RPC 2.0 shapes the proxy looks at. Messages are otherwise opaque: the proxy forwards
 * the bytes it received, so ids, `_meta` and unknown members pass through untouched.
 */

export type JsonRpcId = string | number;

export interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: JsonRpcId | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  [key: string]: unknown;
}

export type MessageKind = 'request' | 'notification' | 'response';

/**
 * The JSON-RPC error codes Ward's proxy emits (the registry; docs/mcp-proxy.md "Error codes").
 *
 * The JSON-RPC 2.0 codes keep their standard meaning. Ward's own codes sit in the server-defined
 * range (-32000..-32099) away from every code an MCP SDK or a revision of the MCP specification
 * gives a meaning to: -32000 (TS SDK 1.x ConnectionClosed; the SDKs' generic HTTP rejection),
 * -32001 (TS SDK 1.x RequestTimeout; "Session not found" in both TS SDKs' HTTP server transports;
 * header mismatch in drafts of 2026-07-28), -32002 (resource not found, 2024-11-05..2025-11-25),
 * -32003/-32004 (draft codes for a missing client capability / unsupported protocol version),
 * -32020..-32022 (2026-07-28: header mismatch, missing required client capability, unsupported
 * protocol version) and -32042 (URL elicitation required).
 */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** HTTP listener: a request Ward's listener rejects before any session sees it (the SDKs' convention). */
  HTTP_REJECTED: -32000,
  /** HTTP listener: unknown or expired `Mcp-Session-Id` (404), as both TS SDKs' server transports answer it. */
  SESSION_NOT_FOUND: -32001,
  /** Ward's policy did not allow the call (`--deny-as error`); the `ward` object is in `error.data`. */
  DENIED: -32060,
  /** The MCP server went away or could not be reached; the request was not answered by it. */
  UPSTREAM_UNAVAILABLE: -32061,
  /** The MCP server did not answer within `--call-timeout`; it was sent `notifications/cancelled`. */
  UPSTREAM_TIMEOUT: -32062,
  /** HTTP listener: `--max-sessions` sessions are open; no new one was started (HTTP 503). */
  TOO_MANY_SESSIONS: -32063,
  /** A client request over `--max-call-bytes` or `--max-call-keys` (docs/mcp-proxy.md "Limits"); not forwarded. */
  LIMIT_EXCEEDED: -32064,
} as const;

/**
 * Classify a parsed value; undefined when it is not a JSON-RPC 2.0 message. Only the envelope is
 * checked (the proxy must not reject what a newer protocol revision adds inside it).
 */
export function messageKind(m: unknown): MessageKind | undefined {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return undefined;
  const o = m as JsonRpcMessage;
  if (o.jsonrpc !== '2.0') return undefined;
  if (typeof o.method === 'string') {
    if (o.params !== undefined && (typeof o.params !== 'object' || o.params === null)) return undefined;
    if (o.id === undefined) return 'notification';
    return isId(o.id) ? 'request' : undefined;
  }
  if ('result' in o || (typeof o.error === 'object' && o.error !== null)) {
    return isId(o.id) || o.id === null || (o.id === undefined && 'error' in o) ? 'response' : undefined;
  }
  return undefined;
}

export function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
}

/** A best-effort id from something that failed validation (for the error reply), else null. */
export function salvageId(m: unknown): JsonRpcId | null {
  if (typeof m !== 'object' || m === null) return null;
  const id = (m as Record<string, unknown>)['id'];
  return isId(id) ? id : null;
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcMessage {
  const error: JsonRpcMessage['error'] = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', id, error };
}

export function resultResponse(id: JsonRpcId, result: unknown): JsonRpcMessage {
  return { jsonrpc: '2.0', id, result };
}

/** Map key for ids: 1 and "1" are different requests. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n${id}` : `s${id}`;
}

/**
 * Is `method` a tool call in some spelling (`foldSpelling`: case, whitespace, invisible and
 * full-width characters, separators)? True for `tools/call` itself; the session refuses every other
 * spelling that is true here, since a lenient server might route it to a tool call Ward has not
 * decided.
 */
export function isToolCallMethod(method: string): boolean {
  return method === 'tools/call' || foldSpelling(method) === 'toolscall';
}
