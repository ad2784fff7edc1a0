import type { JsonObject } from '../canon/index.js';
import type { VerifyKey } from '../keys/index.js';
import { verifyDigestedJson } from '../trace/sign.js';

export type TokenSignatureProblem = { kind: 'missing' | 'invalid'; message: string } | undefined;

/**
 * The token signature checks in reference order (`gate.md` §7.1 steps 2–3): no verify key is an
 * invalid signature (never a skip), then a missing signature, then the §6.2 check over the
 * normalized payload.
 */
export function checkTokenSignature(payload: JsonObject, signature: unknown, keys: readonly VerifyKey[]): TokenSignatureProblem {
  if (keys.length === 0) return { kind: 'invalid', message: 'verify key not configured' };
  if (signature === undefined || signature === null) return { kind: 'missing', message: 'signature missing' };
  const check = verifyDigestedJson(payload, signature, keys);
  return check.ok ? undefined : { kind: 'invalid', message: check.message };
}
