import { afterAll, describe, expect, it } from 'vitest';
import {
  gradeContextConformance,
  gradeDiff,
  gradeExpectedExitCode,
  gradeSchemaValidation,
  gradeTrajectory,
  REGRESS_REASON_CODES,
  gradeFixture,
  fixtureMetaFor,
  stubType,
  type GraderOutcome,
} from '../../src/regress/index.js';
import { readRunpack } from '../../src/runpack/index.js';
import { demoRunpack, editJson, editLines, ENVELOPE_TEXT, envelopeOtherContent, envelopeRetrievedLater, fixtureOf, mutateInput, record, reseal } from './helpers.js';

/** Every reason code a grader returned in this file; afterAll checks the registry is covered. */
const seen = new Set<string>();
function graded(outcome: GraderOutcome): GraderOutcome {
  for (const code of outcome.reason_codes) seen.add(code);
  return outcome;
}

const DEMO = demoRunpack();
const FLAGS = { contextConformance: false, allowContextRuntimeDrift: false };

afterAll(() => {
  const graderCodes = Object.entries(REGRESS_REASON_CODES)
    .filter(([, info]) => (info.source as string) !== 'replay')
    .map(([code]) => code);
  expect(graderCodes.filter((c) => !seen.has(c))).toEqual([]);
});

describe('schema_validation', () => {
  it('passes an intact runpack and counts its records', () => {
    const r = graded(gradeSchemaValidation(fixtureOf(DEMO)));
    expect(r).toEqual({ status: 'pass', reason_codes: [], details: { missing_files: null, hash_mismatches: 0, intent_records: 3, result_records: 3, reference_receipts: 3 } });
  });

  it('fails bytes that are not a runpack with schema_validation_error', () => {
    const r = graded(gradeSchemaValidation(fixtureOf(Buffer.from('not a zip'))));
    expect(r.status).toBe('fail');
    expect(r.reason_codes).toEqual(['schema_validation_error']);
  });

  it('reports missing files and hash mismatches', () => {
    const missing = reseal(DEMO, { manifest: (m) => m.files.push({ path: 'extra.json', sha256: 'a'.repeat(64) }) });
    const gone = graded(gradeSchemaValidation(fixtureOf(missing)));
    expect(gone.reason_codes).toEqual(['missing_files']);
    expect(gone.details['missing_files']).toEqual(['extra.json']);
    const tampered = reseal(DEMO, { manifest: (m) => (m.files[0]!.sha256 = 'b'.repeat(64)) });
    const r = graded(gradeSchemaValidation(fixtureOf(tampered)));
    expect(r.reason_codes).toEqual(['hash_mismatch']);
    expect(r.details['hash_mismatches']).toBe(1);
  });

  it('reports records that do not decode as runpack_parse_error', () => {
    const bad = reseal(DEMO, { files: (f) => editLines(f, 'intents.jsonl', (rec) => (rec['tool_name'] = 42)) });
    expect(graded(gradeSchemaValidation(fixtureOf(bad))).reason_codes).toEqual(['runpack_parse_error']);
  });

  it('names each record kind whose schema is wrong', () => {
    const bad = reseal(DEMO, {
      files: (f) => {
        editJson(f, 'run.json', (r) => (r['schema_id'] = 'other.run'));
        editJson(f, 'refs.json', (r) => (r['schema_version'] = '2.0.0'));
        editLines(f, 'intents.jsonl', (r, i) => i === 1 && (r['args_digest'] = ''));
        editLines(f, 'results.jsonl', (r) => (r['schema_id'] = 'other.result'));
      },
      manifest: (m) => (m.capture_mode = 'everything'),
    });
    const r = graded(gradeSchemaValidation(fixtureOf(bad)));
    expect(r.status).toBe('fail');
    expect(r.reason_codes).toEqual(['manifest_schema_invalid', 'run_schema_invalid', 'refs_schema_invalid', 'intent_schema_invalid', 'result_schema_invalid']);
  });
});

