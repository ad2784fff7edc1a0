import { expectRootObject, readObjectArray, readString, readTime, rejectUnknownFields, type Decoder } from '../context/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { digestJcs, formatRFC3339Nano, isSha256Hex, isZeroTime, jcs, parseStrictJson, type JsonObject, type JsonValue } from '../canon/index.js';
import { PACK_MANIFEST_SCHEMA, PACK_TYPES, type PackContent, type PackManifest } from './types.js';
import type { ManifestSignature } from '../runpack/index.js';

const DECODER: Decoder = { prefix: 'parse manifest: ', root: 'Manifest', code: ERROR_CODES.PACK_VERIFY_FAILED };
const MANIFEST_KEYS = new Set(['schema_id', 'schema_version', 'created_at', 'producer_version', 'pack_id', 'pack_type', 'source_ref', 'contents', 'signatures']);
const CONTENT_KEYS = new Set(['path', 'sha256', 'type']);
const SIGNATURE_KEYS = new Set(['alg', 'key_id', 'sig', 'signed_digest']);

/** The manifest as a JSON object (`signatures` only when present). */
export function packManifestJson(manifest: PackManifest): JsonObject {
  const out = { ...manifest } as unknown as JsonObject;
  if (!manifest.signatures || manifest.signatures.length === 0) delete out['signatures'];
  return out;
}

/** The object a pack signature covers: the manifest with pack_id filled and no signatures. */
export function packSignable(manifest: PackManifest): JsonObject {
  const body = packManifestJson(manifest);
  delete body['signatures'];
  return body;
}

/** pack_id = digest(manifest with `pack_id: ""` kept and `signatures` removed). */
export function computePackId(manifest: PackManifest): string {
  return digestJcs(packSignable({ ...manifest, pack_id: '' }));
}

export function encodePackManifest(manifest: PackManifest): Buffer {
  return Buffer.from(jcs(packManifestJson(manifest)));
}

/** `type` from the lowercased extension (§1.5). */
export function contentType(path: string): string {
  const lower = path.toLowerCase();
  if (lower.endsWith('.jsonl')) return 'jsonl';
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.zip')) return 'zip';
  return 'blob';
}

/**
 * Strict parse and validation of `pack_manifest.json` (§1.7 step 3): unknown fields and
 * duplicate keys rejected at every level, required fields and formats checked. Errors are
 * verification failures (exit 2) prefixed `parse manifest:`.
 */
export function parsePackManifest(bytes: Buffer): PackManifest {
  const root = expectRootObject(DECODER, parseSignedJson(bytes));
  rejectUnknownFields(DECODER, root, MANIFEST_KEYS);
  const createdAt = readTime(DECODER, root, 'created_at');
  const contentsValue = root['contents'];
  if (!Array.isArray(contentsValue)) throw fail('contents is required');
  const manifest: PackManifest = {
    schema_id: readString(DECODER, root, 'schema_id'),
    schema_version: readString(DECODER, root, 'schema_version'),
    created_at: formatRFC3339Nano(createdAt),
    producer_version: readString(DECODER, root, 'producer_version'),
    pack_id: readString(DECODER, root, 'pack_id'),
    pack_type: readString(DECODER, root, 'pack_type'),
    source_ref: readString(DECODER, root, 'source_ref'),
    contents: readObjectArray(DECODER, root, 'contents', 'PackEntry').map(decodeContent),
  };
  const signatures = readObjectArray(DECODER, root, 'signatures', 'Signature').map(decodeSignature);
  if (signatures.length > 0) manifest.signatures = signatures;

  if (manifest.schema_id !== PACK_MANIFEST_SCHEMA.id) throw fail(`unsupported schema_id: ${manifest.schema_id}`);
  if (manifest.schema_version !== PACK_MANIFEST_SCHEMA.version) throw fail(`unsupported schema_version: ${manifest.schema_version}`);
  if (!(PACK_TYPES as readonly string[]).includes(manifest.pack_type)) throw fail(`unsupported pack_type: ${manifest.pack_type}`);
  if (manifest.source_ref.trim() === '') throw fail('source_ref is required');
  if (isZeroTime(createdAt)) throw fail('created_at is required');
  if (manifest.producer_version.trim() === '') throw fail('producer_version is required');
  if (!isSha256Hex(manifest.pack_id.toLowerCase())) throw fail('pack_id must be sha256 hex');
  return manifest;
}

function decodeContent(obj: JsonObject): PackContent {
  rejectUnknownFields(DECODER, obj, CONTENT_KEYS);
  const content = { path: readString(DECODER, obj, 'path', 'contents'), sha256: readString(DECODER, obj, 'sha256', 'contents'), type: readString(DECODER, obj, 'type', 'contents') };
  if (content.path.trim() === '') throw fail('contents entry path is required');
  if (!isSha256Hex(content.sha256.toLowerCase())) throw fail(`contents entry ${content.path} sha256 must be sha256 hex`);
  if (content.type.trim() === '') throw fail(`contents entry ${content.path} type is required`);
  return content;
}

function decodeSignature(obj: JsonObject): ManifestSignature {
  rejectUnknownFields(DECODER, obj, SIGNATURE_KEYS);
  const signature: ManifestSignature = {
    alg: readString(DECODER, obj, 'alg', 'signatures'),
    key_id: readString(DECODER, obj, 'key_id', 'signatures'),
    sig: readString(DECODER, obj, 'sig', 'signatures'),
  };
  const digest = readString(DECODER, obj, 'signed_digest', 'signatures');
  if (!signature.alg || !signature.key_id || !signature.sig) throw fail('signature requires alg, key_id and sig');
  if (digest) {
    if (!isSha256Hex(digest.toLowerCase())) throw fail('signature signed_digest must be sha256 hex');
    signature.signed_digest = digest;
  }
  return signature;
}

/** Signed JSON: a repeated key could show readers one value while the digest covers another. */
export function parseSignedJson(bytes: Buffer): JsonValue {
  try {
    return parseStrictJson(bytes.toString('utf8'));
  } catch (err) {
    throw fail((err as Error).message);
  }
}

function fail(message: string): WardError {
  return new WardError(ERROR_CODES.PACK_VERIFY_FAILED, `parse manifest: ${message}`);
}

/** Best-effort schema id of a manifest that failed strict parsing (legacy guard packs). */
export function looseSchemaId(bytes: Buffer): string {
  try {
    const value = JSON.parse(bytes.toString('utf8')) as JsonValue;
    return value && typeof value === 'object' && !Array.isArray(value) && typeof value['schema_id'] === 'string' ? value['schema_id'] : '';
  } catch {
    return '';
  }
}
