import { digestJcs, parseJsonText, type JsonObject } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { summarizeRunpack, undeclaredEntries, type Refs } from '../runpack/index.js';
import { openZip, type ZipArchive } from '../zip/index.js';
import { parsePackManifest } from './manifest.js';
import { decodeRunPayload } from './payload.js';
import { PACK_MANIFEST_FILE, RUN_PAYLOAD_FILE, SOURCE_RUNPACK_FILE, type PackManifest, type RunPayload } from './types.js';

/**
 * A pack or legacy runpack opened for inspect and diff: declared facts only, no verification
 * (§2, §3). Payloads that do not decode are left out, as in the reference. Archives with entries
 * the manifest does not declare are refused (exit 2), as every Ward reader refuses them.
 */
export interface PackView {
  packId: string;
  packType: string;
  sourceRef: string;
  /** Digest of the stored manifest (signatures included), or the runpack manifest_digest. */
  manifestDigest: string;
  /** Declared path → sha256. */
  files: Map<string, string>;
  rawManifest?: JsonObject;
  runPayload?: RunPayload;
  /** The runpack inside a run pack (or the legacy runpack itself), as stored. */
  runpackBytes?: Buffer;
  /** A legacy runpack's normalized refs (read anyway to open it). */
  refs?: Refs;
  zip: ZipArchive;
  legacyType?: 'runpack';
}

export function openPackView(bytes: Uint8Array): PackView {
  const zip = openZip(bytes);
  const entry = zip.get(PACK_MANIFEST_FILE);
  if (!entry && zip.get('manifest.json')) return legacyView(bytes, zip);
  if (!entry) throw missingManifest();
  const raw = zip.read(entry);
  const manifest = parseForView(raw);
  // Declared facts only, but never beside content the manifest does not account for (as verify).
  const undeclared = undeclaredEntries(zip, new Set(manifest.contents.map((c) => c.path)), PACK_MANIFEST_FILE);
  if (undeclared.length > 0) throw new WardError(ERROR_CODES.PACK_VERIFY_FAILED, `undeclared pack entries: ${undeclared.join(', ')}`);
  const rawManifest = parseJsonText(raw.toString('utf8')) as JsonObject;
  const view: PackView = {
    packId: manifest.pack_id,
    packType: manifest.pack_type,
    sourceRef: manifest.source_ref,
    manifestDigest: digestJcs(rawManifest),
    files: new Map(manifest.contents.map((c) => [c.path, c.sha256.toLowerCase()])),
    rawManifest,
    zip,
  };
  if (manifest.pack_type === 'run') {
    const payload = bestEffort(() => decodeRunPayload(zip.read(zip.get(RUN_PAYLOAD_FILE)!)));
    if (payload) view.runPayload = payload;
    const source = zip.get(SOURCE_RUNPACK_FILE);
    const runpackBytes = source ? bestEffort(() => zip.read(source)) : undefined;
    if (runpackBytes) view.runpackBytes = runpackBytes;
  }
  return view;
}

function legacyView(bytes: Uint8Array, zip: ZipArchive): PackView {
  const summary = summarizeRunpack(bytes);
  const { manifest } = summary;
  return {
    packId: manifest.manifest_digest,
    packType: 'run',
    sourceRef: manifest.run_id,
    manifestDigest: manifest.manifest_digest,
    files: new Map(manifest.files.map((f) => [f.path, f.sha256.toLowerCase()])),
    runpackBytes: Buffer.from(bytes),
    refs: summary.refs,
    zip,
    legacyType: 'runpack',
  };
}

/** The refs context drift is judged on: the embedded runpack's, when it passes its integrity checks. */
export function viewRefs(view: PackView): Refs | undefined {
  if (view.refs) return view.refs;
  const bytes = view.runpackBytes;
  return bytes ? bestEffort(() => summarizeRunpack(bytes).refs) : undefined;
}

/** Inspect and diff show what decodes and leave out what does not, as the reference does. */
export function bestEffort<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

function missingManifest(): WardError {
  return new WardError(ERROR_CODES.PACK_INVALID, 'missing pack_manifest.json');
}

/** Inspect and diff treat an unparsable manifest as bad input (exit 6), as the reference does. */
function parseForView(raw: Buffer): PackManifest {
  try {
    return parsePackManifest(raw);
  } catch (err) {
    throw new WardError(ERROR_CODES.PACK_INVALID, (err as Error).message, { cause: err });
  }
}
