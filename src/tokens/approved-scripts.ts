import {
  compareTime,
  formatRFC3339Nano,
  goLower,
  goTrim,
  isJsonObject,
  isSha256Hex,
  isZeroTime,
  toUTC,
  uniqueSortedLower,
  type GoTime,
  type JsonObject,
  type JsonValue,
} from '../canon/index.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { TokenInvalidError } from './decode.js';
import { decodeTokenHeader, normalizeToken, signToken, tokenHeaderJson, tokenKind, verifyTokenSignature, type TokenKind } from './kind.js';

/**
 * Approved-script registry entries (`gait.gate.approved_script_entry`, `gate.md` §7.2 and §3.6
 * step 1): a signed pre-approval of one exact script (policy digest + script hash + tool
 * sequence) within a scope. The spec lists the entry fields but not every header member, so Ward
 * signs the listed fields plus the usual schema/creation header; see docs/approvals.md.
 */
export const APPROVED_SCRIPT_SCHEMA_ID = 'gait.gate.approved_script_entry';
export const APPROVED_SCRIPT_SCHEMA_VERSION = '1.0.0';

export interface ApprovedScriptEntry {
  schema_id: string;
  schema_version: string;
  created_at: GoTime;
  producer_version: string;
  pattern_id: string;
  policy_digest: string;
  script_hash: string;
  /** Step tool names in script order (order is part of the approval). */
  tool_sequence: string[];
  /** `risk:<class>`, `tool:<name>`, `workspace_prefix:<prefix>`, `endpoint:<class>` or `*`. */
  scope: string[];
  approver_identity: string;
  expires_at: GoTime;
  signature: JsonValue | undefined;
}

export function approvedScriptPayload(entry: ApprovedScriptEntry): JsonObject {
  return {
    ...tokenHeaderJson(entry),
    pattern_id: entry.pattern_id,
    policy_digest: entry.policy_digest,
    script_hash: entry.script_hash,
    tool_sequence: [...entry.tool_sequence],
    scope: [...entry.scope],
    approver_identity: entry.approver_identity,
    expires_at: formatRFC3339Nano(entry.expires_at),
  };
}

const APPROVED_SCRIPT: TokenKind<ApprovedScriptEntry> = tokenKind<ApprovedScriptEntry>({
  what: 'approved script entry',
  schemaId: APPROVED_SCRIPT_SCHEMA_ID,
  schemaVersion: APPROVED_SCRIPT_SCHEMA_VERSION,
  decode: (obj, f) => withDefaultSchema({
    ...decodeTokenHeader(obj, f),
    pattern_id: goTrim(f.string(obj, 'pattern_id')),
    policy_digest: goLower(goTrim(f.string(obj, 'policy_digest'))),
    script_hash: goLower(goTrim(f.string(obj, 'script_hash'))),
    tool_sequence: f.strings(obj, 'tool_sequence').map((tool) => goLower(goTrim(tool))),
    scope: uniqueSortedLower(f.strings(obj, 'scope')),
    approver_identity: goTrim(f.string(obj, 'approver_identity')),
    expires_at: f.time(obj, 'expires_at'),
    signature: obj['signature'] ?? undefined,
  }),
  problem: (entry) => {
    if (!entry.pattern_id) return 'pattern_id is required';
    if (!isSha256Hex(entry.policy_digest)) return 'policy_digest must be sha256 hex';
    if (!isSha256Hex(entry.script_hash)) return 'script_hash must be sha256 hex';
    if (entry.tool_sequence.length === 0 || entry.tool_sequence.includes('')) return 'tool_sequence is required';
    if (entry.scope.length === 0) return 'scope is required';
    if (!entry.approver_identity) return 'approver_identity is required';
    if (isZeroTime(entry.expires_at)) return 'expires_at is required';
    return undefined;
  },
  payload: approvedScriptPayload,
});

/** An entry may leave out its schema id and version (the spec lists the entry fields without them). */
function withDefaultSchema(entry: ApprovedScriptEntry): ApprovedScriptEntry {
  entry.schema_id ||= APPROVED_SCRIPT_SCHEMA_ID;
  entry.schema_version ||= APPROVED_SCRIPT_SCHEMA_VERSION;
  return entry;
}

export function normalizeApprovedScriptEntry(value: JsonValue): ApprovedScriptEntry {
  return normalizeToken(APPROVED_SCRIPT, value);
}

export interface SignApprovedScriptOptions {
  patternId: string;
  policyDigest: string;
  scriptHash: string;
  toolSequence: readonly string[];
  scope: readonly string[];
  approver: string;
  expiresAt: GoTime;
  now: GoTime;
  producerVersion: string;
  key: SigningKey;
}

