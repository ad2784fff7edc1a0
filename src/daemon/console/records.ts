import { addDuration, compareTime, formatRFC3339Nano, goLower, goTrim, isJsonObject, jcs, parseRFC3339, sha256Bytes, shortId, type GoTime, type JsonObject, type JsonValue } from '../../canon/index.js';
import type { VerifyKey } from '../../keys/index.js';
import {
  APPROVAL_TOKEN_SCHEMA_ID,
  APPROVAL_TOKEN_SCHEMA_VERSION,
  approvalTokenPayload,
  callFields,
  normalizeApprovalToken,
  TokenInvalidError,
  validateApprovalToken,
  type ApprovalCall,
  type ApprovalToken,
} from '../../tokens/index.js';
import { SIGNATURE_ALG, verifyDigestedJson } from '../../trace/index.js';
import { WARD_VERSION } from '../../version.js';
import { badRequest, HttpError } from '../../edge/http-error.js';
import type { Approver } from './approvers.js';

/*
 * What an approver signs in the browser, and how the daemon checks it. Both records use the
 * trace construction (`gate.md` §6.2): sha256 over the JCS of the payload, Ed25519 over those 32
 * digest bytes. The daemon hands out the exact payload and the exact bytes to sign; on submission
 * it rebuilds the payload from the pending entry and its own rules and accepts a signature only
 * over that rebuilt payload. The client's copy is compared, never trusted.
 */

/** What an approval of one pending entry must bind to (from the entry, never from the client). */
export interface EntryBinding {
  approvalId: string;
  intentDigest: string;
  policyDigest: string;
  /** The intent's delegation digest; "" when the intent carries no delegation. */
  delegationDigest: string;
  /** Sorted, lowercased: `tool:<name>`, plus `phase:apply`, `destructive:apply` for destructive applies. */
  requiredScope: string[];
  /** Bound into the token (0: unbounded) and checked against the call. */
  maxTargets: number;
  maxOps: number;
  /** The call the approver is shown: the token names it (tool, canonical targets, argument digest). */
  call: ApprovalCall;
  /** The token binds the call (`call_digest`), not only this session's intent digest. */
  bindCall: boolean;
}

export const MAX_TTL_SECONDS = 24 * 3600;
export const DEFAULT_TTL_SECONDS = 3600;
/** A template's `created_at` may be this old when it is signed and submitted. */
export const TEMPLATE_MAX_AGE_NS = 15n * 60_000_000_000n;
const SKEW_NS = 5n * 60_000_000_000n;

export const DENIAL_SCHEMA_ID = 'ward.console.approval_denial';
export const DENIAL_SCHEMA_VERSION = '1.0.0';

export interface TemplateRequest {
  approver: string;
  reasonCode: string;
  /** An approval's free-text reason (may be ""); a denial's reason is `reasonCode`. */
  reason?: string | undefined;
  ttlSeconds: number;
  now: GoTime;
}

export interface Template {
  kind: 'approval' | 'denial';
  payload: JsonObject;
  /** sha256(JCS(payload)), hex: the `signed_digest` of the signature. */
  digest: string;
  /** The 32 digest bytes, base64: exactly what Ed25519 signs. */
  bytesToSign: string;
}

function template(kind: Template['kind'], payload: JsonObject): Template {
  const digest = sha256Bytes(jcs(payload));
  return { kind, payload, digest: digest.toString('hex'), bytesToSign: digest.toString('base64') };
}

