import type { JsonObject } from '../canon/index.js';
import type { VerifyKey } from '../keys/index.js';
import { verifyDigestedJson } from '../trace/sign.js';

export type TokenSignatureProblem = { kind: 'missing' | 'invalid'; message: string } | undefined;

export type TokenSignatureCheck = { ok: true; keyId: string } | { ok: false; kind: 'missing' | 'invalid'; message: string };

/**
 * The token signature checks in reference order (`gate.md` §7.1 steps 2–3): no verify key is an
 * invalid signature (never a skip), then a missing signature, then the §6.2 check over the
 * normalized payload.
 */
export function checkTokenSignature(payload: JsonObject, signature: unknown, keys: readonly VerifyKey[]): TokenSignatureProblem {
  const check = verifyTokenSignature(payload, signature, keys);
  return check.ok ? undefined : { kind: check.kind, message: check.message };
}

/**
 * `checkTokenSignature` that also says which key verified (distinct approvers need distinct keys).
 * The `signature` object may hold only the four members of the construction: anything else would
 * be an unsigned claim beside signed data, so it is an invalid signature (Ward is stricter than
 * the reference here, docs/compatibility.md).
 */
export function verifyTokenSignature(payload: JsonObject, signature: unknown, keys: readonly VerifyKey[]): TokenSignatureCheck {
  if (keys.length === 0) return { ok: false, kind: 'invalid', message: 'verify key not configured' };
  if (signature === undefined || signature === null) return { ok: false, kind: 'missing', message: 'signature missing' };
  const check = verifyDigestedJson(payload, signature, keys, { exactMembers: true });
  return check.ok ? { ok: true, keyId: check.keyId } : { ok: false, kind: 'invalid', message: check.message };
}