describe('expected_exit_code', () => {
  it('passes when every intent has a result (stub replay exits 0)', () => {
    const r = graded(gradeExpectedExitCode(fixtureOf(DEMO)));
    expect(r).toEqual({ status: 'pass', reason_codes: [], details: { expected_exit_code: 0, actual_exit_code: 0, missing_results: [] } });
  });

  it('fails with unexpected_exit_code when an intent has neither result nor stub and the fixture expects 0 (as the reference writes it)', () => {
    const input = mutateInput((j) => {
      j['intents'][2]['tool_name'] = 'tool.summarize';
      j['results'].pop();
    });
    const r = graded(gradeExpectedExitCode(fixtureOf(demoRunpack({ input }), { expected_replay_exit_code: 0 })));
    expect(r.status).toBe('fail');
    expect(r.reason_codes).toEqual(['unexpected_exit_code']);
    expect(r.details).toMatchObject({ expected_exit_code: 0, actual_exit_code: 2, missing_results: ['intent_3'] });
    // ...and passes once the fixture expects exit 2.
    expect(gradeExpectedExitCode(fixtureOf(demoRunpack({ input }), { expected_replay_exit_code: 2 })).status).toBe('pass');
  });

  it('init records what the run replays to: 2 for a run with an unstubbable intent without result, so a fresh fixture passes', () => {
    const input = mutateInput((j) => {
      j['intents'][2]['tool_name'] = 'tool.summarize';
      j['results'].pop();
    });
    const runpack = demoRunpack({ input });
    expect(fixtureMetaFor('demo', readRunpack(runpack)).expected_replay_exit_code).toBe(2);
    expect(fixtureMetaFor('demo', readRunpack(DEMO)).expected_replay_exit_code).toBe(0);
    expect(graded(gradeExpectedExitCode(fixtureOf(runpack))).status).toBe('pass');
  });

  it('lists missing results sorted by intent id, as the reference does', () => {
    const input = mutateInput((j) => {
      j['intents'][0]['intent_id'] = 'intent_z';
      j['intents'][0]['tool_name'] = 'tool.think';
      j['results'] = j['results'].filter((r: { intent_id: string }) => r.intent_id !== 'intent_1' && r.intent_id !== 'intent_3');
    });
    const r = graded(gradeExpectedExitCode(fixtureOf(demoRunpack({ input }), { expected_replay_exit_code: 2 })));
    expect(r.details['missing_results']).toEqual(['intent_3', 'intent_z']);
  });

  it('stubs http, file, db and queue tools by name, as the reference replay does', () => {
    expect(['tool.fetch', 'fs.write', 'sql.query', 'kafka.publish', 'tool.search'].map(stubType)).toEqual(['http', 'file', 'db', 'queue', undefined]);
  });

  it('fails with replay_error when the fixture runpack cannot be replayed', () => {
    const r = graded(gradeExpectedExitCode(fixtureOf(Buffer.from('junk'))));
    expect(r.reason_codes).toEqual(['replay_error']);
  });
});

