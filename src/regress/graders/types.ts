import type { JsonObject } from '../../canon/index.js';
import type { Runpack } from '../../runpack/index.js';
import type { ConformanceClass, FixtureMeta, GraderStatus } from '../types.js';

/** The candidate a fixture is compared with, loaded once (or the reason it could not be). */
export type Candidate =
  | { ok: true; display: string; bytes: Buffer; runpack: Runpack }
  | { ok: false; display: string; code: 'candidate_path_invalid' | 'candidate_runpack_invalid'; error: string };

export interface FixtureUnderTest {
  meta: FixtureMeta;
  /** The fixture runpack as the config names it. */
  runpackPath: string;
  bytes: Buffer;
  /** The fixture runpack, read; undefined when it does not read (the loader refuses that, graders report it). */
  runpack: Runpack | undefined;
  candidate: Candidate;
}

export interface RunFlags {
  /** `--context-conformance`: enforce context conformance for every fixture. */
  contextConformance: boolean;
  /** `--allow-context-runtime-drift`. */
  allowContextRuntimeDrift: boolean;
}

export interface GraderOutcome {
  status: GraderStatus;
  reason_codes: string[];
  context_conformance?: ConformanceClass;
  details: JsonObject;
}

export function pass(reasons: string[], details: JsonObject): GraderOutcome {
  return { status: 'pass', reason_codes: reasons, details };
}

export function fail(reasons: string[], details: JsonObject): GraderOutcome {
  return { status: 'fail', reason_codes: reasons, details };
}
