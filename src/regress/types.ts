import type { JsonObject } from '../canon/index.js';

/** Schema ids of regress artifacts: the contract's, so existing consumers keep working (Ward decision 1). */
export const REGRESS_CONFIG_SCHEMA = { id: 'gait.regress.config', version: '1.0.0' } as const;
export const REGRESS_FIXTURE_SCHEMA = { id: 'gait.regress.fixture', version: '1.0.0' } as const;
export const REGRESS_RESULT_SCHEMA = { id: 'gait.regress.result', version: '1.0.0' } as const;
export const CAPTURE_RECEIPT_SCHEMA = { id: 'gait.capture.receipt', version: '1.0.0' } as const;

/** Ward's regress config file; the reference's `gait.yaml` is read when this one is absent. */
export const DEFAULT_CONFIG_FILE = 'ward.yaml';
export const REFERENCE_CONFIG_FILE = 'gait.yaml';
export const FIXTURES_DIR = 'fixtures';
export const FIXTURE_FILE = 'fixture.json';
export const FIXTURE_RUNPACK_FILE = 'runpack.zip';
export const DEFAULT_FIXTURE_SET = 'default';
export const DEFAULT_RESULT_FILE = 'regress_result.json';

export const GRADER_NAMES = ['schema_validation', 'expected_exit_code', 'trajectory', 'diff', 'context_conformance'] as const;
export type GraderName = (typeof GRADER_NAMES)[number];

/** `context_conformance` of a fixture: whether context evidence is enforced. */
export const CONFORMANCE_MODES = ['', 'required', 'none'] as const;
/** `context_conformance` of a grader result: the drift found. */
export type ConformanceClass = 'none' | 'runtime_only' | 'semantic' | 'missing';

/** One fixture entry of the regress config. */
export interface ConfigFixture {
  name: string;
  run_id?: string;
  runpack: string;
}

export interface RegressConfig {
  schema_id: string;
  schema_version: string;
  fixture_set: string;
  fixtures: ConfigFixture[];
}

/** `fixture.json` (`gait.regress.fixture` 1.0.0), keys in the reference's struct order. */
export interface FixtureMeta {
  schema_id: string;
  schema_version: string;
  name: string;
  run_id: string;
  runpack: string;
  expected_replay_exit_code: number;
  expected_tool_sequence?: string[];
  expected_verdict_sequence?: string[];
  candidate_runpack?: string;
  context_conformance?: string;
  allow_context_runtime_drift?: boolean;
  expected_context_set_digest?: string;
  diff_allow_changed_files?: string[];
  session_chain?: string;
  checkpoint_index?: number;
}

export type GraderStatus = 'pass' | 'fail';

export interface GraderResult {
  name: string;
  status: GraderStatus;
  reason_codes: string[];
  context_conformance?: ConformanceClass;
  details: JsonObject;
}

export interface RegressResult {
  schema_id: string;
  schema_version: string;
  created_at: string;
  producer_version: string;
  fixture_set: string;
  status: GraderStatus;
  graders: GraderResult[];
}