describe('trajectory', () => {
  it('passes the fixture against itself with trajectory_match', () => {
    const r = graded(gradeTrajectory(fixtureOf(DEMO)));
    expect(r.status).toBe('pass');
    expect(r.reason_codes).toEqual(['trajectory_match']);
    expect(r.details['actual_tool_sequence']).toEqual(['tool.search', 'tool.fetch', 'tool.summarize']);
  });

  it('passes with trajectory_not_required when nothing is expected', () => {
    const r = graded(gradeTrajectory(fixtureOf(DEMO, { expected_tool_sequence: undefined, expected_verdict_sequence: undefined })));
    expect(r).toMatchObject({ status: 'pass', reason_codes: ['trajectory_not_required'] });
    // every sequence is present, the empty expectations included (as the reference writes them)
    expect(r.details['expected_tool_sequence']).toEqual([]);
    expect(r.details['expected_verdict_sequence']).toEqual([]);
    expect(r.details['actual_tool_sequence']).toHaveLength(3);
    expect(r.details['actual_verdict_sequence']).toHaveLength(3);
  });

  it('reports the first mismatch of tools and verdicts, with sentinels past the end', () => {
    const input = mutateInput((j) => {
      j['intents'][1]['tool_name'] = 'tool.delete';
      j['intents'].pop();
      j['results'][0]['status'] = 'blocked';
    });
    const r = graded(gradeTrajectory(fixtureOf(DEMO, {}, demoRunpack({ input, runId: 'run_candidate' }))));
    expect(r.status).toBe('fail');
    expect(r.reason_codes).toEqual(['unexpected_tool_sequence', 'unexpected_verdict_sequence']);
    expect(r.details).toMatchObject({
      tool_sequence_mismatch_index: 1,
      tool_sequence_expected_at_mismatch: 'tool.fetch',
      tool_sequence_actual_at_mismatch: 'tool.delete',
      verdict_sequence_mismatch_index: 0,
      verdict_sequence_expected_at_mismatch: 'allow',
      verdict_sequence_actual_at_mismatch: 'block',
    });
    const shorter = mutateInput((j) => {
      j['intents'].pop();
    });
    const s = gradeTrajectory(fixtureOf(DEMO, { expected_verdict_sequence: undefined }, demoRunpack({ input: shorter })));
    expect(s.details).toMatchObject({ tool_sequence_mismatch_index: 2, tool_sequence_expected_at_mismatch: 'tool.summarize', tool_sequence_actual_at_mismatch: '<missing>' });
    const longer = gradeTrajectory(fixtureOf(DEMO, { expected_tool_sequence: ['tool.search'], expected_verdict_sequence: undefined }));
    expect(longer.details).toMatchObject({ tool_sequence_mismatch_index: 1, tool_sequence_expected_at_mismatch: '<none>', tool_sequence_actual_at_mismatch: 'tool.fetch' });
  });

  it('reads a verdict from the result payload before the status', () => {
    const input = mutateInput((j) => {
      j['capture_mode'] = 'raw';
      j['results'][0]['result'] = { verdict: 'require_approval' };
    });
    const r = gradeTrajectory(fixtureOf(DEMO, { expected_tool_sequence: undefined }, record({ captureMode: 'raw' }, input).bytes));
    expect(r.details['actual_verdict_sequence']).toEqual(['require_approval', 'allow', 'allow']);
  });

  it('fails with candidate_path_invalid and candidate_runpack_invalid', () => {
    expect(graded(gradeTrajectory(fixtureOf(DEMO, {}, { missing: 'gone.zip' }))).reason_codes).toEqual(['candidate_path_invalid']);
    expect(graded(gradeTrajectory(fixtureOf(DEMO, {}, Buffer.from('junk')))).reason_codes).toEqual(['candidate_runpack_invalid']);
  });
});

describe('diff (Ward decision 7)', () => {
  it('passes a fresh run that did the same thing under another run id', () => {
    const r = graded(gradeDiff(fixtureOf(DEMO, {}, demoRunpack({ runId: 'run_fresh' }))));
    expect(r).toEqual({ status: 'pass', reason_codes: [], details: { allowed_files: [], candidate_runpack: 'candidate.zip', changed_files: [] } });
  });

  it('fails changed results with unexpected_diff unless allowed', () => {
    const input = mutateInput((j) => (j['results'][0]['result'] = { hits: 4 }));
    const candidate = demoRunpack({ input, runId: 'run_fresh' });
    const r = graded(gradeDiff(fixtureOf(DEMO, {}, candidate)));
    expect(r.status).toBe('fail');
    expect(r.reason_codes).toEqual(['unexpected_diff']);
    expect(r.details).toMatchObject({ changed_files: ['results.jsonl'], unexpected_files: ['results.jsonl'] });
    expect(gradeDiff(fixtureOf(DEMO, { diff_allow_changed_files: ['results.jsonl'] }, candidate)).status).toBe('pass');
  });

  it('leaves context drift to context_conformance', () => {
    expect(gradeDiff(fixtureOf(DEMO, {}, demoRunpack({ input: mutateInput((j) => (j['refs']['receipts'][0]['content_digest'] = 'f'.repeat(64))) }))).status).toBe('pass');
  });

  it('fails with candidate_path_invalid or diff_error when it cannot compare', () => {
    expect(graded(gradeDiff(fixtureOf(DEMO, {}, { missing: 'gone.zip' }))).reason_codes).toEqual(['candidate_path_invalid']);
    expect(graded(gradeDiff(fixtureOf(DEMO, {}, Buffer.from('junk')))).reason_codes).toEqual(['diff_error']);
  });
});

