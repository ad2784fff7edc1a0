import { compareUtf8 } from '../canon/index.js';
import type { VerifyKey } from '../keys/index.js';
import { checkRunpackFiles, type HashMismatch } from './files.js';
import { computeManifestDigest } from './manifest.js';
import { openRunpack } from './read.js';
import { checkManifestSignatures, type SignatureCheck, type SignatureStatus } from './signature.js';

export interface RunpackVerifyResult {
  run_id: string;
  manifest_digest: string;
  files_checked: number;
  missing_files?: string[];
  hash_mismatches?: HashMismatch[];
  /** Zip entries the manifest does not declare: never accepted (the signature does not cover them). */
  undeclared_files?: string[];
  signature_status: SignatureStatus;
  signature_errors?: string[];
  signatures_total: number;
  signatures_valid: number;
}

export interface VerifyRunpackOptions {
  keys?: readonly VerifyKey[] | undefined;
  requireSignature?: boolean | undefined;
}

/**
 * `runpack.VerifyZip` (§1.3). Structural problems (not a zip, duplicates, case or Unicode aliases,
 * non-canonical names, symlinks, no manifest) throw. Entries the manifest does not declare are
 * reported as `undeclared_files` and fail verification, whatever the signature says.
 */
export function verifyRunpack(bytes: Uint8Array, options: VerifyRunpackOptions = {}): RunpackVerifyResult {
  const { zip, stored } = openRunpack(bytes);
  const { manifest } = stored;
  const check = checkRunpackFiles(zip, manifest);
  const mismatches = [...check.mismatches];
  if (!check.digestMatches) {
    mismatches.push({ path: 'manifest.json', expected: manifest.manifest_digest, actual: computeManifestDigest(manifest) });
  }
  mismatches.sort((a, b) => compareUtf8(a.path, b.path));
  const { signatures: _signatures, ...signable } = stored.raw;
  const signatures = uncoveredEntries(checkManifestSignatures(signable, manifest.signatures, options.keys, options.requireSignature ?? false), check.undeclared);
  const result: RunpackVerifyResult = {
    run_id: manifest.run_id,
    manifest_digest: manifest.manifest_digest,
    files_checked: manifest.files.length,
    signature_status: signatures.status,
    signatures_total: signatures.total,
    signatures_valid: signatures.valid,
  };
  if (check.missing.length > 0) result.missing_files = check.missing;
  if (mismatches.length > 0) result.hash_mismatches = mismatches;
  if (check.undeclared.length > 0) result.undeclared_files = check.undeclared;
  if (signatures.errors.length > 0) result.signature_errors = signatures.errors;
  return result;
}

/**
 * A valid signature over a manifest that does not list every entry does not vouch for the archive:
 * `verified` becomes `failed`, naming what it does not cover (`missing` and `skipped` stay).
 */
export function uncoveredEntries(check: SignatureCheck, undeclared: readonly string[]): SignatureCheck {
  if (undeclared.length === 0 || check.status !== 'verified') return check;
  return { ...check, status: 'failed', errors: [...check.errors, `signed manifest does not declare: ${undeclared.join(', ')}`] };
}

/** The CLI's ok rule for `verify`: intact, and signed-and-verified when required, never `failed`. */
export function runpackVerified(result: RunpackVerifyResult, requireSignature: boolean): boolean {
  if (result.missing_files || result.hash_mismatches || result.undeclared_files) return false;
  return requireSignature ? result.signature_status === 'verified' : result.signature_status !== 'failed';
}
