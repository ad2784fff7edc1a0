import { compareUtf8, goLower, type JsonObject } from '../../canon/index.js';
import type { Runpack } from '../../runpack/index.js';
import { fail, pass, type FixtureUnderTest, type GraderOutcome } from './types.js';

/** The stub families of the reference's `run replay` (§4.5), by tool-name substring. */
const STUBS: readonly [string, readonly string[]][] = [
  ['http', ['http', 'fetch', 'url']],
  ['file', ['file', 'path', 'fs', 'write']],
  ['db', ['db', 'sql', 'query', 'table']],
  ['queue', ['queue', 'topic', 'publish', 'kafka']],
];

export function stubType(toolName: string): string | undefined {
  const name = goLower(toolName);
  return STUBS.find(([, words]) => words.some((w) => name.includes(w)))?.[0];
}

/** Stub replay (§4.5): intents without a recorded result and without a stub family are missing; exit 2 if any. */
export function stubReplay(runpack: Runpack): { exitCode: number; missing: string[] } {
  const recorded = new Set(runpack.results.map((r) => r.intent_id));
  // Sorted, as the reference lists them.
  const missing = runpack.intents
    .filter((i) => !recorded.has(i.intent_id) && stubType(i.tool_name) === undefined)
    .map((i) => i.intent_id)
    .sort(compareUtf8);
  return { exitCode: missing.length > 0 ? 2 : 0, missing };
}

/** `expected_exit_code` (§5.3): the stub replay of the fixture runpack exits as the fixture expects. */
export function gradeExpectedExitCode(fixture: FixtureUnderTest): GraderOutcome {
  const expected = fixture.meta.expected_replay_exit_code;
  let replay;
  try {
    if (!fixture.runpack) throw new Error('fixture runpack does not read');
    replay = stubReplay(fixture.runpack);
  } catch (err) {
    return fail(['replay_error'], { expected_exit_code: expected, error: (err as Error).message });
  }
  const details: JsonObject = { expected_exit_code: expected, actual_exit_code: replay.exitCode, missing_results: replay.missing };
  return replay.exitCode === expected ? pass([], details) : fail(['unexpected_exit_code'], details);
}
