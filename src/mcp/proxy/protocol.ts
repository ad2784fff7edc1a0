/**
 * What Ward needs to know about MCP protocol revisions to shape its own replies.
 *
 * Two eras reach the proxy:
 * - 2024-11-05 .. 2025-11-25: `initialize` negotiates the version once per session; `clientInfo`
 *   and the client's capabilities are in its params; the server's identity in its result.
 * - 2026-07-28 and later ("modern"): no `initialize`. Every request carries the protocol version,
 *   `clientInfo` and the client's capabilities in `params._meta` (keys below), every result must
 *   carry `resultType` (`"complete"` for an ordinary answer; clients reject a result without it),
 *   and servers put their identity in each result's `_meta`.
 *
 * Ward forwards both unchanged; only what Ward itself answers (block, approval and dry-run replies)
 * is shaped here, per request, for the revision that request was sent under.
 */
import { isJsonObject } from '../../canon/index.js';

export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';

/** The first revision without `initialize`, whose results carry `resultType`. */
export const FIRST_MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Revisions are dates (`YYYY-MM-DD`): they order as strings. */
export function isModernProtocolVersion(version: string | undefined): boolean {
  return typeof version === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= FIRST_MODERN_PROTOCOL_VERSION;
}

function metaOf(params: unknown): Record<string, unknown> | undefined {
  if (!isJsonObject(params)) return undefined;
  const meta = params['_meta'];
  return isJsonObject(meta) ? meta : undefined;
}

/** The protocol version a (modern) request declares in `params._meta`, if any. */
export function requestProtocolVersion(params: unknown): string | undefined {
  const v = metaOf(params)?.[PROTOCOL_VERSION_META_KEY];
  return typeof v === 'string' ? v : undefined;
}

/** `clientInfo.name` as a modern request sends it (`params._meta`), if any. */
export function requestClientName(params: unknown): string | undefined {
  const info = metaOf(params)?.[CLIENT_INFO_META_KEY];
  return isJsonObject(info) && typeof info['name'] === 'string' && info['name'] !== '' ? info['name'] : undefined;
}

/** The server identity a modern result carries in `result._meta`, if any. */
export function resultServerInfo(result: unknown): unknown {
  return metaOf(result)?.[SERVER_INFO_META_KEY];
}

/**
 * A result Ward answers itself, valid for the revision it answers: a modern request's result gets
 * `resultType: "complete"`; earlier revisions get the result as it is (they define no such field).
 */
export function shapeResult<T extends Record<string, unknown>>(result: T, modern: boolean): T {
  return modern ? { resultType: 'complete', ...result } : result;
}