/** The approval token payload for one approver, as `ward approve` would mint it (token id included). */
export function approvalTemplate(b: EntryBinding, req: TemplateRequest): Template {
  const approver = goTrim(req.approver);
  const reasonCode = goTrim(req.reasonCode);
  let named;
  try {
    named = callFields(b.call, b.bindCall ? b.call.callDigest : '', req.reason ?? '');
  } catch (err) {
    if (err instanceof TokenInvalidError) throw badRequest(err.message);
    throw err;
  }
  const createdAt = req.now;
  const expiresAt = addDuration(createdAt, BigInt(req.ttlSeconds) * 1_000_000_000n);
  const tokenId = shortId([b.intentDigest, b.policyDigest, approver, reasonCode, b.requiredScope.join(','), b.maxTargets, b.maxOps, formatRFC3339Nano(expiresAt)].join(':'));
  const token: ApprovalToken = {
    schema_id: APPROVAL_TOKEN_SCHEMA_ID,
    schema_version: APPROVAL_TOKEN_SCHEMA_VERSION,
    created_at: createdAt,
    producer_version: WARD_VERSION,
    token_id: tokenId,
    approver_identity: approver,
    reason_code: reasonCode,
    intent_digest: b.intentDigest,
    policy_digest: b.policyDigest,
    delegation_binding_digest: b.delegationDigest,
    scope: [...b.requiredScope],
    max_targets: b.maxTargets,
    max_ops: b.maxOps,
    expires_at: expiresAt,
    ...named,
    signature: undefined,
  };
  return template('approval', approvalTokenPayload(token));
}

/** The denial record payload (`ward.console.approval_denial`, docs/console.md). */
export function denialTemplate(b: EntryBinding, req: TemplateRequest): Template {
  const approver = goTrim(req.approver);
  const reason = goTrim(req.reasonCode);
  const createdAt = formatRFC3339Nano(req.now);
  const expiresAt = formatRFC3339Nano(addDuration(req.now, BigInt(req.ttlSeconds) * 1_000_000_000n));
  return template('denial', {
    schema_id: DENIAL_SCHEMA_ID,
    schema_version: DENIAL_SCHEMA_VERSION,
    created_at: createdAt,
    producer_version: WARD_VERSION,
    denial_id: shortId([b.approvalId, b.intentDigest, b.policyDigest, approver, reason, expiresAt].join(':')),
    approval_id: b.approvalId,
    approver_identity: approver,
    reason,
    intent_digest: b.intentDigest,
    policy_digest: b.policyDigest,
    // The same call from another session is denied too (when the entry binds the call).
    ...(b.bindCall ? { call_digest: b.call.callDigest } : {}),
    expires_at: expiresAt,
  });
}

/** A signed submission: the payload from the template, the signer's key id and the signature. */
export interface Submission {
  payload: JsonObject;
  keyId: string;
  sig: string;
}

const SUBMISSION_FIELDS = new Set(['payload', 'key_id', 'sig']);

export function parseSubmission(body: JsonValue): Submission {
  if (!isJsonObject(body)) throw badRequest('body must be a JSON object {payload, key_id, sig}');
  for (const key of Object.keys(body)) if (!SUBMISSION_FIELDS.has(key)) throw badRequest(`body: unknown field ${JSON.stringify(key)}`, 'allowed fields: payload, key_id, sig');
  const { payload, key_id: keyId, sig } = body;
  if (!isJsonObject(payload ?? null)) throw badRequest('body: payload must be the object the token template returned');
  if (typeof keyId !== 'string' || !/^[0-9a-f]{64}$/.test(keyId)) throw badRequest('body: key_id must be the signer key id (sha256 hex of the raw Ed25519 public key)');
  if (typeof sig !== 'string' || sig.length === 0 || sig.length > 200) throw badRequest('body: sig must be the base64 Ed25519 signature of bytes_to_sign');
  return { payload: payload as JsonObject, keyId, sig };
}

/**
 * Why a signed submission was refused (403, `refusal` in the error body): the approval token codes
 * of docs/reason-codes.md where the gate has one, else a console refusal (docs/console.md).
 */
export class Refused extends HttpError {
  constructor(
    readonly refusal: string,
    message: string,
  ) {
    super('refused', message, { details: { refusal } });
  }
}

export interface AcceptedApproval {
  /** The complete token, as `ward approve` writes it; verifies offline. */
  token: JsonObject;
  tokenId: string;
  approver: string;
  /** The approver's own words ("" when they gave none). */
  reason: string;
  keyId: string;
  expiresAt: string;
}

