import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, posix, resolve } from 'node:path';
import { compareUtf8, uniqueSorted, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { utcOr1980 } from '../runpack/index.js';
import { parseFixtureMeta } from './fixture.js';
import { contextGraderEnabled, gradeContextConformance } from './graders/context-conformance.js';
import { gradeDiff } from './graders/diff.js';
import { gradeExpectedExitCode } from './graders/expected-exit-code.js';
import { gradeSchemaValidation } from './graders/schema-validation.js';
import { gradeTrajectory } from './graders/trajectory.js';
import type { Candidate, FixtureUnderTest, GraderOutcome, RunFlags } from './graders/types.js';
import { checkedRunpack, runpackOf } from './source.js';
import { FIXTURE_FILE, REGRESS_RESULT_SCHEMA, type GraderName, type GraderResult, type RegressConfig, type RegressResult } from './types.js';

/** A candidate artifact located by the caller (`--candidate`): its bytes and how to show it. */
export interface CandidateArtifact {
  display: string;
  bytes: Buffer;
}

export interface RunRegressOptions {
  /** Relative fixture runpack paths resolve against this directory: the config's (the reference uses the working directory). */
  cwd: string;
  flags: RunFlags;
  /** Candidates from the command line: by fixture name, or `*` for every fixture. */
  candidates?: ReadonlyMap<string, CandidateArtifact>;
  producerVersion: string;
  /** Called as fixtures are loaded and graded: `done` of `total` (a suite of large runpacks takes a while). */
  onProgress?: (stage: 'loaded' | 'graded', done: number, total: number) => void;
}

/**
 * `regress run` (§5.3): load and check every fixture (any problem is a config error, exit 6),
 * then grade each one against its candidate. Deterministic: same inputs, same result bytes.
 */
export function runRegress(config: RegressConfig, options: RunRegressOptions): RegressResult {
  if (config.fixtures.length === 0) throw configError('no fixtures configured', 'add one with: ward regress init --from <runpack|run_id|pack>');
  const total = config.fixtures.length;
  const fixtures = config.fixtures.map((entry, i) => {
    const fixture = loadFixture(entry, options);
    options.onProgress?.('loaded', i + 1, total);
    return fixture;
  });
  const withContext = contextGraderEnabled(fixtures, options.flags);
  const graders: GraderResult[] = [];
  for (const [i, fixture] of fixtures.entries()) {
    graders.push(...gradeFixture(fixture, options.flags, withContext));
    options.onProgress?.('graded', i + 1, total);
  }
  graders.sort((a, b) => compareUtf8(a.name, b.name));
  const first = fixtures[0]!.runpack!;
  return {
    schema_id: REGRESS_RESULT_SCHEMA.id,
    schema_version: REGRESS_RESULT_SCHEMA.version,
    created_at: utcOr1980(first.run.created_at),
    producer_version: options.producerVersion,
    fixture_set: config.fixture_set,
    status: graders.some((g) => g.status === 'fail') ? 'fail' : 'pass',
    graders,
  };
}

/**
 * Every grader of one fixture, named `<fixture>/<grader>`, reason codes sorted, `fixture` and
 * `run_id` added to the details; a grader that throws fails with `grader_error`.
 */
export function gradeFixture(fixture: FixtureUnderTest, flags: RunFlags, withContext: boolean): GraderResult[] {
  const run: [GraderName, () => GraderOutcome][] = [
    ['schema_validation', () => gradeSchemaValidation(fixture)],
    ['expected_exit_code', () => gradeExpectedExitCode(fixture)],
    ['trajectory', () => gradeTrajectory(fixture)],
    ['diff', () => gradeDiff(fixture)],
  ];
  if (withContext) run.push(['context_conformance', () => gradeContextConformance(fixture, flags)]);
  return run.map(([name, grade]) => graderResult(fixture, name, grade));
}

function graderResult(fixture: FixtureUnderTest, name: GraderName, grade: () => GraderOutcome): GraderResult {
  let outcome: GraderOutcome;
  try {
    outcome = grade();
  } catch (err) {
    outcome = { status: 'fail', reason_codes: ['grader_error'], details: { error: (err as Error).message } };
  }
  const result: GraderResult = {
    name: `${fixture.meta.name}/${name}`,
    status: outcome.status,
    reason_codes: uniqueSorted(outcome.reason_codes),
    details: sortKeys({ ...outcome.details, fixture: fixture.meta.name, run_id: fixture.meta.run_id }) as JsonObject,
  };
  if (outcome.context_conformance) {
    // Keep the reference's key order: name, status, reason_codes, context_conformance, details.
    return { name: result.name, status: result.status, reason_codes: result.reason_codes, context_conformance: outcome.context_conformance, details: result.details };
  }
  return result;
}

/** §5.3 step 2: the fixture runpack exists and reads; fixture.json beside it agrees with the config and the runpack. */
function loadFixture(entry: RegressConfig['fixtures'][number], options: RunRegressOptions): FixtureUnderTest {
  const path = resolve(options.cwd, entry.runpack);
  const label = `fixture ${entry.name}`;
  if (!existsSync(path)) throw configError(`${label}: runpack not found: ${entry.runpack}`, 'run ward regress init again, or fix the runpack path in the config');
  const bytes = readFileSync(path);
  let runpack;
  try {
    runpack = checkedRunpack(bytes, entry.runpack);
  } catch (err) {
    throw configError(`${label}: runpack ${entry.runpack} is not an intact runpack: ${(err as Error).message}`, `check it with: ward verify ${entry.runpack}`);
  }
  const fixtureDir = dirname(path);
  const metaPath = join(fixtureDir, FIXTURE_FILE);
  if (!existsSync(metaPath)) throw configError(`${label}: ${FIXTURE_FILE} not found next to ${entry.runpack}`, 'run ward regress init again for this fixture');
  const meta = parseFixtureMeta(readFileSync(metaPath, 'utf8'), `${label} ${FIXTURE_FILE}`);
  if (meta.name !== entry.name) throw configError(`${label}: ${FIXTURE_FILE} names fixture ${JSON.stringify(meta.name)}`);
  if (entry.run_id && entry.run_id !== meta.run_id) throw configError(`${label}: config run_id ${entry.run_id} does not match ${FIXTURE_FILE} run_id ${meta.run_id}`);
  if (runpack.manifest.run_id !== meta.run_id) throw configError(`${label}: runpack run_id ${runpack.manifest.run_id} does not match ${FIXTURE_FILE} run_id ${meta.run_id}`);
  const display = entry.runpack;
  return { meta, runpackPath: display, bytes, runpack, candidate: candidateFor(meta, fixtureDir, cleanPath(display), bytes, options) };
}

/**
 * The candidate (§5.3 step 4): `--candidate` for this fixture (or for all), else `candidate_runpack`
 * from fixture.json (relative to the fixture directory), else the fixture runpack itself.
 */
function candidateFor(meta: FixtureUnderTest['meta'], fixtureDir: string, fixtureDisplay: string, fixtureBytes: Buffer, options: RunRegressOptions): Candidate {
  const given = options.candidates?.get(meta.name) ?? options.candidates?.get('*');
  if (given) return loadCandidate(given.display, given.bytes);
  if (meta.candidate_runpack) {
    const path = isAbsolute(meta.candidate_runpack) ? meta.candidate_runpack : join(fixtureDir, meta.candidate_runpack);
    // Shown as the reference shows it: joined to the fixture runpack's directory and cleaned.
    const display = isAbsolute(meta.candidate_runpack) ? cleanPath(meta.candidate_runpack) : posix.join(posix.dirname(fixtureDisplay), meta.candidate_runpack);
    if (!existsSync(path)) return { ok: false, display, code: 'candidate_path_invalid', error: `candidate runpack not found: ${display}` };
    return loadCandidate(display, readFileSync(path));
  }
  return loadCandidate(fixtureDisplay, fixtureBytes);
}

export function loadCandidate(display: string, bytes: Buffer): Candidate {
  try {
    const source = runpackOf(bytes);
    return { ok: true, display, bytes: source.bytes, runpack: checkedRunpack(source.bytes, display) };
  } catch (err) {
    return { ok: false, display, code: 'candidate_runpack_invalid', error: (err as Error).message };
  }
}

/** Go's `filepath.Clean` for `/`-separated paths: `./fixtures/x/../y/runpack.zip` → `fixtures/y/runpack.zip`. */
function cleanPath(path: string): string {
  const cleaned = posix.normalize(path);
  return cleaned.length > 1 && cleaned.endsWith('/') ? cleaned.slice(0, -1) : cleaned;
}

function configError(message: string, hint?: string): WardError {
  return new WardError(ERROR_CODES.USAGE, message, hint ? { hint } : {});
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort(compareUtf8)) out[key] = sortKeys(value[key]!);
    return out;
  }
  return value;
}