export function signApprovedScriptEntry(opts: SignApprovedScriptOptions): JsonObject {
  const entry = normalizeApprovedScriptEntry({
    pattern_id: opts.patternId,
    policy_digest: opts.policyDigest,
    script_hash: opts.scriptHash,
    tool_sequence: [...opts.toolSequence],
    scope: [...opts.scope],
    approver_identity: opts.approver,
    created_at: formatRFC3339Nano(toUTC(opts.now)),
    producer_version: opts.producerVersion,
    expires_at: formatRFC3339Nano(toUTC(opts.expiresAt)),
  });
  return signToken(APPROVED_SCRIPT, entry, opts.key);
}

/** Verify one entry: expiry is checked before the signature, as the reference does. */
export function verifyApprovedScriptEntry(value: JsonValue, keys: readonly VerifyKey[], now: GoTime): ApprovedScriptEntry {
  const entry = normalizeApprovedScriptEntry(value);
  if (compareTime(now, entry.expires_at) >= 0) throw new TokenInvalidError(`approved script entry ${entry.pattern_id} is expired`);
  const signature = verifyTokenSignature(APPROVED_SCRIPT, entry, keys);
  if (!signature.ok) throw new TokenInvalidError(`approved script entry ${entry.pattern_id} signature: ${signature.message}`);
  return entry;
}

/**
 * Verify a whole registry (`{"entries":[…]}` or a bare array). Any bad entry fails the registry
 * (`approved script registry verification failed at entry N: …`); the caller decides whether that
 * is fatal (high risk / oss-prod) or a warning that disables the fast path.
 */
export function verifyApprovedScriptRegistry(registry: JsonValue, keys: readonly VerifyKey[], now: GoTime): ApprovedScriptEntry[] {
  return approvedScriptRegistryEntries(registry).map((value, index) => {
    try {
      return verifyApprovedScriptEntry(value, keys, now);
    } catch (err) {
      if (err instanceof TokenInvalidError) {
        throw new TokenInvalidError(`approved script registry verification failed at entry ${index}: ${err.message}`);
      }
      throw err;
    }
  });
}

/** The raw entries of a registry file (`{"entries":[…]}` or a bare array). */
export function approvedScriptRegistryEntries(registry: JsonValue): JsonValue[] {
  const list = Array.isArray(registry) ? registry : isJsonObject(registry) ? (registry['entries'] ?? []) : undefined;
  if (!Array.isArray(list)) throw new TokenInvalidError('approved script registry must be {"entries":[...]} or an array');
  return [...list];
}

export type ApprovedScriptMatch =
  | { matched: true; entry: ApprovedScriptEntry }
  | { matched: false; reason: 'not_script' | 'approved_script_not_found' };

/**
 * `MatchApprovedScript`: the first verified entry whose policy digest, script hash and tool
 * sequence equal the intent's, still unexpired at `now` (wall clock), and whose scope admits it.
 */
export function matchApprovedScript(
  entries: readonly ApprovedScriptEntry[],
  intent: NormalizedIntent,
  policyDigest: string,
  now: GoTime,
): ApprovedScriptMatch {
  if (!intent.script) return { matched: false, reason: 'not_script' };
  const tools = intent.script.steps.map((step) => step.tool_name);
  for (const entry of entries) {
    if (entry.policy_digest !== policyDigest || entry.script_hash !== intent.script_hash) continue;
    if (entry.tool_sequence.length !== tools.length || entry.tool_sequence.some((tool, i) => tool !== tools[i])) continue;
    if (compareTime(now, entry.expires_at) >= 0) continue;
    if (scopeAdmits(entry.scope, intent, tools)) return { matched: true, entry };
  }
  return { matched: false, reason: 'approved_script_not_found' };
}

/**
 * Scope semantics: `*` admits everything; otherwise, for each kind present, the intent must
 * satisfy one of its values: `risk:` the risk class; `tool:` every step tool; `workspace_prefix:`
 * the workspace; `endpoint:` every target's endpoint class. An unknown kind admits nothing.
 */
function scopeAdmits(scope: readonly string[], intent: NormalizedIntent, tools: readonly string[]): boolean {
  if (scope.includes('*')) return true;
  const byKind = new Map<string, string[]>();
  for (const item of scope) {
    const colon = item.indexOf(':');
    const kind = colon < 0 ? item : item.slice(0, colon);
    byKind.set(kind, [...(byKind.get(kind) ?? []), colon < 0 ? '' : item.slice(colon + 1)]);
  }
  const targets = intent.script ? intent.script.steps.flatMap((step) => step.targets) : intent.targets;
  for (const [kind, values] of byKind) {
    const ok =
      kind === 'risk'
        ? values.includes(intent.context.risk_class)
        : kind === 'tool'
          ? tools.every((tool) => values.includes(tool))
          : kind === 'workspace_prefix'
            ? values.some((prefix) => prefix !== '' && intent.context.workspace.startsWith(prefix))
            : kind === 'endpoint'
              ? targets.every((target) => values.includes(target.endpoint_class))
              : false;
    if (!ok) return false;
  }
  return true;
}
