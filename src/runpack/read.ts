import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { openZip, type ZipArchive } from '../zip/index.js';
import { decodeError, decodeJsonText, expectRootObject, readObjectArray, readString } from '../context/index.js';
import { readTimeText, RUNPACK_DECODER } from './decode.js';
import { decodeIntent, decodeRefs, decodeResult, decodeRun } from './records.js';
import { normalizeRefs } from './refs.js';
import { RUNPACK_FILES, RUNPACK_MANIFEST_SCHEMA, type ManifestSignature, type Refs, type Runpack, type RunpackManifest, type RunRecord } from './types.js';
import { checkRunpackFiles } from './files.js';

/** The manifest as stored: the decoded record plus the raw object (signatures cover unknown keys too). */
export interface StoredManifest {
  manifest: RunpackManifest;
  raw: JsonObject;
}

/** Parse `manifest.json` leniently and check its identity fields (§1.3 step 2). */
export function decodeRunpackManifest(bytes: Buffer): StoredManifest {
  const d = RUNPACK_DECODER;
  const obj = expectRootObject(d, decodeJsonText(d, bytes.toString('utf8')));
  const path = 'manifest';
  const manifest: RunpackManifest = {
    schema_id: readString(d, obj, 'schema_id', path),
    schema_version: readString(d, obj, 'schema_version', path),
    created_at: readTimeText(d, obj, 'created_at', path),
    producer_version: readString(d, obj, 'producer_version', path),
    run_id: readString(d, obj, 'run_id', path),
    capture_mode: readString(d, obj, 'capture_mode', path),
    files: readObjectArray(d, obj, 'files', 'FileEntry', path).map((f) => ({
      path: readString(d, f, 'path', 'manifest.files'),
      sha256: readString(d, f, 'sha256', 'manifest.files'),
    })),
    manifest_digest: readString(d, obj, 'manifest_digest', path),
  };
  const signatures = readObjectArray(d, obj, 'signatures', 'Signature', path).map(decodeSignature);
  if (signatures.length > 0) manifest.signatures = signatures;
  if (manifest.schema_id !== RUNPACK_MANIFEST_SCHEMA.id) throw decodeError(d, `unsupported runpack manifest schema_id: ${manifest.schema_id}`);
  if (manifest.schema_version !== RUNPACK_MANIFEST_SCHEMA.version) {
    throw decodeError(d, `unsupported runpack manifest schema_version: ${manifest.schema_version}`);
  }
  if (manifest.run_id.trim() === '') throw decodeError(d, 'runpack manifest run_id is required');
  return { manifest, raw: obj };
}

function decodeSignature(obj: JsonObject): ManifestSignature {
  const d = RUNPACK_DECODER;
  const path = 'manifest.signatures';
  const signature: ManifestSignature = { alg: readString(d, obj, 'alg', path), key_id: readString(d, obj, 'key_id', path), sig: readString(d, obj, 'sig', path) };
  const digest = readString(d, obj, 'signed_digest', path);
  if (digest) signature.signed_digest = digest;
  return signature;
}

/** Open a runpack zip and its manifest; duplicate names and a missing manifest are errors. */
export function openRunpack(bytes: Uint8Array): OpenedRunpack {
  const zip = openZip(bytes);
  const entry = zip.get('manifest.json');
  if (!entry) throw new WardError(ERROR_CODES.RUNPACK_INVALID, 'missing manifest.json');
  return { zip, stored: decodeRunpackManifest(zip.read(entry)) };
}

/**
 * `ReadRunpack`: the integrity checks of verify, failing hard, then the records decoded and the
 * refs normalized. Evidence mode `required` without a context_set_digest is rejected.
 */
export function readRunpack(bytes: Uint8Array): Runpack {
  return readOpenedRunpack(openRunpack(bytes));
}

/** `readRunpack` for an archive already opened with `openRunpack`. */
export function readOpenedRunpack(opened: OpenedRunpack): Runpack {
  const { contents, refs } = checkedContents(opened);
  return {
    manifest: opened.stored.manifest,
    run: decodeRun(parseDocument(text(contents, 'run.json'), 'run.json'), RUNPACK_DECODER),
    intents: parseLines(text(contents, 'intents.jsonl'), 'intents.jsonl').map((o) => decodeIntent(o, RUNPACK_DECODER)),
    results: parseLines(text(contents, 'results.jsonl'), 'results.jsonl').map((o) => decodeResult(o, RUNPACK_DECODER)),
    refs,
  };
}

