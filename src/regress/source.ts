import { ERROR_CODES, WardError } from '../errors.js';
import { parsePackManifest, PACK_MANIFEST_FILE, SOURCE_RUNPACK_FILE } from '../pack/index.js';
import { readRunpack, verifyRunpack, type Runpack } from '../runpack/index.js';
import { openZip } from '../zip/index.js';
import { optionalString, parseJsonObject, usage } from './strict.js';
import { CAPTURE_RECEIPT_SCHEMA } from './types.js';

export interface RunpackSource {
  /** The runpack zip: the artifact itself, or the `source/runpack.zip` of a run pack. */
  bytes: Buffer;
  /** `runpack`, or `pack` when it was taken out of a run pack. */
  from: 'runpack' | 'pack';
}

/**
 * The runpack inside an artifact: a runpack as is, a PackSpec `run` pack's embedded
 * `source/runpack.zip` (§5.1). Other pack types carry no runpack.
 */
export function runpackOf(bytes: Buffer): RunpackSource {
  const zip = openZip(bytes);
  const packManifest = zip.get(PACK_MANIFEST_FILE);
  if (!packManifest) return { bytes, from: 'runpack' };
  const manifest = parsePackManifest(zip.read(packManifest));
  if (manifest.pack_type !== 'run') {
    throw new WardError(ERROR_CODES.USAGE, `a ${manifest.pack_type} pack holds no runpack; regress needs a runpack or a run pack`);
  }
  const source = zip.get(SOURCE_RUNPACK_FILE);
  if (!source) throw new WardError(ERROR_CODES.PACK_INVALID, `run pack ${manifest.pack_id} has no ${SOURCE_RUNPACK_FILE}`);
  return { bytes: zip.read(source), from: 'pack' };
}

/**
 * A fixture source must be an intact runpack: verify (no missing files, no hash mismatches;
 * signatures are not required) and read cleanly.
 */
export function checkedRunpack(bytes: Buffer, what: string): Runpack {
  const check = verifyRunpack(bytes);
  if (check.missing_files || check.hash_mismatches) {
    const problems = [...(check.missing_files ?? []).map((f) => `missing ${f}`), ...(check.hash_mismatches ?? []).map((m) => `hash mismatch ${m.path}`)];
    throw new WardError(ERROR_CODES.RUNPACK_INVALID, `${what} failed verification: ${problems.join(', ')}`, { hint: `run: ward verify ${what}` });
  }
  return readRunpack(bytes);
}

/** A `gait.capture.receipt` 1.0.0 (`ward regress add --from capture.json`): the runpack it names. */
export function captureReceiptArtifact(text: string, what: string): string | undefined {
  let obj;
  try {
    obj = parseJsonObject(text, what);
  } catch {
    return undefined;
  }
  if (obj['schema_id'] !== CAPTURE_RECEIPT_SCHEMA.id) return undefined;
  if (obj['schema_version'] !== CAPTURE_RECEIPT_SCHEMA.version) throw usage(`${what}: unsupported capture receipt schema_version`);
  const type = optionalString(obj, 'artifact_type', what) ?? '';
  if (type !== 'runpack') throw usage(`${what}: capture receipt artifact_type must be runpack (got ${JSON.stringify(type)})`);
  const path = optionalString(obj, 'artifact_path', what) ?? '';
  if (path === '') throw usage(`${what}: capture receipt has no artifact_path`);
  return path;
}
