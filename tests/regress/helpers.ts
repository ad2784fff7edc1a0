import { readFileSync } from 'node:fs';
import { jcs, type JsonObject, type JsonValue } from '../../src/canon/index.js';
import { parseContextEnvelope } from '../../src/context/index.js';
import { computeManifestDigest, readRunpack, type RunpackManifest } from '../../src/runpack/index.js';
import { fixtureMetaFor, loadCandidate, type FixtureMeta, type FixtureUnderTest } from '../../src/regress/index.js';
import { sha256Hex } from '../../src/canon/index.js';
import { openZip, writeDeterministicZip } from '../../src/zip/index.js';
import { DEMO_INPUT, FIXTURES, mutateInput, record } from '../runpack/helpers.js';

export { DEMO_INPUT, FIXTURES, mutateInput, record };

export const ENVELOPE_TEXT = readFileSync(`${FIXTURES}runs/context_envelope_demo.json`, 'utf8');

/** A runpack of the demo run (three intents, three results, three receipts). */
export function demoRunpack(options: { runId?: string; input?: string; envelope?: string } = {}): Buffer {
  return record(
    {
      ...(options.runId ? { runId: options.runId } : {}),
      ...(options.envelope ? { envelope: parseContextEnvelope(options.envelope), evidenceMode: 'required' } : {}),
    },
    options.input,
  ).bytes;
}

/** The demo envelope with its one record retrieved at another time (same source and content). */
export function envelopeRetrievedLater(): string {
  const env = JSON.parse(ENVELOPE_TEXT) as JsonObject;
  (env['records'] as JsonObject[])[0]!['retrieved_at'] = '2026-02-05T09:59:30Z';
  return JSON.stringify(env);
}

/** The demo envelope pointing at other content. */
export function envelopeOtherContent(): string {
  const env = JSON.parse(ENVELOPE_TEXT) as JsonObject;
  (env['records'] as JsonObject[])[0]!['content_digest'] = 'e'.repeat(64);
  return JSON.stringify(env);
}

/**
 * Rewrite a runpack's files and manifest and seal it again (file hashes and manifest digest
 * recomputed, signatures dropped): a consistent runpack with whatever content a test needs.
 */
export function reseal(bytes: Buffer, mutate: { files?: (files: Map<string, Buffer>) => void; manifest?: (m: RunpackManifest) => void }): Buffer {
  const zip = openZip(bytes);
  const files = new Map(zip.entries.filter((e) => !e.isDirectory).map((e) => [e.name, zip.read(e)]));
  files.delete('manifest.json');
  mutate.files?.(files);
  const manifest = JSON.parse(zip.read(zip.get('manifest.json')!).toString('utf8')) as RunpackManifest;
  delete manifest.signatures;
  manifest.files = [...files.keys()].sort().map((path) => ({ path, sha256: sha256Hex(files.get(path)!) }));
  mutate.manifest?.(manifest);
  manifest.manifest_digest = computeManifestDigest(manifest);
  files.set('manifest.json', Buffer.from(jcs(manifest as unknown as JsonValue)));
  return writeDeterministicZip([...files].map(([path, data]) => ({ path, data })));
}

/** Edit every JSON line of a runpack file. */
export function editLines(files: Map<string, Buffer>, name: string, edit: (record: JsonObject, index: number) => void): void {
  const lines = files.get(name)!.toString('utf8').split('\n').filter((l) => l.trim() !== '');
  files.set(name, Buffer.from(lines.map((l, i) => { const r = JSON.parse(l) as JsonObject; edit(r, i); return jcs(r); }).join('\n') + '\n'));
}

export function editJson(files: Map<string, Buffer>, name: string, edit: (record: JsonObject) => void): void {
  const r = JSON.parse(files.get(name)!.toString('utf8')) as JsonObject;
  edit(r);
  files.set(name, Buffer.from(jcs(r)));
}

/** A fixture as `regress run` loads it, with optional meta overrides and candidate. */
export function fixtureOf(bytes: Buffer, overrides: Partial<FixtureMeta> = {}, candidate?: Buffer | { missing: string }): FixtureUnderTest {
  let runpack;
  try {
    runpack = readRunpack(bytes);
  } catch {
    runpack = undefined;
  }
  const base = runpack ? fixtureMetaFor('demo', runpack) : { schema_id: 'gait.regress.fixture', schema_version: '1.0.0', name: 'demo', run_id: 'run_demo', runpack: 'runpack.zip', expected_replay_exit_code: 0 };
  const meta: FixtureMeta = { ...base, ...overrides };
  const c =
    candidate === undefined
      ? loadCandidate('fixtures/demo/runpack.zip', bytes)
      : Buffer.isBuffer(candidate)
        ? loadCandidate('candidate.zip', candidate)
        : ({ ok: false, display: candidate.missing, code: 'candidate_path_invalid', error: 'not found' } as const);
  return { meta, runpackPath: 'fixtures/demo/runpack.zip', bytes, runpack, candidate: c };
}