/** What diff and the pack payload check need from a runpack: the same checks, records counted, not decoded. */
export interface RunpackSummary {
  manifest: RunpackManifest;
  run: RunRecord;
  intentsCount: number;
  resultsCount: number;
  refs: Refs;
}

export function summarizeRunpack(bytes: Uint8Array): RunpackSummary {
  return summarizeOpenedRunpack(openRunpack(bytes));
}

export function summarizeOpenedRunpack(opened: OpenedRunpack): RunpackSummary {
  const { contents, refs } = checkedContents(opened);
  return {
    manifest: opened.stored.manifest,
    run: decodeRun(parseDocument(text(contents, 'run.json'), 'run.json'), RUNPACK_DECODER),
    intentsCount: countLines(contents.get('intents.jsonl')!),
    resultsCount: countLines(contents.get('results.jsonl')!),
    refs,
  };
}

export interface OpenedRunpack {
  zip: ZipArchive;
  stored: StoredManifest;
}

/** The summary of a fully read runpack. */
export function summaryOf(runpack: Runpack): RunpackSummary {
  return {
    manifest: runpack.manifest,
    run: runpack.run,
    intentsCount: runpack.intents.length,
    resultsCount: runpack.results.length,
    refs: runpack.refs,
  };
}

/** The hard integrity checks of `ReadRunpack`, then the refs decoded and normalized. */
function checkedContents({ zip, stored }: OpenedRunpack): { contents: Map<string, Buffer>; refs: Refs } {
  const check = checkRunpackFiles(zip, stored.manifest);
  if (check.missing.length > 0) throw new WardError(ERROR_CODES.RUNPACK_INVALID, `missing runpack files: ${check.missing.join(', ')}`);
  if (check.undeclared.length > 0) throw new WardError(ERROR_CODES.RUNPACK_INVALID, `undeclared runpack entries: ${check.undeclared.join(', ')}`);
  if (check.mismatches.length > 0 || !check.digestMatches) {
    const paths = [...check.mismatches.map((m) => m.path), ...(check.digestMatches ? [] : ['manifest.json'])];
    throw new WardError(ERROR_CODES.RUNPACK_INVALID, `runpack hash mismatch: ${paths.join(', ')}`);
  }
  const refs = normalizeRefs(decodeRefs(parseDocument(text(check.contents, 'refs.json'), 'refs.json'), RUNPACK_DECODER), ERROR_CODES.RUNPACK_INVALID);
  if (refs.context_evidence_mode === 'required' && !refs.context_set_digest) {
    throw new WardError(ERROR_CODES.RUNPACK_INVALID, 'context evidence mode required but context_set_digest is missing');
  }
  return { contents: check.contents, refs };
}

function text(contents: ReadonlyMap<string, Buffer>, name: (typeof RUNPACK_FILES)[number]): string {
  return contents.get(name)!.toString('utf8');
}

/** Non-blank lines, as `parseLines` would decode them, without decoding. */
function countLines(bytes: Buffer): number {
  let count = 0;
  for (const line of bytes.toString('utf8').split('\n')) if (line.trim() !== '') count++;
  return count;
}

function parseDocument(text: string, name: string): JsonObject {
  try {
    const value = parseJsonText(text);
    if (isJsonObject(value)) return value;
  } catch (err) {
    throw new WardError(ERROR_CODES.RUNPACK_INVALID, `parse ${name}: ${(err as Error).message}`);
  }
  throw new WardError(ERROR_CODES.RUNPACK_INVALID, `parse ${name}: expected a JSON object`);
}

function parseLines(text: string, name: string): JsonObject[] {
  const out: JsonObject[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: JsonValue;
    try {
      value = parseJsonText(line);
    } catch (err) {
      throw new WardError(ERROR_CODES.RUNPACK_INVALID, `parse ${name} line ${i + 1}: ${(err as Error).message}`);
    }
    if (!isJsonObject(value)) throw new WardError(ERROR_CODES.RUNPACK_INVALID, `parse ${name} line ${i + 1}: expected a JSON object`);
    out.push(value);
  });
  return out;
}
