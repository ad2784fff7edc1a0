import { sign, verify } from 'node:crypto';
import { ERROR_CODES, WardError } from '../errors.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { checkProfile, parsePolicyYaml, type LoadedPolicy, type PolicyProfile } from '../policy/index.js';

/**
 * Policy publications (`ward policy publish`, docs/kill-switch.md "In a cluster"): the policy's YAML
 * text, its `policy_digest`, and an Ed25519 signature over that digest by a key the replicas trust.
 *
 * What is signed is `ward.policy.publication/v1\n<digest>`, not the bare digest: the same keys sign
 * traces and tokens, and the prefix keeps a signature made for one of those from ever passing as a
 * publication (and the reverse). The digest is the policy's own `policy_digest` (of the normalized
 * policy), so a replica re-parses the text, recomputes it and accepts the publication only when the
 * text, digest and signature all agree — a row edited by hand in the database fails here.
 */

export const PUBLICATION_SIGNING_PREFIX = 'ward.policy.publication/v1\n';

/** A publication as stored (one row of ward_policy_publications). */
export interface PolicyPublication {
  seq: number;
  digest: string;
  policy_yaml: string;
  /** Standard base64 of the 64-byte Ed25519 signature. */
  signature: string;
  key_id: string;
  published_at: string;
  published_by: string;
  active: boolean;
}

export function publicationMessage(digest: string): Buffer {
  return Buffer.from(PUBLICATION_SIGNING_PREFIX + digest, 'utf8');
}

/** Validate the text strictly (and against the profile), then sign its digest. */
export function signPublication(text: string, key: SigningKey, profile: PolicyProfile = 'standard'): { loaded: LoadedPolicy; signature: string; key_id: string } {
  const loaded = parsePolicyYaml(text);
  checkProfile(loaded.policy, profile);
  return { loaded, signature: sign(null, publicationMessage(loaded.digest), key.privateKey).toString('base64'), key_id: key.keyId };
}

/**
 * The policy of a publication, or an error saying why it must not be activated: the signing key is
 * not trusted, the signature does not verify, the text does not parse or validate, or its digest is
 * not the one that was signed. The key and signature are checked first, so a row no trusted key signed is refused before its text
 * is parsed.
 */
export function verifyPublication(pub: Pick<PolicyPublication, 'seq' | 'digest' | 'policy_yaml' | 'signature' | 'key_id'>, trusted: readonly VerifyKey[], profile: PolicyProfile): LoadedPolicy {
  const where = `publication ${pub.seq}`;
  const key = trusted.find((k) => k.keyId === pub.key_id);
  if (!key) {
    throw new WardError(ERROR_CODES.SIGNATURE_INVALID, `${where}: signed by key ${pub.key_id || '(none)'}, which this replica does not trust for publications`, {
      hint: 'publish with a key the replicas trust (ward serve --policy-public-key FILE, default: the replica\'s own signing key)',
    });
  }
  const raw = /^[A-Za-z0-9+/]+={0,2}$/.test(pub.signature) ? Buffer.from(pub.signature, 'base64') : Buffer.alloc(0);
  if (raw.length !== 64 || !verify(null, publicationMessage(pub.digest), key.publicKey, raw)) {
    throw new WardError(ERROR_CODES.SIGNATURE_INVALID, `${where}: the signature does not verify with key ${key.keyId}`);
  }
  const loaded = parsePolicyYaml(pub.policy_yaml);
  if (loaded.digest !== pub.digest) {
    throw new WardError(ERROR_CODES.SIGNATURE_INVALID, `${where}: the policy text has digest ${loaded.digest}, the signed digest is ${pub.digest}`);
  }
  checkProfile(loaded.policy, profile);
  return loaded;
}
