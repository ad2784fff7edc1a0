import type { JsonObject } from '../../canon/index.js';
import type { Runpack } from '../../runpack/index.js';
import { resultVerdict } from '../verdict.js';
import { fail, pass, type FixtureUnderTest, type GraderOutcome } from './types.js';

/** Non-empty intent tool names, in record order. */
export function toolSequence(runpack: Runpack): string[] {
  return runpack.intents.map((i) => i.tool_name).filter((t) => t.trim() !== '');
}

/** One verdict per result, in record order (§5.3 trajectory). */
export function verdictSequence(runpack: Runpack): string[] {
  return runpack.results.map(resultVerdict);
}

/**
 * `trajectory` (§5.3): the candidate's tool and verdict sequences equal the fixture's expected
 * ones. A fixture without expectations passes with `trajectory_not_required`.
 */
export function gradeTrajectory(fixture: FixtureUnderTest): GraderOutcome {
  const { meta, candidate } = fixture;
  const expectedTools = meta.expected_tool_sequence ?? [];
  const expectedVerdicts = meta.expected_verdict_sequence ?? [];
  // The four sequences are always present, empty lists included, as in the reference's details.
  const details: JsonObject = { candidate_runpack: candidate.display, expected_tool_sequence: expectedTools, expected_verdict_sequence: expectedVerdicts };
  const actualTools = candidate.ok ? toolSequence(candidate.runpack) : [];
  const actualVerdicts = candidate.ok ? verdictSequence(candidate.runpack) : [];
  if (candidate.ok) Object.assign(details, { actual_tool_sequence: actualTools, actual_verdict_sequence: actualVerdicts });
  if (expectedTools.length === 0 && expectedVerdicts.length === 0) return pass(['trajectory_not_required'], details);
  if (!candidate.ok) return fail([candidate.code], { ...details, error: candidate.error });
  const reasons: string[] = [];
  if (expectedTools.length > 0 && compareSequences(expectedTools, actualTools, 'tool_sequence', details)) reasons.push('unexpected_tool_sequence');
  if (expectedVerdicts.length > 0 && compareSequences(expectedVerdicts, actualVerdicts, 'verdict_sequence', details)) reasons.push('unexpected_verdict_sequence');
  return reasons.length > 0 ? fail(reasons, details) : pass(['trajectory_match'], details);
}

/**
 * True when the sequences differ; then records the first mismatch: its index and the values there,
 * `<none>` where the expected sequence has ended, `<missing>` where the actual one has.
 */
function compareSequences(expected: readonly string[], actual: readonly string[], prefix: string, details: JsonObject): boolean {
  const n = Math.max(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    if (expected[i] === actual[i]) continue;
    details[`${prefix}_mismatch_index`] = i;
    details[`${prefix}_expected_at_mismatch`] = expected[i] ?? '<none>';
    details[`${prefix}_actual_at_mismatch`] = actual[i] ?? '<missing>';
    return true;
  }
  return false;
}
