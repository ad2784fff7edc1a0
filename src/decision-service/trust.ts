import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ZERO_TIME, addSeconds, compareTime, decodeObject, decodeObjectArray, decodeString, formatRFC3339Nano, isJsonObject, isZeroTime, parseJsonText, parseRFC3339, plainFaultMessage, toUTC, uniqueSorted, type FaultReporter, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';
import type { McpTrustConfig, Verdict } from '../policy/types.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { isGoEmpty } from '../edge/json-output.js';
import type { ServerInfo } from '../agent-hooks/tool-call.js';

/**
 * MCP server trust (`mcp-decision-service.md` §6.7): a local trust snapshot
 * (`gait.mcp.trust_snapshot` 1.0.0) says which MCP servers are trusted; the policy's `mcp_trust`
 * block says what a call to an untrusted server gets. Pure apart from reading the snapshot file.
 */
export const TRUST_SNAPSHOT_SCHEMA_ID = 'gait.mcp.trust_snapshot';
export const TRUST_SNAPSHOT_SCHEMA_VERSION = '1.0.0';
export const MCP_TRUST_POLICY_VIOLATION = 'mcp_trust_policy';

export interface TrustEntry {
  server_id: string;
  server_name: string;
  publisher: string;
  source: string;
  endpoint: string;
  status: string;
  updated_at: GoTime;
  score: number;
  evidence_path: string;
  registry_verification: JsonObject | undefined;
}

export interface TrustSnapshot {
  entries: Map<string, TrustEntry>;
}

export type TrustStatus = 'trusted' | 'missing' | 'invalid' | 'unknown' | 'untrusted' | 'stale' | 'below_threshold';

export interface McpTrustDecision {
  server_id: string;
  server_name: string;
  publisher: string;
  source: string;
  status: TrustStatus;
  decision_source: string;
  score: number;
  threshold: number;
  updated_at: GoTime;
  max_age_seconds: number;
  required: boolean;
  enforced: boolean;
  registry_verified: boolean;
  publisher_allowed: boolean;
  reason_codes: string[];
}

/** A snapshot that cannot be used; `evaluateMcpTrust` reports it as status `invalid`. */
class SnapshotInvalid extends WardError {
  constructor(message: string) {
    super(ERROR_CODES.MCP_TRUST_SNAPSHOT_INVALID, message);
    this.name = 'SnapshotInvalid';
  }
}

/** Snapshot fields are read by the one decoder (`canon/decode.ts`): `trust snapshot entries[0].status must be a string`. */
const report: FaultReporter = (fault) => new SnapshotInvalid(`trust snapshot ${plainFaultMessage(fault)}`);

function str(obj: JsonObject, key: string, i?: number): string {
  return decodeString(report, obj, key, i === undefined ? '' : `entries[${i}].`);
}

/** Parse a snapshot; throws on anything malformed, missing identifiers or duplicate keys. */
export function parseTrustSnapshot(text: string): TrustSnapshot {
  let root: JsonValue;
  try {
    root = parseJsonText(text);
  } catch (err) {
    throw new SnapshotInvalid(`parse trust snapshot: ${(err as Error).message}`);
  }
  if (!isJsonObject(root)) throw new SnapshotInvalid('trust snapshot must be a JSON object');
  const schemaId = str(root, 'schema_id');
  if (schemaId !== '' && schemaId !== TRUST_SNAPSHOT_SCHEMA_ID) throw new SnapshotInvalid(`unsupported trust snapshot schema_id: ${schemaId}`);
  const schemaVersion = str(root, 'schema_version');
  if (schemaVersion !== '' && schemaVersion !== TRUST_SNAPSHOT_SCHEMA_VERSION) {
    throw new SnapshotInvalid(`unsupported trust snapshot schema_version: ${schemaVersion}`);
  }
  const entries = new Map<string, TrustEntry>();
  for (const [i, raw] of decodeObjectArray(report, root, 'entries', '').entries()) {
    const entry = decodeEntry(raw, i);
    const key = entryKey(entry);
    if (key === '') throw new SnapshotInvalid(`trust snapshot entries[${i}] requires server_id or server_name`);
    if (entries.has(key)) throw new SnapshotInvalid(`trust snapshot has duplicate entry ${JSON.stringify(key)}`);
    entries.set(key, entry);
  }
  return { entries };
}

