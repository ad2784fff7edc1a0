import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { openZip, type ZipArchive } from '../zip/index.js';
import { runpackReader, type FieldReader } from './decode.js';
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
  const reader = runpackReader('manifest');
  let raw: JsonValue;
  try {
    raw = parseJsonText(bytes.toString('utf8'));
  } catch (err) {
    throw reader.fail(`parse manifest.json: ${(err as Error).message}`);
  }
  const obj = reader.object(raw);
  const manifest: RunpackManifest = {
    schema_id: reader.string(obj, 'schema_id'),
    schema_version: reader.string(obj, 'schema_version'),
    created_at: reader.time(obj, 'created_at'),
    producer_version: reader.string(obj, 'producer_version'),
    run_id: reader.string(obj, 'run_id'),
    capture_mode: reader.string(obj, 'capture_mode'),
    files: (reader.array(obj, 'files') ?? []).map((f, i) => {
      const r = reader.at(`manifest.files[${i}]`);
      const file = r.object(f);
      return { path: r.string(file, 'path'), sha256: r.string(file, 'sha256') };
    }),
    manifest_digest: reader.string(obj, 'manifest_digest'),
  };
  const signatures = reader.array(obj, 'signatures');
  if (signatures && signatures.length > 0) manifest.signatures = signatures.map((s, i) => decodeSignature(s, reader.at(`manifest.signatures[${i}]`)));
  if (manifest.schema_id !== RUNPACK_MANIFEST_SCHEMA.id) throw reader.fail(`unsupported runpack manifest schema_id: ${manifest.schema_id}`);
  if (manifest.schema_version !== RUNPACK_MANIFEST_SCHEMA.version) {
    throw reader.fail(`unsupported runpack manifest schema_version: ${manifest.schema_version}`);
  }
  if (manifest.run_id.trim() === '') throw reader.fail('runpack manifest run_id is required');
  return { manifest, raw: obj };
}

export function decodeSignature(value: JsonValue, reader: FieldReader): ManifestSignature {
  const obj = reader.object(value);
  const signature: ManifestSignature = { alg: reader.string(obj, 'alg'), key_id: reader.string(obj, 'key_id'), sig: reader.string(obj, 'sig') };
  const digest = reader.string(obj, 'signed_digest');
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
  const reader = runpackReader('runpack');
  return {
    manifest: opened.stored.manifest,
    run: decodeRun(parseDocument(text(contents, 'run.json'), 'run.json'), reader.at('run')),
    intents: parseLines(text(contents, 'intents.jsonl'), 'intents.jsonl').map((v, i) => decodeIntent(v, reader.at(`intents[${i}]`))),
    results: parseLines(text(contents, 'results.jsonl'), 'results.jsonl').map((v, i) => decodeResult(v, reader.at(`results[${i}]`))),
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
    run: decodeRun(parseDocument(text(contents, 'run.json'), 'run.json'), runpackReader('run')),
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
  if (check.mismatches.length > 0 || !check.digestMatches) {
    const paths = [...check.mismatches.map((m) => m.path), ...(check.digestMatches ? [] : ['manifest.json'])];
    throw new WardError(ERROR_CODES.RUNPACK_INVALID, `runpack hash mismatch: ${paths.join(', ')}`);
  }
  const reader = runpackReader('runpack');
  const refs = normalizeRefs(decodeRefs(parseDocument(text(check.contents, 'refs.json'), 'refs.json'), reader.at('refs')), ERROR_CODES.RUNPACK_INVALID);
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

function parseLines(text: string, name: string): JsonValue[] {
  const out: JsonValue[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(parseJsonText(line));
    } catch (err) {
      throw new WardError(ERROR_CODES.RUNPACK_INVALID, `parse ${name} line ${i + 1}: ${(err as Error).message}`);
    }
  });
  return out;
}
