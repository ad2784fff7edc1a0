import { compareUtf8, sha256Hex } from '../canon/index.js';
import { ERROR_CODES } from '../errors.js';
import type { SigningKey } from '../keys/index.js';
import { checkId } from '../store/ids.js';
import { signManifest } from '../runpack/index.js';
import { normalizeMode, writeDeterministicZip } from '../zip/index.js';
import { computePackId, contentType, encodePackManifest, packSignable } from './manifest.js';
import { buildProofRecords, type ProofHashForm } from './proof.js';
import { PACK_CREATED_AT, PACK_MANIFEST_SCHEMA, PROOF_RECORDS_FILE, type PackManifest, type PackType } from './types.js';

export interface PackFile {
  path: string;
  data: Buffer;
  mode?: number;
}

export interface BuildPackOptions {
  packType: PackType;
  sourceRef: string;
  producerVersion: string;
  signingKey?: SigningKey | undefined;
  /** Only to reproduce packs as Ward built them before 2026-11-28 (`legacy`), e.g. in tests of `pack upgrade`. */
  proofHashForm?: ProofHashForm | undefined;
}

export interface BuiltPack {
  manifest: PackManifest;
  bytes: Buffer;
}

/**
 * `buildPackWithFiles` (§1.4–§1.6): add the proof chain over the payload files, list every file
 * in `contents`, derive pack_id, optionally sign, and write the deterministic zip.
 */
export function buildPack(files: readonly PackFile[], options: BuildPackOptions): BuiltPack {
  // The source ref (a run id, a trace id) becomes a store key and is shown in file names: one id rule everywhere.
  checkId(`pack source_ref (${options.packType === 'run' ? 'run_id' : 'trace_id'})`, options.sourceRef, { code: ERROR_CODES.PACK_INVALID });
  const ctx = { packType: options.packType, sourceRef: options.sourceRef, producerVersion: options.producerVersion };
  const proof = buildProofRecords(
    files.map((f) => ({ path: f.path, type: contentType(f.path), sha256: sha256Hex(f.data), size: f.data.length, mode: normalizeMode(f.mode) })),
    ctx,
    options.signingKey,
    options.proofHashForm,
  );
  const all: PackFile[] = [...files, { path: PROOF_RECORDS_FILE, data: proof }];
  const manifest: PackManifest = {
    schema_id: PACK_MANIFEST_SCHEMA.id,
    schema_version: PACK_MANIFEST_SCHEMA.version,
    created_at: PACK_CREATED_AT,
    producer_version: options.producerVersion,
    pack_id: '',
    pack_type: options.packType,
    source_ref: options.sourceRef,
    contents: all
      .map((f) => ({ path: f.path, sha256: sha256Hex(f.data), type: contentType(f.path) }))
      .sort((a, b) => compareUtf8(a.path, b.path)),
  };
  manifest.pack_id = computePackId(manifest);
  if (options.signingKey) manifest.signatures = [signManifest(packSignable(manifest), options.signingKey)];
  const bytes = writeDeterministicZip([...all, { path: 'pack_manifest.json', data: encodePackManifest(manifest) }]);
  return { manifest, bytes };
}
