import { compareUtf8, sha256Hex } from '../canon/index.js';
import type { ZipArchive } from '../zip/index.js';
import { computeManifestDigest } from './manifest.js';
import { RUNPACK_FILES, type RunpackManifest } from './types.js';

const RUNPACK_MANIFEST_FILE = 'manifest.json';

export interface HashMismatch {
  path: string;
  expected: string;
  actual: string;
}

export interface RunpackFileCheck {
  missing: string[];
  /** Entries in the zip that the manifest does not declare (nor `manifest.json`), sorted. */
  undeclared: string[];
  mismatches: HashMismatch[];
  digestMatches: boolean;
  /** Contents of the declared files that were present, by path. */
  contents: Map<string, Buffer>;
}

export interface DeclaredFileCheck {
  /** Declared but absent, in declaration order. */
  missing: string[];
  mismatches: HashMismatch[];
  /** Contents of the declared files that are present (matching or not), by path. */
  contents: Map<string, Buffer>;
}

/** Every declared file of a manifest (runpack `files`, pack `contents`) read and hashed. */
export function checkDeclaredFiles(zip: ZipArchive, declared: readonly { path: string; sha256: string }[]): DeclaredFileCheck {
  const missing: string[] = [];
  const mismatches: HashMismatch[] = [];
  const contents = new Map<string, Buffer>();
  for (const file of declared) {
    const entry = zip.get(file.path);
    if (!entry) {
      missing.push(file.path);
      continue;
    }
    const data = zip.read(entry);
    const actual = sha256Hex(data);
    if (actual !== file.sha256.toLowerCase()) mismatches.push({ path: file.path, expected: file.sha256, actual });
    contents.set(file.path, data);
  }
  return { missing, mismatches, contents };
}

/** §1.3 steps 3–4: declared files present with matching hashes, the four required ones declared, digest recomputed. */
export function checkRunpackFiles(zip: ZipArchive, manifest: RunpackManifest): RunpackFileCheck {
  const { missing, mismatches, contents } = checkDeclaredFiles(zip, manifest.files);
  const declared = new Set(manifest.files.map((f) => f.path));
  const absent = new Set(missing);
  for (const name of RUNPACK_FILES) if (!declared.has(name)) absent.add(name);
  const digestMatches = computeManifestDigest(manifest) === manifest.manifest_digest.toLowerCase();
  return { missing: [...absent].sort(compareUtf8), undeclared: undeclaredEntries(zip, declared, RUNPACK_MANIFEST_FILE), mismatches, digestMatches, contents };
}

/**
 * Entries a manifest does not account for, sorted. The signature covers the manifest, and the
 * manifest lists the files: anything else in the archive is unsigned content riding along, so
 * Ward refuses it (the reference ignores extra runpack entries; `docs/compatibility.md`).
 */
export function undeclaredEntries(zip: ZipArchive, declared: ReadonlySet<string>, manifestFile: string): string[] {
  return zip.entries
    .map((e) => e.name)
    .filter((name) => name !== manifestFile && !declared.has(name))
    .sort(compareUtf8);
}