function decodeEntry(raw: JsonObject, i: number): TrustEntry {
  const updated = str(raw, 'updated_at', i);
  let updatedAt = ZERO_TIME;
  if (updated !== '') {
    try {
      updatedAt = toUTC(parseRFC3339(updated));
    } catch {
      throw new SnapshotInvalid(`trust snapshot entries[${i}].updated_at must be RFC3339`);
    }
  }
  const score = raw['score'];
  if (score !== undefined && score !== null && typeof score !== 'number') throw new SnapshotInvalid(`trust snapshot entries[${i}].score must be a number`);
  const rv = decodeObject(report, raw, 'registry_verification', `entries[${i}].`);
  return {
    server_id: str(raw, 'server_id', i).trim(),
    server_name: str(raw, 'server_name', i).trim(),
    publisher: str(raw, 'publisher', i).trim(),
    source: str(raw, 'source', i).trim(),
    endpoint: str(raw, 'endpoint', i).trim(),
    status: str(raw, 'status', i).trim().toLowerCase(),
    updated_at: updatedAt,
    score: typeof score === 'number' ? score : 0,
    evidence_path: str(raw, 'evidence_path', i).trim(),
    registry_verification: rv,
  };
}

/** Entry key: lowercase server_id, else lowercase server_name. */
function entryKey(e: { server_id: string; server_name: string }): string {
  return (e.server_id.trim() || e.server_name.trim()).toLowerCase();
}

const TRUSTED_STATUSES = new Set(['trusted', 'allow', 'pass']);

export interface TrustInput {
  config: McpTrustConfig;
  server: ServerInfo | undefined;
  /** The call's risk class (lowercased). */
  riskClass: string;
  now: GoTime;
  /** Base for a relative snapshot path (the reference reads it relative to the working directory). */
  cwd: string;
  /** Snapshot text, when the caller has it; otherwise the file is read. */
  readSnapshot?: (path: string) => string;
}

