import { isJsonObject, isSha256Hex } from '../../canon/index.js';
import { CAPTURE_MODES, INTENT_SCHEMA, readRunpack, REFS_SCHEMA, RESULT_SCHEMA, RUN_SCHEMA, RUNPACK_MANIFEST_SCHEMA, verifyRunpack, type Runpack } from '../../runpack/index.js';
import { fail, pass, type FixtureUnderTest, type GraderOutcome } from './types.js';

/**
 * `schema_validation` (§5.3): the fixture runpack verifies (files present, hashes match) and reads,
 * and every record carries its schema id and version and its required fields.
 */
export function gradeSchemaValidation(fixture: FixtureUnderTest): GraderOutcome {
  // `missing_files` is null when none are missing, as the reference writes it (a Go nil slice).
  const details = { missing_files: null as string[] | null, hash_mismatches: 0, intent_records: 0, result_records: 0, reference_receipts: 0 };
  let check;
  try {
    check = verifyRunpack(fixture.bytes);
  } catch (err) {
    return fail(['schema_validation_error'], { ...details, error: (err as Error).message });
  }
  const reasons: string[] = [];
  details.missing_files = check.missing_files ?? null;
  details.hash_mismatches = check.hash_mismatches?.length ?? 0;
  if (details.missing_files) reasons.push('missing_files');
  if (details.hash_mismatches > 0) reasons.push('hash_mismatch');
  if (reasons.length > 0) return fail(reasons, details);
  let runpack: Runpack;
  try {
    runpack = readRunpack(fixture.bytes);
  } catch (err) {
    return fail(['runpack_parse_error'], { ...details, error: (err as Error).message });
  }
  details.intent_records = runpack.intents.length;
  details.result_records = runpack.results.length;
  details.reference_receipts = runpack.refs.receipts.length;
  reasons.push(...schemaProblems(runpack));
  return reasons.length > 0 ? fail(reasons, details) : pass([], details);
}

function schemaProblems(runpack: Runpack): string[] {
  const reasons: string[] = [];
  const is = (r: { schema_id: string; schema_version: string }, s: { id: string; version: string }) => r.schema_id === s.id && r.schema_version === s.version;
  const { manifest, run, refs } = runpack;
  const manifestOk =
    is(manifest, RUNPACK_MANIFEST_SCHEMA) &&
    manifest.run_id !== '' &&
    (CAPTURE_MODES as readonly string[]).includes(manifest.capture_mode) &&
    isSha256Hex(manifest.manifest_digest) &&
    manifest.files.every((f) => f.path !== '' && isSha256Hex(f.sha256));
  if (!manifestOk) reasons.push('manifest_schema_invalid');
  if (!is(run, RUN_SCHEMA) || run.run_id === '') reasons.push('run_schema_invalid');
  if (!is(refs, REFS_SCHEMA)) reasons.push('refs_schema_invalid');
  if (runpack.intents.some((i) => !is(i, INTENT_SCHEMA) || i.intent_id === '' || i.tool_name === '' || i.args_digest === '' || (i.args !== undefined && !isJsonObject(i.args)))) {
    reasons.push('intent_schema_invalid');
  }
  if (runpack.results.some((r) => !is(r, RESULT_SCHEMA) || r.intent_id === '' || r.status === '' || r.result_digest === '')) reasons.push('result_schema_invalid');
  return reasons;
}
