/**
 * Regress reason codes: public API, like the gate's, but they appear only in regress output
 * (`regress_result.json`, JUnit, replay reports), never in gate decisions. Each one has a row in
 * `docs/regress.md`; a test keeps the two in sync.
 */
export interface RegressReasonInfo {
  /** Where the code appears: a grader of `regress run`, or `regress replay`. */
  source: 'schema_validation' | 'expected_exit_code' | 'trajectory' | 'diff' | 'context_conformance' | 'any_grader' | 'replay';
  outcome: 'pass' | 'fail' | 'info';
  meaning: string;
}

export const REGRESS_REASON_CODES = {
  // Any grader.
  grader_error: { source: 'any_grader', outcome: 'fail', meaning: 'the grader itself failed (unexpected error); the details say why' },
  // schema_validation
  schema_validation_error: { source: 'schema_validation', outcome: 'fail', meaning: 'the fixture runpack is not a readable runpack archive' },
  missing_files: { source: 'schema_validation', outcome: 'fail', meaning: 'files the runpack manifest declares (or requires) are absent' },
  hash_mismatch: { source: 'schema_validation', outcome: 'fail', meaning: 'a file or the manifest digest does not match its recorded sha256' },
  runpack_parse_error: { source: 'schema_validation', outcome: 'fail', meaning: 'a runpack record does not decode' },
  manifest_schema_invalid: { source: 'schema_validation', outcome: 'fail', meaning: 'manifest.json is not gait.runpack.manifest 1.0.0' },
  run_schema_invalid: { source: 'schema_validation', outcome: 'fail', meaning: 'run.json is not gait.runpack.run 1.0.0 or has no run_id' },
  refs_schema_invalid: { source: 'schema_validation', outcome: 'fail', meaning: 'refs.json is not gait.runpack.refs 1.0.0' },
  intent_schema_invalid: { source: 'schema_validation', outcome: 'fail', meaning: 'an intent record is not gait.runpack.intent 1.0.0 or lacks intent_id/tool_name/args_digest' },
  result_schema_invalid: { source: 'schema_validation', outcome: 'fail', meaning: 'a result record is not gait.runpack.result 1.0.0 or lacks intent_id/status/result_digest' },
  // expected_exit_code
  replay_error: { source: 'expected_exit_code', outcome: 'fail', meaning: 'the stub replay of the fixture runpack failed' },
  unexpected_exit_code: { source: 'expected_exit_code', outcome: 'fail', meaning: 'the stub replay exit code differs from expected_replay_exit_code' },
  // trajectory (candidate_path_invalid and candidate_runpack_invalid also come from diff and context_conformance)
  candidate_path_invalid: { source: 'trajectory', outcome: 'fail', meaning: 'the candidate runpack does not exist (trajectory, diff, context_conformance)' },
  candidate_runpack_invalid: { source: 'trajectory', outcome: 'fail', meaning: 'the candidate is not a readable, intact runpack or run pack (trajectory, context_conformance)' },
  unexpected_tool_sequence: { source: 'trajectory', outcome: 'fail', meaning: "the candidate's tool names differ from expected_tool_sequence" },
  unexpected_verdict_sequence: { source: 'trajectory', outcome: 'fail', meaning: "the candidate's result verdicts differ from expected_verdict_sequence" },
  trajectory_match: { source: 'trajectory', outcome: 'pass', meaning: 'the candidate matches the expected tool and verdict sequences' },
  trajectory_not_required: { source: 'trajectory', outcome: 'pass', meaning: 'the fixture sets no expected sequence' },
  // diff
  unexpected_diff: { source: 'diff', outcome: 'fail', meaning: 'intents or results changed (by digest, run identity blanked) outside diff_allow_changed_files' },
  diff_error: { source: 'diff', outcome: 'fail', meaning: 'the fixture and candidate could not be compared' },
  // context_conformance
  source_runpack_invalid: { source: 'context_conformance', outcome: 'fail', meaning: 'the fixture runpack could not be read for the context comparison' },
  context_diff_error: { source: 'context_conformance', outcome: 'fail', meaning: 'context drift could not be classified' },
  context_set_digest_mismatch: { source: 'context_conformance', outcome: 'fail', meaning: "the candidate's context_set_digest differs from expected_context_set_digest (and not only at runtime)" },
  context_conformance_not_required: { source: 'context_conformance', outcome: 'pass', meaning: 'context conformance is not enforced for this fixture; the drift found is reported' },
  context_evidence_missing: { source: 'context_conformance', outcome: 'fail', meaning: 'enforced, but the candidate carries no context_set_digest' },
  context_semantic_drift: { source: 'context_conformance', outcome: 'fail', meaning: 'the candidate used different context (sources, content, modes)' },
  context_runtime_drift_blocked: { source: 'context_conformance', outcome: 'fail', meaning: 'same context retrieved at other times, and runtime drift is not allowed' },
  context_conformance_pass: { source: 'context_conformance', outcome: 'pass', meaning: 'the candidate conforms (no drift, or allowed runtime-only drift)' },
  // replay
  policy_loosened: { source: 'replay', outcome: 'fail', meaning: 'a recorded block, require_approval or dry_run becomes allow under the candidate policy (exit 5)' },
  policy_tightened: { source: 'replay', outcome: 'info', meaning: 'a recorded allow becomes block, require_approval or dry_run' },
  verdict_changed: { source: 'replay', outcome: 'info', meaning: 'the verdict changed between two non-allow verdicts (e.g. block to require_approval)' },
  reasons_changed: { source: 'replay', outcome: 'info', meaning: 'same verdict, different reason codes' },
  replay_evaluation_error: { source: 'replay', outcome: 'info', meaning: 'the recorded intent could not be evaluated under a policy' },
  not_replayable_no_capture: { source: 'replay', outcome: 'info', meaning: 'a trace without a decision capture: traces carry digests only' },
  not_replayable_no_args: { source: 'replay', outcome: 'info', meaning: 'a runpack intent recorded in reference capture mode: only its args digest was kept' },
  not_replayable_no_context: { source: 'replay', outcome: 'info', meaning: 'a runpack intent without gate context and no --intent-context given' },
  not_replayable_invalid: { source: 'replay', outcome: 'info', meaning: 'a capture or trace that does not parse, or whose intent was not evaluable when recorded' },
} as const satisfies Record<string, RegressReasonInfo>;

export type RegressReasonCode = keyof typeof REGRESS_REASON_CODES;
