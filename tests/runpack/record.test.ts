import { describe, expect, it } from 'vitest';
import { digestJcs, jcs, sha256Hex } from '../../src/canon/index.js';
import { parseContextEnvelope } from '../../src/context/index.js';
import { openZip } from '../../src/zip/index.js';
import { computeManifestDigest, readRunpack, REFERENCE_STRIP_WARNING, RAW_CAPTURE_WARNING } from '../../src/runpack/index.js';
import { DEMO_INPUT, FIXTURES, TEST_KEY, errorOf, mutateInput, record } from './helpers.js';
import { readFileSync } from 'node:fs';

function entries(bytes: Buffer): Map<string, string> {
  const zip = openZip(bytes);
  return new Map(zip.entries.map((e) => [e.name, zip.read(e).toString('utf8')]));
}

describe('run record', () => {
  it('writes exactly the five runpack entries with JCS content', () => {
    const files = entries(record().bytes);
    expect([...files.keys()]).toEqual(['intents.jsonl', 'manifest.json', 'refs.json', 'results.jsonl', 'run.json']);
    const run = JSON.parse(files.get('run.json')!);
    expect(files.get('run.json')).toBe(jcs(run));
    expect(files.get('intents.jsonl')!.endsWith('\n')).toBe(true);
    expect(files.get('intents.jsonl')!.trim().split('\n')).toHaveLength(3);
  });

  it('is byte-for-byte deterministic for the same input', () => {
    const a = record({ signingKey: TEST_KEY });
    const b = record({ signingKey: TEST_KEY });
    expect(a.bytes.equals(b.bytes)).toBe(true);
    expect(a.manifest.manifest_digest).toBe(b.manifest.manifest_digest);
  });

  it('computes manifest_digest over the manifest with an empty digest and no signatures', () => {
    const { manifest } = record({ signingKey: TEST_KEY });
    const { signatures: _s, ...body } = manifest;
    expect(manifest.manifest_digest).toBe(digestJcs({ ...body, manifest_digest: '' }));
    expect(computeManifestDigest(manifest)).toBe(manifest.manifest_digest);
    expect(manifest.files.map((f) => f.path)).toEqual(['intents.jsonl', 'refs.json', 'results.jsonl', 'run.json']);
  });

  it('lists each payload file with the sha256 of its stored bytes', () => {
    const rec = record();
    const files = entries(rec.bytes);
    for (const file of rec.manifest.files) expect(file.sha256).toBe(sha256Hex(files.get(file.path)!));
  });

  it('fills digests from normalization payloads and inline payloads, then strips raw payloads', () => {
    const rec = record();
    const pack = readRunpack(rec.bytes);
    expect(pack.intents[0]!.args_digest).toBe(digestJcs({ query: 'refund policy' }));
    expect(pack.intents[1]!.args_digest).toBe(digestJcs({ url: 'https://example.com/policy' }));
    expect(pack.results[2]!.result_digest).toBe(digestJcs({ summary: 'refunds within 30 days' }));
    expect(pack.intents.every((i) => i.args === undefined)).toBe(true);
    expect(pack.results.every((r) => r.result === undefined)).toBe(true);
    expect(rec.warnings).toEqual([REFERENCE_STRIP_WARNING]);
  });

  it('keeps raw payloads in raw capture and warns', () => {
    const rec = record({ captureMode: 'raw' });
    const pack = readRunpack(rec.bytes);
    expect(pack.intents[0]!.args).toEqual({ query: 'refund policy' });
    expect(rec.manifest.capture_mode).toBe('raw');
    expect(rec.warnings).toEqual([RAW_CAPTURE_WARNING]);
  });

  it('inherits headers from the run and normalizes refs', () => {
    const pack = readRunpack(record().bytes);
    expect(pack.intents[0]).toMatchObject({ schema_id: 'gait.runpack.intent', created_at: '2026-02-05T10:00:00Z', run_id: 'run_demo' });
    expect(pack.refs.receipts.map((r) => r.ref_id)).toEqual(['ref_1', 'ref_2', 'ref_3']);
    expect(pack.refs.receipts[0]!.retrieved_at).toBe('2026-02-05T10:00:00Z');
    expect(pack.refs.receipts[0]!.immutability).toBe('immutable');
    expect(pack.refs.receipts[0]!.query_digest).toBe(sha256Hex('q1'));
    expect(pack.refs.context_ref_count).toBe(3);
    expect(pack.run.timeline![1]!.ts).toBe('2026-02-05T10:00:01.25Z');
  });

  it('overrides every run_id with --run-id', () => {
    const pack = readRunpack(record({ runId: 'run_other' }).bytes);
    expect([pack.run.run_id, pack.refs.run_id, pack.intents[0]!.run_id, pack.results[0]!.run_id, pack.manifest.run_id]).toEqual(
      Array(5).fill('run_other'),
    );
  });

  it('rejects missing or path-unsafe run ids, bad capture modes and missing digests (usage, exit 6)', () => {
    expect(errorOf(() => record({}, mutateInput((j) => delete j['run']['run_id'])))).toMatchObject({ exitCode: 6, message: expect.stringContaining('run_id is required') });
    expect(errorOf(() => record({ runId: '../x' })).exitCode).toBe(6);
    expect(errorOf(() => record({ captureMode: 'full' })).message).toBe('capture mode must be reference or raw');
    const noDigest = mutateInput((j) => delete j['intents'][2]['args_digest']);
    expect(errorOf(() => record({}, noDigest)).message).toBe('intent intent_3 requires args_digest or normalization.intent_args');
    const mismatch = mutateInput((j) => (j['intents'][0]['args_digest'] = sha256Hex('other')));
    expect(errorOf(() => record({}, mismatch)).message).toBe('intent intent_1 args digest mismatch');
  });

  it('requires --unsafe-context-raw for raw redaction receipts', () => {
    const raw = mutateInput((j) => (j['refs']['receipts'][0]['redaction_mode'] = 'RAW'));
    expect(errorOf(() => record({}, raw)).exitCode).toBe(6);
    expect(record({ unsafeContextRaw: true }, raw).manifest.run_id).toBe('run_demo');
  });

  it('rejects required evidence without a context_set_digest', () => {
    expect(errorOf(() => record({ evidenceMode: 'required' })).message).toBe('context evidence mode required but context_set_digest is missing');
  });

  it('binds a context envelope: receipts replaced, digest and mode taken from it', () => {
    const envelope = parseContextEnvelope(readFileSync(`${FIXTURES}runs/context_envelope_demo.json`, 'utf8'));
    const pack = readRunpack(record({ envelope, evidenceMode: 'required' }).bytes);
    expect(pack.refs.receipts.map((r) => r.ref_id)).toEqual(['doc_a']);
    expect(pack.refs.context_set_digest).toBe(envelope.context_set_digest);
    expect(pack.refs.context_evidence_mode).toBe('required');
    expect(pack.refs.context_ref_count).toBe(1);
  });

  it('binds gait.trace receipts to their intent and result digests', () => {
    const input = mutateInput((j) => {
      j['refs']['receipts'] = [{ ref_id: 'trace_intent_2', source_type: 'gait.trace', source_locator: 'trace://x', retrieved_at: '2026-02-05T10:00:00Z', redaction_mode: 'reference' }];
    });
    const pack = readRunpack(record({}, input).bytes);
    const intent = pack.intents[1]!;
    expect(pack.refs.receipts[0]!.query_digest).toBe(digestJcs({ tool_name: intent.tool_name, args_digest: intent.args_digest }));
    expect(pack.refs.receipts[0]!.content_digest).toBe(pack.results[1]!.result_digest);
  });

  it('rejects refs whose context_set_digest does not match their receipts', () => {
    const input = mutateInput((j) => (j['refs']['context_set_digest'] = sha256Hex('nope')));
    expect(errorOf(() => record({}, input)).message).toBe('context_set_digest mismatch');
  });

  it('rejects fields of the wrong JSON type as usage errors, Go-style', () => {
    const input = mutateInput((j) => (j['intents'][0]['tool_name'] = 5));
    expect(errorOf(() => record({}, input))).toMatchObject({
      exitCode: 6,
      message: 'parse run record: json: cannot unmarshal number into Go struct field RunRecordInput.intents.tool_name of type string',
    });
    expect(errorOf(() => record({}, '[]')).exitCode).toBe(6);
  });

  it('accepts the fixture as given with lenient unknown keys', () => {
    const input = mutateInput((j) => (j['run']['unknown_extra'] = 1));
    expect(record({}, input).manifest.manifest_digest).toBe(record({}, DEMO_INPUT).manifest.manifest_digest);
  });
});
