import { describe, expect, it } from 'vitest';
import { digestJcs } from '../../src/canon/index.js';
import { buildAuthorizationPack, diffPacks, inspectPack, verifyPack, packVerified } from '../../src/pack/index.js';
import { demoPack, errorOf, json, OTHER_CONTENT, record, RETRIEVED_LATER, rezip, TEST_KEY } from './helpers.js';

describe('pack inspect', () => {
  it('shows manifest, run payload with the context summary, and run lineage', () => {
    const { bytes, manifest } = demoPack();
    const result = inspectPack(bytes);
    expect(result.pack_id).toBe(manifest.pack_id);
    expect(result.manifest?.['pack_id']).toBe(manifest.pack_id);
    expect(result.run_payload).toMatchObject({ context_ref_count: 3, context_privacy_mode: 'reference', refs_count: 3 });
    expect(result.run_lineage).toEqual({
      timeline_events: 2,
      receipt_count: 3,
      intent_results: [
        { intent_id: 'intent_1', tool_name: 'tool.search', status: 'ok' },
        { intent_id: 'intent_2', tool_name: 'tool.fetch', status: 'ok' },
        { intent_id: 'intent_3', tool_name: 'tool.summarize', status: 'ok' },
      ],
    });
  });

  it('inspects a bare runpack as a legacy run pack', () => {
    const runpack = record();
    const result = inspectPack(runpack.bytes);
    expect(result).toMatchObject({ legacy_type: 'runpack', pack_id: runpack.manifest.manifest_digest, pack_type: 'run' });
    expect(result.manifest).toBeUndefined();
  });

  it('treats an unparsable manifest as bad input (exit 6)', () => {
    const broken = rezip(demoPack().bytes, (f) => f.set('pack_manifest.json', Buffer.from('{"schema_id":1}')));
    expect(errorOf(() => inspectPack(broken)).exitCode).toBe(6);
  });
});

describe('pack diff', () => {
  it('finds no change between a pack and itself', () => {
    const { bytes } = demoPack();
    const diff = diffPacks(bytes, bytes);
    expect(diff.summary).toEqual({ changed: false, manifest_delta: false, context_drift_classification: 'none' });
    expect(diff.created_at).toBe('1980-01-01T00:00:00Z');
  });

  it('classifies a fresh run over the same context as no drift, though files change (Ward decision 7)', () => {
    const diff = diffPacks(demoPack().bytes, demoPack({ runId: 'run_demo_2' }).bytes);
    expect(diff.summary.context_drift_classification).toBe('none');
    expect(diff.summary.context_changed).toBeUndefined();
    expect(diff.summary.changed).toBe(true);
    expect(diff.summary.changed_files).toContain('run_payload.json');
  });

  it('classifies retrieval-time-only differences as runtime_only', () => {
    const diff = diffPacks(demoPack().bytes, demoPack({ input: RETRIEVED_LATER, runId: 'run_demo_2' }).bytes);
    expect(diff.summary).toMatchObject({ context_drift_classification: 'runtime_only', context_changed: true, context_runtime_only_changes: true });
  });

  it('classifies different context content as semantic', () => {
    const diff = diffPacks(demoPack().bytes, demoPack({ input: OTHER_CONTENT }).bytes);
    expect(diff.summary).toMatchObject({ context_drift_classification: 'semantic', context_changed: true, changed: true });
    expect(diff.summary.context_runtime_only_changes).toBeUndefined();
  });

  it('lists added and removed declared files between a runpack and its pack', () => {
    const pack = demoPack();
    const runpack = record({ signingKey: TEST_KEY });
    const diff = diffPacks(runpack.bytes, pack.bytes);
    expect(diff.left_pack_id).toBe(runpack.manifest.manifest_digest);
    expect(diff.summary.removed_files).toEqual(['intents.jsonl', 'refs.json', 'results.jsonl', 'run.json']);
    expect(diff.summary.added_files).toEqual(['context_envelope.json', 'proof_records.jsonl', 'run_payload.json', 'source/runpack.zip']);
    expect(diff.summary).toMatchObject({ manifest_delta: true, changed: true, context_drift_classification: 'none' });
  });
});

describe('authorization packs', () => {
  const traceId = 'a'.repeat(24);
  const trace = {
    schema_id: 'gait.gate.trace',
    schema_version: '1.0.0',
    created_at: '2026-02-18T00:00:00Z',
    trace_id: traceId,
    tool_name: 'payments.refund',
    verdict: 'allow',
    policy_digest: 'b'.repeat(64),
    intent_digest: 'c'.repeat(64),
    approval_token_ref: 'tok_1',
  };
  const audit = { schema_id: 'gait.gate.approval_audit_record', trace_id: traceId, approved: true };
  const files = {
    trace: { name: `trace_${traceId}.json`, bytes: json(trace) },
    audit: { name: `approval_audit_${traceId}.json`, bytes: json(audit) },
  };

  it('bundles a decision trace with its audit records and verifies', () => {
    const built = buildAuthorizationPack(files.trace, [files.audit], { producerVersion: '0.1.0', signingKey: TEST_KEY });
    expect(built.manifest.source_ref).toBe(traceId);
    expect(built.bundle.trace_digest).toBe(digestJcs(trace));
    expect(built.bundle.required_evidence).toEqual(['approval_audit']);
    const result = verifyPack(built.bytes, { keys: [TEST_KEY], requireSignature: true });
    expect(packVerified(result, true)).toBe(true);
    expect(inspectPack(built.bytes).authorization_payload).toMatchObject({ trace_id: traceId, linked_evidence_count: 2, required_evidence_count: 1 });
  });

  it('refuses a decision whose required audit is missing, or an audit of another trace', () => {
    expect(errorOf(() => buildAuthorizationPack(files.trace, [], { producerVersion: '0.1.0' })).message).toMatch(/needs evidence not given: approval_audit/);
    const foreign = { name: 'approval_audit_x.json', bytes: json({ ...audit, trace_id: 'other' }) };
    expect(errorOf(() => buildAuthorizationPack(files.trace, [foreign], { producerVersion: '0.1.0' })).exitCode).toBe(6);
  });
});