/**
 * Accept an approval token for one entry: the payload must be exactly what the template gives for
 * its approver, reason, times and token id (rebuilt here), within its age, and the signature must
 * verify with an approver key bound to that approver; then the gate's own validation (§7.1) runs
 * on the assembled token, so what is stored is a token the retry will accept.
 */
export function acceptApproval(b: EntryBinding, s: Submission, approvers: readonly Approver[], extraKeys: readonly VerifyKey[], counts: { targets: number; ops: number }, now: GoTime): AcceptedApproval {
  let token: ApprovalToken;
  try {
    token = normalizeApprovalToken(s.payload);
  } catch (err) {
    if (err instanceof TokenInvalidError) throw new Refused('approval_token_invalid', err.message);
    throw err;
  }
  const ttlNs = timeNs(token.expires_at) - timeNs(token.created_at);
  const ttlSeconds = Number(ttlNs / 1_000_000_000n);
  if (ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS || ttlNs % 1_000_000_000n !== 0n) throw new Refused('approval_token_ttl_exceeded', 'expires_at must be created_at plus a whole number of seconds, at most 24h');
  checkAge(token.created_at, now);
  const rebuilt = approvalTemplate(b, { approver: token.approver_identity, reasonCode: token.reason_code, reason: token.reason, ttlSeconds, now: token.created_at });
  if (jcs(rebuilt.payload) !== jcs(s.payload)) throw mismatch(rebuilt.payload, s.payload, 'approval_token');
  const signed = { ...rebuilt.payload, signature: { alg: SIGNATURE_ALG, key_id: s.keyId, sig: s.sig, signed_digest: rebuilt.digest } };
  const keys = trustedKeys(approvers, extraKeys, token.approver_identity, s.keyId, 'approval_token_signature_invalid');
  const v = validateApprovalToken(signed, {
    verifyKeys: keys,
    intentDigest: b.intentDigest,
    policyDigest: b.policyDigest,
    ...(b.delegationDigest ? { delegationDigest: b.delegationDigest } : {}),
    requiredScope: b.requiredScope,
    targetCount: counts.targets,
    opCount: counts.ops,
    call: b.call,
    now,
  });
  if (!v.ok) throw new Refused(v.code, v.message);
  return { token: signed, tokenId: v.token.token_id, approver: v.token.approver_identity, reason: v.token.reason, keyId: v.keyId, expiresAt: formatRFC3339Nano(v.token.expires_at) };
}

export interface AcceptedDenial {
  record: JsonObject;
  denialId: string;
  approver: string;
  reason: string;
  keyId: string;
  expiresAt: string;
}

const DENIAL_FIELDS = ['schema_id', 'schema_version', 'created_at', 'producer_version', 'denial_id', 'approval_id', 'approver_identity', 'reason', 'intent_digest', 'policy_digest', 'expires_at'];

