import { compareUtf8, digestJcs, type JsonObject, type JsonValue } from '../../canon/index.js';
import type { IntentRecord, ResultRecord, Runpack } from '../../runpack/index.js';
import { fail, pass, type FixtureUnderTest, type GraderOutcome } from './types.js';

/**
 * `diff` (§5.3 with Ward decision 7): the fixture and the candidate are compared by what the run
 * did, not by who ran it when. Intents and results are keyed by intent_id and compared by their
 * digests (`args_digest`, `result_digest`) with run identity (`run_id`, `producer_version`) and
 * timestamps blanked; other declared files by sha256. Refs are the `context_conformance` grader's.
 * Changed files outside `diff_allow_changed_files` fail with `unexpected_diff`.
 */
export function gradeDiff(fixture: FixtureUnderTest): GraderOutcome {
  const { meta, candidate } = fixture;
  const allowed = [...(meta.diff_allow_changed_files ?? [])].sort(compareUtf8);
  const details: JsonObject = { allowed_files: allowed, candidate_runpack: candidate.display };
  if (!candidate.ok) {
    const code = candidate.code === 'candidate_path_invalid' ? 'candidate_path_invalid' : 'diff_error';
    return fail([code], { ...details, changed_files: [], error: candidate.error });
  }
  let changed: string[];
  try {
    if (!fixture.runpack) throw new Error('fixture runpack does not read');
    changed = changedFiles(fixture.runpack, candidate.runpack);
  } catch (err) {
    return fail(['diff_error'], { ...details, changed_files: [], error: (err as Error).message });
  }
  details['changed_files'] = changed;
  const unexpected = changed.filter((f) => !allowed.includes(f));
  if (unexpected.length === 0) return pass([], details);
  return fail(['unexpected_diff'], { ...details, unexpected_files: unexpected });
}

const RECORD_FILES = new Set(['intents.jsonl', 'results.jsonl', 'refs.json', 'run.json']);

export function changedFiles(left: Runpack, right: Runpack): string[] {
  const changed = new Set<string>();
  if (recordsDiffer(left.intents, right.intents, intentKey)) changed.add('intents.jsonl');
  if (recordsDiffer(left.results, right.results, resultKey)) changed.add('results.jsonl');
  // Files beyond the four records (a producer's extras) are compared by their declared hashes.
  const l = new Map(left.manifest.files.filter((f) => !RECORD_FILES.has(f.path)).map((f) => [f.path, f.sha256.toLowerCase()]));
  const r = new Map(right.manifest.files.filter((f) => !RECORD_FILES.has(f.path)).map((f) => [f.path, f.sha256.toLowerCase()]));
  for (const path of new Set([...l.keys(), ...r.keys()])) if (l.get(path) !== r.get(path)) changed.add(path);
  return [...changed].sort(compareUtf8);
}

function intentKey(i: IntentRecord): JsonValue {
  return { schema_id: i.schema_id, schema_version: i.schema_version, intent_id: i.intent_id, tool_name: i.tool_name, args_digest: i.args_digest.toLowerCase() };
}

function resultKey(r: ResultRecord): JsonValue {
  return { schema_id: r.schema_id, schema_version: r.schema_version, intent_id: r.intent_id, status: r.status, result_digest: r.result_digest.toLowerCase() };
}

function recordsDiffer<T extends { intent_id: string }>(left: readonly T[], right: readonly T[], key: (r: T) => JsonValue): boolean {
  const digests = (records: readonly T[]) => {
    const m = new Map<string, string[]>();
    for (const r of records) m.set(r.intent_id, [...(m.get(r.intent_id) ?? []), digestJcs(key(r))]);
    return m;
  };
  const a = digests(left);
  const b = digests(right);
  if (a.size !== b.size) return true;
  for (const [id, list] of a) {
    const other = b.get(id);
    if (!other || other.length !== list.length || other.some((d, i) => d !== list[i])) return true;
  }
  return false;
}
