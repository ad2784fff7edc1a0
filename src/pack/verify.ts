import { compareUtf8 } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { VerifyKey } from '../keys/index.js';
import { checkDeclaredFiles, checkManifestSignatures, uncoveredEntries, undeclaredEntries, verifyRunpack } from '../runpack/index.js';
import { openZip } from '../zip/index.js';
import { checkAuthorizationPayload } from './authorization.js';
import { computePackId, looseSchemaId, packSignable, parsePackManifest } from './manifest.js';
import { checkRunPayload } from './payload.js';
import { verifyProofRecords } from './proof.js';
import { PACK_MANIFEST_FILE, PROOF_RECORDS_FILE, type PackManifest, type PackVerifyResult } from './types.js';

export interface VerifyPackOptions {
  keys?: readonly VerifyKey[] | undefined;
  requireSignature?: boolean | undefined;
}

/**
 * `pack verify` (§1.7), every check in the reference's order. Hard failures (not a zip,
 * duplicates, unparsable manifest, pack_id mismatch, a broken proof chain, a payload that breaks
 * its contract) throw WardErrors; file-level findings are reported in the result.
 */
export function verifyPack(bytes: Uint8Array, options: VerifyPackOptions = {}): PackVerifyResult {
  const zip = openZip(bytes);
  const manifestEntry = zip.get(PACK_MANIFEST_FILE);
  if (!manifestEntry) {
    if (zip.get('manifest.json')) return legacyRunpackResult(bytes, options);
    throw new WardError(ERROR_CODES.PACK_INVALID, 'missing pack_manifest.json');
  }
  const manifestBytes = zip.read(manifestEntry);
  let manifest: PackManifest;
  try {
    manifest = parsePackManifest(manifestBytes);
  } catch (err) {
    if (looseSchemaId(manifestBytes) === 'gait.guard.pack_manifest') {
      throw new WardError(ERROR_CODES.PACK_VERIFY_FAILED, 'legacy guard evidence packs (gait.guard.pack_manifest) are not supported');
    }
    throw err;
  }
  const expectedId = computePackId(manifest);
  if (expectedId !== manifest.pack_id.toLowerCase()) {
    throw new WardError(ERROR_CODES.PACK_VERIFY_FAILED, `pack_id mismatch: expected=${manifest.pack_id} actual=${expectedId}`);
  }

  const { missing, mismatches, contents: files } = checkDeclaredFiles(zip, manifest.contents);
  const undeclared = undeclaredEntries(zip, new Set(manifest.contents.map((c) => c.path)), PACK_MANIFEST_FILE);

  const require = options.requireSignature ?? false;
  let proofRecords = 0;
  let proofSignatureErrors: string[] = [];
  let legacyProof = false;
  const proof = files.get(PROOF_RECORDS_FILE);
  if (proof && !mismatches.some((m) => m.path === PROOF_RECORDS_FILE)) {
    const checked = verifyProofRecords(proof, manifest.contents, options.keys, require);
    proofRecords = checked.records;
    proofSignatureErrors = checked.signatureErrors;
    legacyProof = checked.legacy;
  }

  if (missing.length === 0 && mismatches.length === 0 && undeclared.length === 0) checkPayload(manifest, files);

  const signatures = uncoveredEntries(checkManifestSignatures(packSignable(manifest), manifest.signatures, options.keys, require), undeclared);
  let status = signatures.status;
  const signatureErrors = [...signatures.errors];
  if (require && proofSignatureErrors.length > 0) {
    status = 'failed';
    signatureErrors.push(...proofSignatureErrors);
  }

  const result: PackVerifyResult = {
    pack_id: manifest.pack_id,
    pack_type: manifest.pack_type,
    source_ref: manifest.source_ref,
    files_checked: manifest.contents.length,
    signature_status: status,
  };
  if (proofRecords > 0) result.proof_records_verified = proofRecords;
  if (legacyProof) result.legacy_proof_records = true;
  if (missing.length > 0) result.missing_files = missing.sort(compareUtf8);
  if (mismatches.length > 0) result.hash_mismatches = mismatches.sort((a, b) => compareUtf8(a.path, b.path));
  if (undeclared.length > 0) result.undeclared_files = undeclared;
  if (signatureErrors.length > 0) result.signature_errors = signatureErrors.sort(compareUtf8);
  if (signatures.total > 0) result.signatures_total = signatures.total;
  if (signatures.valid > 0) result.signatures_valid = signatures.valid;
  return result;
}

/** The CLI's ok rule for `pack verify` (§1.7). */
export function packVerified(result: PackVerifyResult, requireSignature: boolean): boolean {
  if (result.missing_files || result.hash_mismatches || result.undeclared_files) return false;
  return requireSignature ? result.signature_status === 'verified' : result.signature_status !== 'failed';
}

function checkPayload(manifest: PackManifest, files: ReadonlyMap<string, Buffer>): void {
  switch (manifest.pack_type) {
    case 'run':
      checkRunPayload(manifest, files);
      return;
    case 'authorization':
      checkAuthorizationPayload(manifest, files);
      return;
    default:
      // Fail closed: Ward does not implement the job and call payload contracts yet.
      throw new WardError(ERROR_CODES.PACK_VERIFY_FAILED, `pack_type ${manifest.pack_type}: payload verification is not supported`);
  }
}

/** A bare runpack given to `pack verify` (§1.7 step 2), reported in pack terms. */
function legacyRunpackResult(bytes: Uint8Array, options: VerifyPackOptions): PackVerifyResult {
  const runpack = verifyRunpack(bytes, options);
  const result: PackVerifyResult = {
    pack_id: runpack.manifest_digest,
    pack_type: 'run',
    source_ref: runpack.run_id,
    files_checked: runpack.files_checked,
    signature_status: runpack.signature_status,
    legacy_type: 'runpack',
  };
  if (runpack.missing_files) result.missing_files = runpack.missing_files;
  if (runpack.hash_mismatches) result.hash_mismatches = runpack.hash_mismatches;
  if (runpack.undeclared_files) result.undeclared_files = runpack.undeclared_files;
  if (runpack.signature_errors) result.signature_errors = runpack.signature_errors;
  if (runpack.signatures_total) result.signatures_total = runpack.signatures_total;
  if (runpack.signatures_valid) result.signatures_valid = runpack.signatures_valid;
  return result;
}
