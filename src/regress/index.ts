// Regress: fixtures from real runs graded deterministically for CI (`packs-regress.md` §5, Ward
// decisions 7–8), and policy replay over recorded decisions.
export * from './types.js';
export { REGRESS_REASON_CODES, type RegressReasonCode, type RegressReasonInfo } from './reason-codes.js';
export { sanitizeFixtureName, isValidFixtureName } from './name.js';
export { normalizeVerdict, resultVerdict, type RegressVerdict } from './verdict.js';
export { parseRegressConfig, renderRegressConfig } from './config.js';
export { parseFixtureMeta, renderFixtureMeta } from './fixture.js';
export { runpackOf, checkedRunpack, captureReceiptArtifact } from './source.js';
export { runRegress, gradeFixture, loadCandidate, type RunRegressOptions, type CandidateArtifact } from './run.js';
export { renderRegressResult, regressJunit, renderJunit, topFailureReason, xmlEscape, type JunitCase } from './report.js';
export { resolveConfigPath, readRegressConfig, initFixture, rewriteConfig, scanFixtures, fixtureMetaFor, type InitResult } from './layout.js';
export type { FixtureUnderTest, Candidate, GraderOutcome, RunFlags } from './graders/types.js';
export { gradeSchemaValidation } from './graders/schema-validation.js';
export { gradeExpectedExitCode, stubReplay, stubType } from './graders/expected-exit-code.js';
export { gradeTrajectory, toolSequence, verdictSequence } from './graders/trajectory.js';
export { gradeDiff, changedFiles } from './graders/diff.js';
export { gradeContextConformance, contextGraderEnabled } from './graders/context-conformance.js';
export * from './replay/index.js';
