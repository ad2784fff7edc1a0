import { hash, sign, verify } from 'node:crypto';
import { jcs, sha256Bytes, type JsonObject, type JsonValue } from '../canon/index.js';
import { isStdBase64, type SigningKey, type VerifyKey } from '../keys/index.js';

/**
 * The reference signing construction (`gate.md` §6.2), shared by traces, approval and delegation
 * tokens and approved-script entries: sha256 over the JCS bytes of the object without its
 * `signature`, then Ed25519 over the 32 raw digest bytes.
 */
export type DigestSignature = {
  alg: 'ed25519';
  key_id: string;
  /** Standard padded base64 of the 64-byte Ed25519 signature. */
  sig: string;
  /** Lowercase hex of the signed sha256 digest. */
  signed_digest: string;
};

export const SIGNATURE_ALG = 'ed25519';

/** The object a signature covers: the record minus its `signature` member. */
export function withoutSignature(record: JsonObject): JsonObject {
  if (!('signature' in record)) return record;
  const { signature: _signature, ...rest } = record;
  return rest;
}

export function signDigestedJson(unsigned: JsonObject, key: SigningKey): DigestSignature {
  // One-shot hash to hex (the member), then its bytes (what Ed25519 signs): cheaper than a Hash
  // object's update/digest followed by toString('hex').
  const signedDigest = hash('sha256', jcs(unsigned), 'hex');
  return {
    alg: SIGNATURE_ALG,
    key_id: key.keyId,
    sig: sign(null, Buffer.from(signedDigest, 'hex'), key.privateKey).toString('base64'),
    signed_digest: signedDigest,
  };
}

/** The members of a `DigestSignature`; nothing else is part of the construction. */
export const SIGNATURE_MEMBERS: readonly string[] = ['alg', 'key_id', 'sig', 'signed_digest'];

export interface VerifyDigestOptions {
  /**
   * Refuse a `signature` object with members other than `alg`, `key_id`, `sig`, `signed_digest`.
   * The signature object is not covered by its own digest, so an extra member there (say
   * `"approved_by":"ciso"`) would be an unsigned claim inside the signature. Traces and tokens set
   * this; the reference ignores such members.
   */
  exactMembers?: boolean;
}

/** Why a signature did not verify; callers map these to their own vocabularies (reason codes). */
export type SignatureFailure =
  | 'missing'
  | 'malformed'
  | 'digest_missing'
  | 'digest_mismatch'
  | 'unsupported_alg'
  | 'no_key'
  | 'key_id_mismatch'
  | 'bad_encoding'
  | 'invalid';

export type SignatureCheck =
  | { ok: true; keyId: string; signedDigest: string }
  | { ok: false; failure: SignatureFailure; message: string };

/**
 * Check `signature` over `unsigned` in the reference order (`gate.md` §6.3 steps 2–7): presence,
 * digest, alg, key id, encoding, Ed25519. With several keys (a key ring) the record's `key_id`
 * picks the key; an empty `key_id` lets any of them verify. No keys is a failure, never a skip.
 */
export function verifyDigestedJson(
  unsigned: JsonValue,
  signature: unknown,
  keys: readonly VerifyKey[],
  options: VerifyDigestOptions = {},
): SignatureCheck {
  if (signature === undefined || signature === null) return fail('missing', 'signature missing');
  if (typeof signature !== 'object' || Array.isArray(signature)) return fail('malformed', 'signature malformed: not an object');
  const fields = signature as Record<string, unknown>;
  if (options.exactMembers) {
    const unknown = Object.keys(fields).filter((name) => !SIGNATURE_MEMBERS.includes(name));
    if (unknown.length > 0) {
      return fail('malformed', `signature malformed: unknown member${unknown.length > 1 ? 's' : ''} ${unknown.sort().join(', ')} (not covered by the signature)`);
    }
  }
  for (const name of ['alg', 'key_id', 'sig', 'signed_digest']) {
    if (fields[name] !== undefined && typeof fields[name] !== 'string') {
      return fail('malformed', `signature malformed: ${name} must be a string`);
    }
  }
  const alg = (fields['alg'] as string | undefined) ?? '';
  const keyId = (fields['key_id'] as string | undefined) ?? '';
  const sig = (fields['sig'] as string | undefined) ?? '';
  const signedDigest = (fields['signed_digest'] as string | undefined) ?? '';

  if (signedDigest === '') return fail('digest_missing', 'missing signed_digest');
  let digest: Buffer;
  try {
    digest = sha256Bytes(jcs(unsigned));
  } catch (err) {
    // Input that cannot be canonicalized (e.g. nested past the JCS depth limit) cannot be verified.
    return fail('malformed', (err as Error).message);
  }
  if (digest.toString('hex') !== signedDigest) return fail('digest_mismatch', 'signed_digest mismatch');
  if (alg !== SIGNATURE_ALG) return fail('unsupported_alg', `unsupported alg: ${alg}`);
  if (keys.length === 0) return fail('no_key', 'public key not configured');
  const candidates = keyId === '' ? keys : keys.filter((key) => key.keyId === keyId);
  if (candidates.length === 0) return fail('key_id_mismatch', 'key id mismatch');
  if (!isStdBase64(sig)) return fail('bad_encoding', 'decode signature: illegal base64 data');
  const raw = Buffer.from(sig, 'base64');
  if (raw.length !== 64) return fail('bad_encoding', `invalid signature length: ${raw.length}`);
  for (const key of candidates) {
    if (verify(null, digest, key.publicKey, raw)) return { ok: true, keyId: key.keyId, signedDigest };
  }
  return fail('invalid', 'signature verification failed');
}

function fail(failure: SignatureFailure, message: string): SignatureCheck {
  return { ok: false, failure, message };
}