/** Accept a denial record for one entry: rebuilt from the entry and checked like an approval. */
export function acceptDenial(b: EntryBinding, s: Submission, approvers: readonly Approver[], extraKeys: readonly VerifyKey[], now: GoTime): AcceptedDenial {
  const p = s.payload;
  for (const k of Object.keys(p)) if (!DENIAL_FIELDS.includes(k) && k !== 'call_digest') throw new Refused('approval_denial_invalid', `denial: unknown field ${JSON.stringify(k)}`);
  for (const k of DENIAL_FIELDS) if (typeof p[k] !== 'string') throw new Refused('approval_denial_invalid', `denial: ${k} must be a string`);
  let created: GoTime;
  let expires: GoTime;
  try {
    created = parseRFC3339(p['created_at'] as string);
    expires = parseRFC3339(p['expires_at'] as string);
  } catch (err) {
    throw new Refused('approval_denial_invalid', `denial: ${(err as Error).message}`);
  }
  const ttlNs = timeNs(expires) - timeNs(created);
  const ttlSeconds = Number(ttlNs / 1_000_000_000n);
  if (ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS || ttlNs % 1_000_000_000n !== 0n) throw new Refused('approval_denial_invalid', 'denial: expires_at must be created_at plus at most 24h');
  checkAge(created, now);
  const approver = p['approver_identity'] as string;
  const reason = p['reason'] as string;
  if (!goTrim(approver) || !goTrim(reason)) throw new Refused('approval_denial_invalid', 'denial: approver_identity and reason are required');
  const rebuilt = denialTemplate(b, { approver, reasonCode: reason, ttlSeconds, now: created });
  if (jcs(rebuilt.payload) !== jcs(p)) throw mismatch(rebuilt.payload, p, 'approval_denial');
  const keys = trustedKeys(approvers, extraKeys, approver, s.keyId, 'approval_denial_signature_invalid');
  const signature = { alg: SIGNATURE_ALG, key_id: s.keyId, sig: s.sig, signed_digest: rebuilt.digest };
  const check = verifyDigestedJson(rebuilt.payload, signature, keys, { exactMembers: true });
  if (!check.ok) throw new Refused('approval_denial_signature_invalid', `denial signature: ${check.message}`);
  return { record: { ...rebuilt.payload, signature }, denialId: String(rebuilt.payload['denial_id']), approver: goTrim(approver), reason: goTrim(reason), keyId: check.keyId, expiresAt: String(rebuilt.payload['expires_at']) };
}

/**
 * The keys a submission may verify with: approver keys whose bound identity (if any) is the
 * approver named in the payload, plus the keys `--approval-public-key` trusts. A key bound to
 * another approver is not offered: alice's key cannot sign as bob.
 */
function trustedKeys(approvers: readonly Approver[], extra: readonly VerifyKey[], approver: string, keyId: string, code: string): VerifyKey[] {
  const who = goLower(goTrim(approver));
  const bound = approvers.filter((a) => a.key.keyId === keyId);
  if (bound.length > 0 && bound.every((a) => a.identity !== undefined && a.identity !== who)) {
    throw new Refused(code, `key ${keyId.slice(0, 12)}… is registered for another approver (${bound[0]!.identity}), not ${approver}`);
  }
  const keys = [...approvers.filter((a) => a.identity === undefined || a.identity === who).map((a) => a.key), ...extra];
  if (keys.length === 0) throw new Refused(code, 'no approver keys are registered: start ward serve with --approver-keys FILE (docs/console.md)');
  return keys;
}

/** A template's `created_at` may be at most 15 minutes old and not in the future (5 minutes of skew). */
function checkAge(created: GoTime, now: GoTime): void {
  if (compareTime(created, addDuration(now, SKEW_NS)) > 0) throw new Refused('approval_template_stale', 'created_at is in the future: fetch a new template');
  if (compareTime(addDuration(created, TEMPLATE_MAX_AGE_NS), now) < 0) throw new Refused('approval_template_stale', 'the template is older than 15 minutes: fetch a new one and sign again');
}

function mismatch(expected: JsonObject, given: JsonObject, what: string): Refused {
  const fields = [...new Set([...Object.keys(expected), ...Object.keys(given)])].filter((k) => JSON.stringify(expected[k]) !== JSON.stringify(given[k])).sort();
  const bound = fields.filter((f) => ['intent_digest', 'policy_digest', 'delegation_binding_digest', 'approval_id'].includes(f));
  if (bound.length > 0) return new Refused(`${what}_${bound[0] === 'policy_digest' ? 'policy' : bound[0] === 'delegation_binding_digest' ? 'delegation_binding' : 'intent'}_mismatch`, `the payload is bound to another decision (${bound.join(', ')} differ from this entry)`);
  return new Refused(`${what}_template_mismatch`, `the payload differs from the template this daemon issues (${fields.join(', ')}): sign the template unchanged`);
}

function timeNs(t: GoTime): bigint {
  return BigInt(t.sec) * 1_000_000_000n + BigInt(t.nsec);
}
