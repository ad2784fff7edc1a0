import type { JsonObject } from '../../canon/index.js';
import { classifyRefsDrift, type DriftResult } from '../../pack/index.js';
import type { ConformanceClass } from '../types.js';
import { type FixtureUnderTest, type GraderOutcome, type RunFlags } from './types.js';

/**
 * `context_conformance` (§5.3 rules 1–7). Drift is classified with run identity blanked (Ward
 * decision 7), so a fresh run over the same context is `none` and one that only retrieved the same
 * sources at other times is `runtime_only`.
 */
export function gradeContextConformance(fixture: FixtureUnderTest, flags: RunFlags): GraderOutcome {
  const { meta, candidate } = fixture;
  const details: JsonObject = {
    candidate_runpack: candidate.display,
    context_set_digest_fixture: fixture.runpack?.refs.context_set_digest ?? '',
    context_set_digest_candidate: '',
    context_changed: false,
    context_runtime_only: false,
  };
  const result = (status: 'pass' | 'fail', code: string, conformance: ConformanceClass): GraderOutcome => ({
    status,
    reason_codes: [code],
    context_conformance: conformance,
    details,
  });
  // Rule 1: anything unreadable.
  if (!candidate.ok) return result('fail', candidate.code, 'missing');
  const source = fixture.runpack;
  if (!source) return result('fail', 'source_runpack_invalid', 'missing');
  const candidateDigest = candidate.runpack.refs.context_set_digest ?? '';
  details['context_set_digest_candidate'] = candidateDigest;
  let drift: DriftResult;
  try {
    drift = classifyRefsDrift(source.refs, candidate.runpack.refs);
  } catch (err) {
    details['error'] = (err as Error).message;
    return result('fail', 'context_diff_error', 'missing');
  }
  details['context_changed'] = drift.changed;
  details['context_runtime_only'] = drift.runtimeOnly;
  const expected = meta.expected_context_set_digest ?? '';
  // Rule 2.
  if (expected !== '' && candidateDigest !== expected && drift.classification !== 'runtime_only') {
    return result('fail', 'context_set_digest_mismatch', 'semantic');
  }
  // Rule 3.
  const enforce = flags.contextConformance || meta.context_conformance === 'required' || expected !== '';
  if (!enforce) return result('pass', 'context_conformance_not_required', drift.classification);
  // Rules 4–7.
  if (candidateDigest === '') return result('fail', 'context_evidence_missing', 'missing');
  if (drift.classification === 'semantic') return result('fail', 'context_semantic_drift', 'semantic');
  const allowRuntime = flags.allowContextRuntimeDrift || meta.allow_context_runtime_drift === true;
  if (drift.classification === 'runtime_only' && !allowRuntime) return result('fail', 'context_runtime_drift_blocked', 'runtime_only');
  return result('pass', 'context_conformance_pass', drift.classification);
}

/** §5.3 step 3: the grader runs when asked for, or when any fixture declares context expectations. */
export function contextGraderEnabled(fixtures: readonly { meta: FixtureUnderTest['meta'] }[], flags: RunFlags): boolean {
  return (
    flags.contextConformance ||
    fixtures.some((f) => f.meta.context_conformance !== undefined || f.meta.expected_context_set_digest !== undefined || f.meta.allow_context_runtime_drift === true)
  );
}