/** §6.7 decision. Only call when `config.enabled`. */
export function evaluateMcpTrust(input: TrustInput): McpTrustDecision {
  const { config, server } = input;
  const snapshotPath = config.snapshot;
  const required = config.required_risk_classes.includes(input.riskClass.trim().toLowerCase());
  const base: McpTrustDecision = {
    server_id: server?.server_id.trim() ?? '',
    server_name: server?.server_name.trim() ?? '',
    publisher: server?.publisher.trim() ?? '',
    source: server?.source.trim() ?? '',
    status: 'missing',
    decision_source: snapshotPath,
    score: 0,
    threshold: config.min_score,
    updated_at: ZERO_TIME,
    max_age_seconds: config.max_age_seconds,
    required,
    enforced: false,
    registry_verified: false,
    publisher_allowed: false,
    reason_codes: [],
  };
  const done = (status: TrustStatus, codes: string[]): McpTrustDecision => ({
    ...base,
    status,
    reason_codes: uniqueSorted(codes),
    enforced: required && status !== 'trusted',
  });

  const key = server ? entryKey(server) : '';
  if (key === '') return done('missing', ['mcp_trust_identifier_missing']);
  let text: string;
  try {
    text = (input.readSnapshot ?? ((p) => readFileSync(resolve(input.cwd, p), 'utf8')))(snapshotPath);
  } catch {
    return done('missing', ['mcp_trust_snapshot_unavailable']);
  }
  let snapshot: TrustSnapshot;
  try {
    snapshot = parseTrustSnapshot(text);
  } catch {
    return done('invalid', ['mcp_trust_snapshot_invalid']);
  }
  const byId = server!.server_id.trim().toLowerCase();
  const byName = server!.server_name.trim().toLowerCase();
  const entry = (byId && snapshot.entries.get(byId)) || (byName && snapshot.entries.get(byName)) || undefined;
  if (!entry) return done('unknown', ['mcp_trust_server_unknown']);

  base.server_id ||= entry.server_id;
  base.server_name ||= entry.server_name;
  base.publisher = entry.publisher || base.publisher;
  base.source = entry.source || base.source;
  base.score = entry.score;
  base.updated_at = entry.updated_at;
  if (entry.evidence_path) base.decision_source = entry.evidence_path;

  const rv = entry.registry_verification;
  base.registry_verified =
    rv !== undefined && rv['signature_verified'] === true && (rv['pin_present'] !== true || rv['pin_verified'] === true);
  const publisher = base.publisher.toLowerCase();
  base.publisher_allowed =
    config.publisher_allowlist.length === 0 ? rv?.['publisher_allowed'] !== false : publisher !== '' && config.publisher_allowlist.includes(publisher);

  const failures: [string, TrustStatus][] = [];
  if (!TRUSTED_STATUSES.has(entry.status)) failures.push(['mcp_trust_status_untrusted', 'untrusted']);
  if (config.publisher_allowlist.length > 0 && !base.publisher_allowed) failures.push(['mcp_trust_publisher_untrusted', 'untrusted']);
  if (config.require_registry && !base.registry_verified) failures.push(['mcp_trust_registry_unverified', 'invalid']);
  if (config.max_age_seconds > 0 && (isZeroTime(entry.updated_at) || compareTime(addSeconds(entry.updated_at, config.max_age_seconds), input.now) < 0)) {
    failures.push(['mcp_trust_stale', 'stale']);
  }
  if (config.min_score > 0 && entry.score < config.min_score) failures.push(['mcp_trust_below_threshold', 'below_threshold']);
  if (failures.length === 0) return done('trusted', ['mcp_trust_verified']);
  return done(failures[0]![1], failures.map(([code]) => code));
}

/** The trace/output JSON: strings, numbers and flags omitted when empty; `updated_at` always (a Go time). */
export function mcpTrustDecisionJson(d: McpTrustDecision): JsonObject {
  const out: JsonObject = {};
  const put = (key: string, value: JsonValue) => {
    if (!isGoEmpty(value)) out[key] = value;
  };
  put('server_id', d.server_id);
  put('server_name', d.server_name);
  put('publisher', d.publisher);
  put('source', d.source);
  put('status', d.status);
  put('decision_source', d.decision_source);
  put('score', d.score);
  put('threshold', d.threshold);
  out['updated_at'] = formatRFC3339Nano(d.updated_at);
  put('max_age_seconds', d.max_age_seconds);
  put('required', d.required);
  put('enforced', d.enforced);
  put('registry_verified', d.registry_verified);
  put('publisher_allowed', d.publisher_allowed);
  put('reason_codes', d.reason_codes);
  return out;
}

export interface VerdictState {
  verdict: Verdict;
  reasonCodes: string[];
  violations: string[];
}

/**
 * Merge a trust decision into a gate result: reason codes always; when enforced, the verdict
 * becomes the more restrictive of the current one and `action` (an existing dry_run or block is
 * kept) and the violation `mcp_trust_policy` is added.
 */
export function applyMcpTrust(state: VerdictState, decision: McpTrustDecision, action: McpTrustConfig['action']): VerdictState {
  const reasonCodes = uniqueSorted([...state.reasonCodes, ...decision.reason_codes]);
  if (!decision.enforced) return { ...state, reasonCodes };
  let verdict = state.verdict;
  if (verdict === 'allow') verdict = action;
  else if (verdict === 'require_approval' && action === 'block') verdict = 'block';
  return { verdict, reasonCodes, violations: uniqueSorted([...state.violations, MCP_TRUST_POLICY_VIOLATION]) };
}
