import { MAX_JCS_DEPTH, ZERO_TIME, digestJcs, goLower, goTrim, isJsonObject, type JsonObject, type JsonValue } from '../canon/index.js';
import type { NormalizedIntent } from '../intent/types.js';
import { CONTEXT_PLAIN_STRING_FIELDS } from '../intent/types.js';

/**
 * The stand-in trace subject for an intent that could not be normalized at all (Ward decision 3:
 * it is blocked and still traced). Only plain strings are copied out of the raw request; the
 * intent digest covers the raw JSON, so the trace still pins exactly what was refused.
 */
export function unevaluableIntent(raw: unknown): { intent: NormalizedIntent; intentDigest: string; argsDigest: string } {
  const obj: JsonObject = isJsonObject(raw) ? raw : {};
  const ctx = isJsonObject(obj['context']) ? obj['context'] : {};
  const str = (o: JsonObject, k: string) => (typeof o[k] === 'string' ? goTrim(o[k] as string) : '');
  const plain = {} as Record<(typeof CONTEXT_PLAIN_STRING_FIELDS)[number], string>;
  for (const f of CONTEXT_PLAIN_STRING_FIELDS) plain[f] = str(ctx, f);
  const intent: NormalizedIntent = {
    schema_id: 'gait.gate.intent_request',
    schema_version: '1.0.0',
    created_at: ZERO_TIME,
    producer_version: '',
    tool_name: goLower(str(obj, 'tool_name')) || 'unknown',
    args: {},
    targets: [],
    arg_provenance: [],
    skill_provenance: undefined,
    delegation: undefined,
    context: {
      ...plain,
      identity: str(ctx, 'identity'),
      workspace: str(ctx, 'workspace'),
      risk_class: goLower(str(ctx, 'risk_class')),
      phase: 'apply',
      credential_source: '',
      credential_access_type: '',
      credential_ttl_seconds: 0,
      credential_scopes: [],
      agent_identity: undefined,
      sandbox: undefined,
      auth_context: undefined,
      context_set_digest: '',
      context_evidence_mode: '',
      context_refs: [],
    },
    script: undefined,
    script_hash: '',
    relationship: undefined,
    trace_context: undefined,
  };
  return { intent, intentDigest: safeDigest(obj), argsDigest: safeDigest(isJsonObject(obj['args']) ? obj['args'] : {}) };
}

/**
 * JCS of the raw request when it can be canonicalized; otherwise of a bounded copy in which each
 * container past the canonical depth limit, and each number JSON cannot carry (`1e400` parses to
 * Infinity), is replaced by a marker string. Deterministic, never recursing past the limit, and
 * still pinning everything else that was refused.
 */
function safeDigest(value: JsonObject): string {
  try {
    return digestJcs(value);
  } catch {
    return digestJcs(bounded(value, 1));
  }
}

const TOO_DEEP = '\u2026ward: nested past the canonical depth limit';
const NOT_FINITE = '\u2026ward: number outside float64';

function bounded(value: JsonValue, depth: number): JsonValue {
  if (typeof value === 'number') return Number.isFinite(value) ? value : NOT_FINITE;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JCS_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => bounded(item, depth + 1));
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: bounded(child, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
