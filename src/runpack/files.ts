import { compareUtf8, sha256Hex } from '../canon/index.js';
import type { ZipArchive } from '../zip/index.js';
import { computeManifestDigest } from './manifest.js';
import { RUNPACK_FILES, type RunpackManifest } from './types.js';

export interface HashMismatch {
  path: string;
  expected: string;
  actual: string;
}

export interface RunpackFileCheck {
  missing: string[];
  mismatches: HashMismatch[];
  digestMatches: boolean;
  /** Contents of the declared files that were present, by path. */
  contents: Map<string, Buffer>;
}

/** §1.3 steps 3–4: declared files present with matching hashes, the four required ones declared, digest recomputed. */
export function checkRunpackFiles(zip: ZipArchive, manifest: RunpackManifest): RunpackFileCheck {
  const missing = new Set<string>();
  const mismatches: HashMismatch[] = [];
  const contents = new Map<string, Buffer>();
  for (const file of manifest.files) {
    const entry = zip.get(file.path);
    if (!entry) {
      missing.add(file.path);
      continue;
    }
    const data = zip.read(entry);
    const actual = sha256Hex(data);
    if (actual !== file.sha256.toLowerCase()) mismatches.push({ path: file.path, expected: file.sha256, actual });
    contents.set(file.path, data);
  }
  const declared = new Set(manifest.files.map((f) => f.path));
  for (const name of RUNPACK_FILES) if (!declared.has(name)) missing.add(name);
  const digestMatches = computeManifestDigest(manifest) === manifest.manifest_digest.toLowerCase();
  return { missing: [...missing].sort(compareUtf8), mismatches, digestMatches, contents };
}
