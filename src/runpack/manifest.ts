import { digestJcs, jcs, sha256Hex, type JsonObject, type JsonValue } from '../canon/index.js';
import type { IntentRecord, ManifestFile, Refs, ResultRecord, RunRecord, RunpackManifest } from './types.js';

/** The runpack's manifest as a JSON object, `signatures` only when present. */
export function manifestJson(manifest: RunpackManifest): JsonObject {
  const out = { ...manifest } as unknown as JsonObject;
  if (!manifest.signatures || manifest.signatures.length === 0) delete out['signatures'];
  return out;
}

/** `manifest_digest` = digest(manifest with `manifest_digest: ""` kept and `signatures` removed). */
export function computeManifestDigest(manifest: RunpackManifest): string {
  const body = manifestJson({ ...manifest, manifest_digest: '' });
  delete body['signatures'];
  return digestJcs(body);
}

/** The bytes of the four payload files, as the reference writes them: JCS, JSONL lines `\n`-terminated. */
export function encodeRunpackFiles(run: RunRecord, intents: readonly IntentRecord[], results: readonly ResultRecord[], refs: Refs): Map<string, Buffer> {
  return new Map([
    ['intents.jsonl', jsonLines(intents as unknown as JsonValue[])],
    ['refs.json', Buffer.from(jcs(refs as unknown as JsonValue))],
    ['results.jsonl', jsonLines(results as unknown as JsonValue[])],
    ['run.json', Buffer.from(jcs(run as unknown as JsonValue))],
  ]);
}

function jsonLines(records: readonly JsonValue[]): Buffer {
  let text = '';
  for (const record of records) text += jcs(record) + '\n';
  return Buffer.from(text);
}

/** `files[]`: path and sha256 of each payload file, sorted by path. */
export function manifestFiles(files: ReadonlyMap<string, Buffer>): ManifestFile[] {
  return [...files.keys()].sort().map((path) => ({ path, sha256: sha256Hex(files.get(path)!) }));
}
