import { isSha256Hex } from '../canon/index.js';
import { isValidFixtureName } from './name.js';
import { optionalBoolean, optionalInteger, optionalString, optionalStringArray, parseJsonObject, rejectUnknownKeys, usage } from './strict.js';
import { normalizeVerdict } from './verdict.js';
import { CONFORMANCE_MODES, REGRESS_FIXTURE_SCHEMA, type FixtureMeta } from './types.js';

const FIXTURE_KEYS = [
  'schema_id',
  'schema_version',
  'name',
  'run_id',
  'runpack',
  'expected_replay_exit_code',
  'expected_tool_sequence',
  'expected_verdict_sequence',
  'candidate_runpack',
  'context_conformance',
  'allow_context_runtime_drift',
  'expected_context_set_digest',
  'diff_allow_changed_files',
  'session_chain',
  'checkpoint_index',
] as const;

/**
 * `fixture.json` (§5.2, checks of §5.3 step 2): schema id and version when present, a valid name,
 * verdicts that normalize, `context_conformance` in `""|required|none`, a 64-hex expected digest,
 * a non-negative expected exit code. Verdicts and the digest come back normalized.
 */
export function parseFixtureMeta(text: string, what: string): FixtureMeta {
  const obj = parseJsonObject(text, what);
  rejectUnknownKeys(obj, FIXTURE_KEYS, what);
  const str = (key: string) => (optionalString(obj, key, what) ?? '').trim();
  const schemaId = str('schema_id');
  const schemaVersion = str('schema_version');
  if (schemaId !== '' && schemaId !== REGRESS_FIXTURE_SCHEMA.id) throw usage(`${what}: unsupported schema_id ${JSON.stringify(schemaId)}`, what);
  if (schemaVersion !== '' && schemaVersion !== REGRESS_FIXTURE_SCHEMA.version) throw usage(`${what}: unsupported schema_version ${JSON.stringify(schemaVersion)}`, what);
  const name = str('name');
  if (!isValidFixtureName(name)) throw usage(`${what}: name ${JSON.stringify(name)} must match ^[a-z0-9][a-z0-9._-]*$`, what);
  const meta: FixtureMeta = {
    schema_id: REGRESS_FIXTURE_SCHEMA.id,
    schema_version: REGRESS_FIXTURE_SCHEMA.version,
    name,
    run_id: str('run_id'),
    runpack: str('runpack') || 'runpack.zip',
    expected_replay_exit_code: optionalInteger(obj, 'expected_replay_exit_code', what) ?? 0,
  };
  if (meta.expected_replay_exit_code < 0) throw usage(`${what}: expected_replay_exit_code must be >= 0`, what);
  const tools = optionalStringArray(obj, 'expected_tool_sequence', what);
  if (tools && tools.length > 0) meta.expected_tool_sequence = tools;
  const verdicts = optionalStringArray(obj, 'expected_verdict_sequence', what);
  if (verdicts && verdicts.length > 0) {
    meta.expected_verdict_sequence = verdicts.map((v) => {
      const n = normalizeVerdict(v);
      if (!n) throw usage(`${what}: expected_verdict_sequence has an unknown verdict ${JSON.stringify(v)} (use allow, block, require_approval, dry_run or error)`, what);
      return n;
    });
  }
  const candidate = str('candidate_runpack');
  if (candidate) meta.candidate_runpack = candidate;
  const conformance = str('context_conformance').toLowerCase();
  if (!(CONFORMANCE_MODES as readonly string[]).includes(conformance)) throw usage(`${what}: context_conformance must be "required" or "none"`, what);
  if (conformance) meta.context_conformance = conformance;
  if (optionalBoolean(obj, 'allow_context_runtime_drift', what)) meta.allow_context_runtime_drift = true;
  const digest = str('expected_context_set_digest').toLowerCase();
  if (digest !== '' && !isSha256Hex(digest)) throw usage(`${what}: expected_context_set_digest must be 64 lowercase hex characters`, what);
  if (digest) meta.expected_context_set_digest = digest;
  const allowed = optionalStringArray(obj, 'diff_allow_changed_files', what);
  if (allowed && allowed.length > 0) meta.diff_allow_changed_files = allowed;
  const chain = str('session_chain');
  if (chain) meta.session_chain = chain;
  const checkpoint = optionalInteger(obj, 'checkpoint_index', what);
  if (checkpoint) meta.checkpoint_index = checkpoint;
  return meta;
}

/** The reference writes fixture.json pretty (2-space indent) with a trailing newline, in struct order. */
export function renderFixtureMeta(meta: FixtureMeta): string {
  const ordered: Record<string, unknown> = {};
  for (const key of FIXTURE_KEYS) {
    const value = (meta as unknown as Record<string, unknown>)[key];
    if (value !== undefined) ordered[key] = value;
  }
  return JSON.stringify(ordered, null, 2) + '\n';
}
