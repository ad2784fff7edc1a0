import { ERROR_CODES, WardError } from '../errors.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { openZip } from '../zip/index.js';
import { buildPack, type BuiltPack } from './build.js';
import { parsePackManifest } from './manifest.js';
import { PACK_MANIFEST_FILE, PACK_TYPES, PROOF_RECORDS_FILE, type PackType, type PackVerifyResult } from './types.js';
import { packVerified, verifyPack } from './verify.js';

export interface UpgradePackOptions {
  /** Keys that verify the pack's own signature (a signed pack must verify before it is re-signed). */
  keys?: readonly VerifyKey[] | undefined;
  /** Signs the copy when the original was signed. */
  signingKey: SigningKey;
}

export interface UpgradedPack extends BuiltPack {
  /** The verification of the original, as `pack verify` reports it. */
  original: PackVerifyResult;
}

/**
 * `ward pack upgrade`: a reference-compatible copy of a pack, in particular of one whose proof
 * chain Ward built in its pre-2026-11-28 form. The original must verify (and a signed one must
 * verify with a key: re-signing content whose signature was never checked would launder it). Every
 * payload file is kept byte for byte with its mode; the proof chain, manifest and pack_id are
 * rebuilt, the manifest's `producer_version` kept, and the copy signed when the original was.
 */
export function upgradePack(bytes: Uint8Array, options: UpgradePackOptions): UpgradedPack {
  const original = verifyPack(bytes, { keys: options.keys });
  if (original.legacy_type) {
    throw new WardError(ERROR_CODES.PACK_INVALID, `not a PackSpec pack (a bare ${original.legacy_type}); build one with ward pack build`);
  }
  if (!packVerified(original, false)) {
    throw new WardError(ERROR_CODES.PACK_VERIFY_FAILED, 'the pack does not verify; only a verified pack is upgraded (run ward pack verify)');
  }
  const signed = original.signature_status !== 'missing';
  if (signed && original.signature_status !== 'verified') {
    throw new WardError(
      ERROR_CODES.PACK_VERIFY_FAILED,
      `the pack's signature is ${original.signature_status ?? 'unchecked'}; give the key that signed it (--public-key, --jwks) so the copy is not signed unchecked`,
    );
  }
  const zip = openZip(bytes);
  const manifest = parsePackManifest(zip.read(zip.get(PACK_MANIFEST_FILE)!));
  const packType = manifest.pack_type as PackType;
  if (!PACK_TYPES.includes(packType)) throw new WardError(ERROR_CODES.PACK_INVALID, `unknown pack_type ${manifest.pack_type}`);
  const files = zip.entries
    .filter((e) => e.name !== PACK_MANIFEST_FILE && e.name !== PROOF_RECORDS_FILE)
    .map((e) => ({ path: e.name, data: zip.read(e), mode: e.mode }));
  const built = buildPack(files, {
    packType,
    sourceRef: manifest.source_ref,
    producerVersion: manifest.producer_version,
    signingKey: signed ? options.signingKey : undefined,
  });
  return { ...built, original };
}
