import { compareTime, goLower, goTrim, jcs, sha256Hex, type GoTime, type JsonObject } from '../canon/index.js';
import {
  normalizeContextEnvelope,
  normalizeContextRecord,
  type ContextEnvelope,
  type ContextEvidenceMode,
  type ContextRecord,
} from '../context/index.js';
import type { ContextConfig } from '../policy/types.js';
import { WARD_VERSION } from '../version.js';

/**
 * Witnessed context evidence (docs/witness.md "Witnessed context"): ContextSpec v1 records that
 * Ward builds itself from the results of retrieval tools it forwarded, instead of records an agent
 * declares. Pure: the caller passes the time Ward saw the result, and signs and binds the envelope.
 *
 * A record:
 * - `ref_id` `witness:<trace id of the call>`, so the record names the signed trace of its call;
 * - `source_type` `mcp_tool_result`;
 * - `source_locator` `mcp://<server>/tools/<tool>`, plus `?<key>=<value>` when the arguments hold
 *   one of the usual locator keys (uri, url, path, file_path, filepath, file), so a reader sees
 *   which document it was; everything else about the arguments is in `query_digest`;
 * - `query_digest` sha256 of the JCS bytes of the call's `arguments` (`{}` when absent);
 * - `content_digest` sha256 of the JCS bytes of the CallToolResult Ward forwarded to the client —
 *   after the result firewall, so redacted text is digested as redacted — without its `_meta`.
 *   JCS rather than the wire bytes: the server's serializer (key order, whitespace, escapes) is not
 *   something the model sees, and anyone holding the recorded result can recompute the digest;
 * - `retrieved_at` the time Ward saw the result; `redaction_mode` `reference` (digests only, no
 *   content); `immutability` `unknown` (Ward cannot know whether the source will change);
 * - `retrieval_params` `{ mcp_server, mcp_tool, trace_id }`.
 */
export const WITNESS_SOURCE_TYPE = 'mcp_tool_result';
const LOCATOR_KEYS = ['uri', 'url', 'path', 'file_path', 'filepath', 'file'] as const;
const MAX_LOCATOR_VALUE_CHARS = 1_024;

export interface WitnessedRetrieval {
  /** The server as the proxy names it (its `serverInfo.name`, or the command). */
  server: string;
  toolName: string;
  args: unknown;
  /** The result as forwarded to the client. */
  result: unknown;
  /** When Ward saw the result. */
  seenAt: GoTime;
  /** The trace id of the call whose result this is. */
  traceId: string;
}

/** True when the policy classes `toolName` as retrieval (compared lowercased, like `match.tool_names`). */
export function isRetrievalTool(config: ContextConfig, toolName: string): boolean {
  return config.enabled && config.retrieval_tools.includes(goLower(goTrim(toolName)));
}

/** sha256 hex of the JCS bytes of a JSON value; throws on values JSON cannot hold. */
export function jcsDigest(value: unknown): string {
  return sha256Hex(jcs(value as JsonObject));
}

/** The `content_digest` of a forwarded result (see the module comment). */
export function resultContentDigest(result: unknown): string {
  if (result !== null && typeof result === 'object' && !Array.isArray(result) && '_meta' in result) {
    const { _meta: _ignored, ...rest } = result as Record<string, unknown>;
    return jcsDigest(rest);
  }
  return jcsDigest(result ?? null);
}

export function witnessedLocator(server: string, toolName: string, args: unknown): string {
  const base = `mcp://${encodeURIComponent(server)}/tools/${encodeURIComponent(toolName)}`;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return base;
  const a = args as Record<string, unknown>;
  for (const key of LOCATOR_KEYS) {
    const v = a[key];
    if (typeof v === 'string' && v !== '' && v.length <= MAX_LOCATOR_VALUE_CHARS) return `${base}?${key}=${encodeURIComponent(v)}`;
  }
  return base;
}

/** One normalized (frozen) ContextSpec v1 record for a retrieval Ward witnessed. */
export function witnessedRecord(r: WitnessedRetrieval): ContextRecord {
  return normalizeContextRecord({
    ref_id: `witness:${r.traceId}`,
    source_type: WITNESS_SOURCE_TYPE,
    source_locator: witnessedLocator(r.server, r.toolName, r.args),
    query_digest: jcsDigest(r.args ?? {}),
    content_digest: resultContentDigest(r.result),
    retrieved_at: r.seenAt,
    redaction_mode: 'reference',
    immutability: 'unknown',
    retrieval_params: { mcp_server: r.server, mcp_tool: r.toolName, trace_id: r.traceId },
  });
}

export interface WitnessedContextLimits {
  /** Records kept per session; past it the oldest are dropped (and counted). */
  maxRecords: number;
}

/** 1,000 records of ~600 bytes keep the envelope well under ContextSpec's 1 MiB parse limit. */
export const DEFAULT_WITNESSED_CONTEXT_LIMITS: WitnessedContextLimits = { maxRecords: 1_000 };

/**
 * The witnessed records of one session and its envelope. The same document read again (same
 * locator, arguments and content) replaces its earlier record, so a loop re-reading a file does
 * not fill the session, and the record carries the latest time the model was given it.
 * Error results (`isError: true`) are not retrieval and are not recorded.
 */
export class WitnessedContext {
  private readonly limits: WitnessedContextLimits;
  private readonly records = new Map<string, ContextRecord>();
  private droppedCount = 0;

  constructor(limits: Partial<WitnessedContextLimits> = {}) {
    this.limits = { ...DEFAULT_WITNESSED_CONTEXT_LIMITS, ...limits };
  }

  get size(): number {
    return this.records.size;
  }

  /** Records dropped by `maxRecords` so far. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Adds the record of a retrieval; undefined when the result is an error result. */
  observe(r: WitnessedRetrieval): ContextRecord | undefined {
    if (isErrorResult(r.result)) return undefined;
    const record = witnessedRecord(r);
    const key = `${record.source_locator}\u0000${record.query_digest}\u0000${record.content_digest}`;
    const earlier = this.records.get(key);
    if (earlier && compareTime(earlier.retrieved_at, record.retrieved_at) > 0) return earlier;
    this.records.delete(key);
    this.records.set(key, record);
    while (this.records.size > this.limits.maxRecords) {
      this.records.delete(this.records.keys().next().value as string);
      this.droppedCount++;
    }
    return record;
  }

  /**
   * The session's envelope, verified by the same normalization as any envelope. `evidence_mode`
   * is `required` by default: every record is one Ward saw itself.
   */
  envelope(options: { contextSetId: string; createdAt: GoTime; producerVersion?: string; evidenceMode?: ContextEvidenceMode }): ContextEnvelope {
    return normalizeContextEnvelope({
      context_set_id: options.contextSetId,
      created_at: options.createdAt,
      producer_version: options.producerVersion ?? WARD_VERSION,
      evidence_mode: options.evidenceMode ?? 'required',
      records: [...this.records.values()],
    });
  }
}

function isErrorResult(result: unknown): boolean {
  return result !== null && typeof result === 'object' && (result as { isError?: unknown }).isError === true;
}