describe('context_conformance', () => {
  const WITH_CONTEXT = demoRunpack({ envelope: ENVELOPE_TEXT });

  it('auto-expects the fixture digest and passes a fresh run over the same context', () => {
    const f = fixtureOf(WITH_CONTEXT, {}, demoRunpack({ envelope: ENVELOPE_TEXT, runId: 'run_fresh' }));
    expect(f.meta.context_conformance).toBe('required');
    expect(f.meta.expected_context_set_digest).toMatch(/^[0-9a-f]{64}$/);
    const r = graded(gradeContextConformance(f, FLAGS));
    expect(r).toMatchObject({ status: 'pass', reason_codes: ['context_conformance_pass'], context_conformance: 'none' });
    expect(r.details).toMatchObject({ context_changed: false, context_runtime_only: false });
  });

  it('blocks runtime-only drift unless allowed by flag or fixture', () => {
    const later = demoRunpack({ envelope: envelopeRetrievedLater(), runId: 'run_later' });
    const blocked = graded(gradeContextConformance(fixtureOf(WITH_CONTEXT, {}, later), FLAGS));
    expect(blocked).toMatchObject({ status: 'fail', reason_codes: ['context_runtime_drift_blocked'], context_conformance: 'runtime_only' });
    expect(gradeContextConformance(fixtureOf(WITH_CONTEXT, {}, later), { ...FLAGS, allowContextRuntimeDrift: true })).toMatchObject({
      status: 'pass',
      reason_codes: ['context_conformance_pass'],
      context_conformance: 'runtime_only',
    });
    expect(gradeContextConformance(fixtureOf(WITH_CONTEXT, { allow_context_runtime_drift: true }, later), FLAGS).status).toBe('pass');
  });

  it('fails other content with context_set_digest_mismatch, or context_semantic_drift without an expected digest', () => {
    const other = demoRunpack({ envelope: envelopeOtherContent(), runId: 'run_other' });
    expect(graded(gradeContextConformance(fixtureOf(WITH_CONTEXT, {}, other), FLAGS))).toMatchObject({
      status: 'fail',
      reason_codes: ['context_set_digest_mismatch'],
      context_conformance: 'semantic',
    });
    expect(graded(gradeContextConformance(fixtureOf(WITH_CONTEXT, { expected_context_set_digest: undefined }, other), FLAGS))).toMatchObject({
      status: 'fail',
      reason_codes: ['context_semantic_drift'],
      context_conformance: 'semantic',
    });
  });

  it('is not enforced without required, an expected digest or the flag; the flag fails runs without evidence', () => {
    const r = graded(gradeContextConformance(fixtureOf(DEMO, {}, demoRunpack({ runId: 'run_fresh' })), FLAGS));
    expect(r).toMatchObject({ status: 'pass', reason_codes: ['context_conformance_not_required'], context_conformance: 'none' });
    const enforced = graded(gradeContextConformance(fixtureOf(DEMO), { ...FLAGS, contextConformance: true }));
    expect(enforced).toMatchObject({ status: 'fail', reason_codes: ['context_evidence_missing'], context_conformance: 'missing' });
  });

  it('fails unreadable inputs with candidate_path_invalid, candidate_runpack_invalid, source_runpack_invalid', () => {
    expect(graded(gradeContextConformance(fixtureOf(WITH_CONTEXT, {}, { missing: 'x.zip' }), FLAGS)).reason_codes).toEqual(['candidate_path_invalid']);
    expect(graded(gradeContextConformance(fixtureOf(WITH_CONTEXT, {}, Buffer.from('junk')), FLAGS)).reason_codes).toEqual(['candidate_runpack_invalid']);
    expect(graded(gradeContextConformance(fixtureOf(Buffer.from('junk'), {}, WITH_CONTEXT), FLAGS)).reason_codes).toEqual(['source_runpack_invalid']);
  });

  it('reports context_diff_error when drift cannot be classified', () => {
    const f = fixtureOf(WITH_CONTEXT);
    // Refs whose receipts are not a list cannot be classified.
    (f.runpack!.refs as unknown as { receipts: unknown }).receipts = null;
    expect(graded(gradeContextConformance(f, FLAGS)).reason_codes).toEqual(['context_diff_error']);
  });
});

describe('grader errors', () => {
  it('turn into a failing grader with grader_error, never a crash', () => {
    const f = fixtureOf(DEMO);
    Object.defineProperty(f.meta, 'expected_tool_sequence', {
      get() {
        throw new Error('boom');
      },
    });
    const results = gradeFixture(f, FLAGS, false);
    expect(results.map((g) => g.name)).toEqual(['demo/schema_validation', 'demo/expected_exit_code', 'demo/trajectory', 'demo/diff']);
    const trajectory = results.find((g) => g.name === 'demo/trajectory')!;
    expect(trajectory).toEqual({ name: 'demo/trajectory', status: 'fail', reason_codes: ['grader_error'], details: { error: 'boom', fixture: 'demo', run_id: 'run_demo' } });
    seen.add(trajectory.reason_codes[0]!);
  });
});
