import type { JsonObject } from '../canon/index.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { signDigestedJson, verifyDigestedJson } from '../trace/index.js';
import type { ManifestSignature } from './types.js';

export type SignatureStatus = 'missing' | 'skipped' | 'verified' | 'failed';

export interface SignatureCheck {
  status: SignatureStatus;
  errors: string[];
  total: number;
  valid: number;
}

/** Sign a manifest: the `gate.md` §6.2 construction over the manifest without `signatures`. */
export function signManifest(signable: JsonObject, key: SigningKey): ManifestSignature {
  return signDigestedJson(signable, key);
}

/**
 * The reference's manifest signature outcome (§1.3 step 5, §1.7 step 9): `missing` without
 * signatures (an error only when required), `skipped` without keys, otherwise `verified` when at
 * least one signature verifies, else `failed`.
 */
export function checkManifestSignatures(
  signable: JsonObject,
  signatures: readonly ManifestSignature[] | undefined,
  keys: readonly VerifyKey[] | undefined,
  required: boolean,
): SignatureCheck {
  const total = signatures?.length ?? 0;
  if (!signatures || total === 0) {
    return { status: 'missing', errors: required ? ['manifest has no signatures'] : [], total: 0, valid: 0 };
  }
  if (!keys || keys.length === 0) return { status: 'skipped', errors: ['public key not configured'], total, valid: 0 };
  const problems = new Set<string>();
  let valid = 0;
  for (const signature of signatures) {
    const check = verifyDigestedJson(signable, signature, keys);
    if (check.ok) valid++;
    else problems.add(check.message);
  }
  if (valid > 0) return { status: 'verified', errors: [], total, valid };
  problems.add('signature verification failed');
  return { status: 'failed', errors: [...problems].sort(), total, valid };
}
