import { compareTime, compareUtf8, goCleanPath, goLower, goTrim, isJsonObject, isSha256Hex, isZeroTime, toUTC, uniqueSorted, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';
import {
  parseError,
  readBool,
  readInt,
  readObject,
  readObjectArray,
  readString,
  readStringArray,
  readTime,
} from './fields.js';
import { invalidIntent } from './invalid.js';
import { WardError } from '../errors.js';
import {
  CREDENTIAL_ACCESS_TYPES,
  CREDENTIAL_SOURCES,
  PROVENANCE_SOURCES,
  SANDBOX_ENV_EXPOSURE_MODES,
  SANDBOX_FILESYSTEM_ISOLATIONS,
  SANDBOX_NETWORK_MODES,
  SANDBOX_USER_MODES,
} from '../contract/vocabulary.js';
import { assertNoRawCredentials, isEnvAssignment, isSafeEvidenceRef } from './secrets.js';
import { dedupeSortTargets, normalizeTarget } from './targets.js';
import { toolNameProblem } from './canonical.js';
import { scriptHashOf } from './digest.js';
import { parseTraceContext } from '../trace/index.js';
import {
  CONTEXT_PLAIN_STRING_FIELDS,
  type AgentIdentity,
  type ArgProvenance,
  type Delegation,
  type DelegationLink,
  type IntentContext,
  type NormalizedIntent,
  type SandboxContext,
  type ScriptStep,
  type SkillProvenance,
  type TraceContext,
} from './types.js';

export const INTENT_SCHEMA_ID = 'gait.gate.intent_request';
export const INTENT_SCHEMA_VERSION = '1.0.0';
export const MAX_SCRIPT_STEPS = 64;

const SANDBOX_ENUMS = {
  network_mode: SANDBOX_NETWORK_MODES,
  env_exposure_mode: SANDBOX_ENV_EXPOSURE_MODES,
  filesystem_isolation: SANDBOX_FILESYSTEM_ISOLATIONS,
  user_mode: SANDBOX_USER_MODES,
} as const;


/**
 * Decode and normalize an intent request (`gate.md` §1). Throws `ERR_INTENT_PARSE` for JSON type
 * errors and `ERR_INTENT_INVALID` (the reference's "not evaluable") for normalization failures.
 * Pure: the input is not mutated.
 */
export function normalizeIntent(input: unknown): NormalizedIntent {
  if (!isJsonObject(input)) throw parseError('intent must be a JSON object');
  try {
    return normalizeIntentObject(input);
  } catch (err) {
    throw withSpellingHint(err, input);
  }
}

const INTENT_KEYS = new Set([
  'schema_id', 'schema_version', 'created_at', 'producer_version', 'tool_name', 'args', 'targets', 'arg_provenance',
  'skill_provenance', 'delegation', 'context', 'script', 'relationship',
]);
const CONTEXT_KEYS = new Set(['identity', 'workspace', 'risk_class', 'phase', 'session_id', 'agent_id', 'run_id', 'auth_context', 'sandbox']);

/**
 * Unknown keys are ignored (as in the reference), so `toolName` only surfaces as "tool_name is
 * required". When a refused intent has camelCase keys whose snake_case form is a real key, the
 * error says so.
 */
function withSpellingHint(err: unknown, raw: JsonObject): unknown {
  if (!(err instanceof WardError) || err.hint) return err;
  const misspelled: string[] = [];
  const scan = (obj: JsonObject, known: ReadonlySet<string>, prefix: string) => {
    for (const key of Object.keys(obj)) {
      const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      if (snake !== key && known.has(snake) && !Object.hasOwn(obj, snake)) misspelled.push(`${prefix}${key} → ${prefix}${snake}`);
    }
  };
  scan(raw, INTENT_KEYS, '');
  const ctx = raw['context'];
  if (isJsonObject(ctx)) scan(ctx, CONTEXT_KEYS, 'context.');
  if (misspelled.length === 0) return err;
  return new WardError(err.code, err.message, {
    hint: `intent keys are snake_case: ${misspelled.join(', ')}`,
    details: err.details,
    exitCode: err.exitCode,
    cause: err,
  });
}

function normalizeIntentObject(raw: JsonObject): NormalizedIntent {

  const scriptRaw = readObject(raw, 'script', '');
  const script = scriptRaw ? normalizeScript(scriptRaw) : undefined;

  const declaredToolName = goLower(goTrim(readString(raw, 'tool_name', '')));
  if (script && declaredToolName !== '' && declaredToolName !== 'script') {
    throw invalidIntent(`tool_name ${JSON.stringify(declaredToolName)} conflicts with script (a script's tool_name is "script"; name each tool in its step)`);
  }
  const toolName = script ? 'script' : declaredToolName;
  if (toolName === '') throw invalidIntent('tool_name is required');
  assertCanonicalToolName(toolName, 'tool_name');

  const args = normalizeArgs(readObject(raw, 'args', ''), 'args');
  assertNoRawCredentials('args', args);

  let targetsRaw = readObjectArray(raw, 'targets', '').map((t, i) => normalizeTarget(t, toolName, `targets[${i}].`));
  if (script && targetsRaw.length > 0) assertCoveredBySteps(targetsRaw, script.steps.flatMap((s) => s.targets), 'targets', (t) => `${t.kind}\0${t.value}`);
  if (script && targetsRaw.length === 0) targetsRaw = script.steps.flatMap((s) => s.targets);
  const targets = dedupeSortTargets(targetsRaw);

  let provenance = readObjectArray(raw, 'arg_provenance', '').map((p, i) => normalizeProvenance(p, `arg_provenance[${i}].`));
  if (script && provenance.length > 0) {
    assertCoveredBySteps(provenance, script.steps.flatMap((s) => s.arg_provenance), 'arg_provenance', (p) => `${p.arg_path}\0${p.source}`);
  }
  if (script && provenance.length === 0) provenance = script.steps.flatMap((s) => s.arg_provenance);

  const skillRaw = readObject(raw, 'skill_provenance', '');
  const contextRaw = readObject(raw, 'context', '') ?? {};
  const delegationRaw = readObject(raw, 'delegation', '');
  const skill = skillRaw ? normalizeSkill(skillRaw) : undefined;
  const context = normalizeContext(contextRaw);
  const delegation = delegationRaw ? normalizeDelegation(delegationRaw) : undefined;

  // Type-check the fields the reference decodes but ignores, so garbage there is still refused.
  for (const key of ['args_digest', 'intent_digest', 'script_hash', 'producer_version']) readString(raw, key, '');
  const relationship = readObject(raw, 'relationship', '');
  // Never evaluated, but decision captures write it out again: it gets the same depth bound.
  if (relationship) assertMaxDepth(relationship, 'relationship', 1);
  const createdAt = readTime(raw, 'created_at', '');

  const schemaId = readString(raw, 'schema_id', '');
  const schemaVersion = readString(raw, 'schema_version', '');
  return {
    schema_id: schemaId === '' ? INTENT_SCHEMA_ID : schemaId,
    schema_version: schemaVersion === '' ? INTENT_SCHEMA_VERSION : schemaVersion,
    created_at: toUTC(createdAt),
    producer_version: readString(raw, 'producer_version', ''),
    tool_name: toolName,
    args,
    targets,
    arg_provenance: dedupeSortProvenance(provenance),
    skill_provenance: skill,
    delegation,
    context,
    script,
    script_hash: script ? scriptHashOf(script.steps) : '',
    relationship,
    trace_context: readTraceContext(contextRaw),
  };
}

/**
 * A script is evaluated step by step, each step on its own targets and provenance. Top-level
 * entries that no step lists would be looked at by nothing, so they are refused rather than
 * silently left unchecked (a summary of the steps' entries is fine).
 */
function assertCoveredBySteps<T>(topLevel: readonly T[], steps: readonly T[], field: string, key: (item: T) => string): void {
  const covered = new Set(steps.map(key));
  const missing = topLevel.findIndex((item) => !covered.has(key(item)));
  if (missing >= 0) {
    throw invalidIntent(`${field}[${missing}] is not listed in any script step (a script is evaluated per step; list it in the step that uses it)`);
  }
}

function assertCanonicalToolName(name: string, field: string): void {
  const problem = toolNameProblem(name);
  if (problem !== undefined) throw invalidIntent(`${field} ${problem}`);
}

function normalizeScript(raw: JsonObject): { steps: ScriptStep[] } {
  const stepsRaw = readObjectArray(raw, 'steps', 'script.');
  if (stepsRaw.length === 0) throw invalidIntent('script.steps must not be empty');
  if (stepsRaw.length > MAX_SCRIPT_STEPS) throw invalidIntent(`script.steps exceeds max supported steps (${MAX_SCRIPT_STEPS})`);
  const steps = stepsRaw.map((step, i): ScriptStep => {
    const path = `script.steps[${i}].`;
    const toolName = goLower(goTrim(readString(step, 'tool_name', path)));
    if (toolName === '') throw invalidIntent(`script.steps[${i}].tool_name is required`);
    assertCanonicalToolName(toolName, `script.steps[${i}].tool_name`);
    const argsValue = step['args'];
    if (argsValue !== undefined && argsValue !== null && !isJsonObject(argsValue)) {
      throw invalidIntent(`script.steps[${i}].args must be a JSON object`);
    }
    const args = normalizeArgs(isJsonObject(argsValue) ? argsValue : undefined, 'args');
    assertNoRawCredentials(`script.steps[${i}].args`, args);
    const targets = dedupeSortTargets(
      readObjectArray(step, 'targets', path).map((t, j) => normalizeTarget(t, toolName, `${path}targets[${j}].`)),
    );
    const provenance = dedupeSortProvenance(
      readObjectArray(step, 'arg_provenance', path).map((p, j) => normalizeProvenance(p, `${path}arg_provenance[${j}].`)),
    );
    return { tool_name: toolName, args, targets, arg_provenance: provenance };
  });
  return { steps };
}

/**
 * How many containers `args` (itself included) and `context.auth_context` may nest. Every digest
 * that covers them must stay within the canonicalizer's limit (`MAX_JCS_DEPTH`, with room for the
 * script and intent envelopes around them), so an intent is refused here, as not evaluable, rather
 * than failing later in some digest with a different error on each path.
 */
export const MAX_ARGS_DEPTH = 100;

/**
 * Deep normalization of free-form objects: trim every string and key; empty or colliding keys
 * fail, and so do numbers JSON allows but no tool can receive (`1e400` parses to Infinity) and
 * nesting past `MAX_ARGS_DEPTH`.
 */
export function normalizeArgs(value: JsonObject | undefined, label: string): JsonObject {
  if (value === undefined) return {};
  return normalizeObject(value, label, 1);
}

function normalizeObject(obj: JsonObject, label: string, depth: number): JsonObject {
  if (depth > MAX_ARGS_DEPTH) throw invalidIntent(`${label} nests deeper than ${MAX_ARGS_DEPTH} levels`);
  const out: JsonObject = {};
  for (const key of Object.keys(obj)) {
    const trimmed = goTrim(key);
    if (trimmed === '') throw invalidIntent(`${label} contains empty key`);
    // Go keeps an arbitrary one of two keys that trim alike; a digest must not depend on that.
    if (Object.hasOwn(out, trimmed)) throw invalidIntent(`${label} contains duplicate key after trimming: ${trimmed}`);
    out[trimmed] = normalizeValue(obj[key] as JsonValue, label, depth);
  }
  return out;
}

function assertMaxDepth(value: JsonValue, label: string, depth: number): void {
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_ARGS_DEPTH) throw invalidIntent(`${label} nests deeper than ${MAX_ARGS_DEPTH} levels`);
  for (const child of Array.isArray(value) ? value : Object.values(value)) assertMaxDepth(child, label, depth + 1);
}

function normalizeValue(value: JsonValue, label: string, depth: number): JsonValue {
  if (typeof value === 'string') return goTrim(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidIntent(`${label} contains a number outside the range of a 64-bit float`);
    return value;
  }
  if (Array.isArray(value)) {
    if (depth + 1 > MAX_ARGS_DEPTH) throw invalidIntent(`${label} nests deeper than ${MAX_ARGS_DEPTH} levels`);
    return value.map((v) => normalizeValue(v, label, depth + 1));
  }
  if (value !== null && typeof value === 'object') return normalizeObject(value, label, depth + 1);
  return value;
}

function normalizeProvenance(raw: JsonObject, path: string): ArgProvenance {
  const argPath = goTrim(readString(raw, 'arg_path', path));
  const source = goLower(goTrim(readString(raw, 'source', path)));
  const integrity = goLower(goTrim(readString(raw, 'integrity_digest', path)));
  const sourceRef = goTrim(readString(raw, 'source_ref', path));
  if (argPath === '' || source === '') throw invalidIntent('arg provenance requires arg_path and source');
  if (!PROVENANCE_SOURCES.has(source)) throw invalidIntent(`unsupported provenance source: ${source}`);
  if (integrity !== '' && !isSha256Hex(integrity)) throw invalidIntent(`invalid provenance integrity_digest: ${integrity}`);
  return { arg_path: argPath, source, source_ref: sourceRef, integrity_digest: integrity };
}

function provenanceKey(p: ArgProvenance): string {
  return JSON.stringify([p.arg_path, p.source, p.source_ref, p.integrity_digest]);
}

function dedupeSortProvenance(list: ArgProvenance[]): ArgProvenance[] {
  if (list.length < 2) return list;
  const seen = new Map<string, ArgProvenance>();
  for (const p of list) seen.set(provenanceKey(p), p);
  return [...seen.values()].sort(
    (a, b) =>
      compareUtf8(a.arg_path, b.arg_path) ||
      compareUtf8(a.source, b.source) ||
      compareUtf8(a.source_ref, b.source_ref) ||
      compareUtf8(a.integrity_digest, b.integrity_digest),
  );
}

function normalizeSkill(raw: JsonObject): SkillProvenance {
  const p = 'skill_provenance.';
  const skill: SkillProvenance = {
    skill_name: goTrim(readString(raw, 'skill_name', p)),
    skill_version: goTrim(readString(raw, 'skill_version', p)),
    source: goLower(goTrim(readString(raw, 'source', p))),
    publisher: goTrim(readString(raw, 'publisher', p)),
    digest: goLower(goTrim(readString(raw, 'digest', p))),
    signature_key_id: goTrim(readString(raw, 'signature_key_id', p)),
  };
  if (skill.skill_name === '' || skill.source === '' || skill.publisher === '') {
    throw invalidIntent('skill provenance requires skill_name, source, and publisher');
  }
  if (skill.digest !== '' && !isSha256Hex(skill.digest)) throw invalidIntent(`invalid skill provenance digest: ${skill.digest}`);
  return skill;
}

function normalizeContext(raw: JsonObject): IntentContext {
  const p = 'context.';
  const identity = goTrim(readString(raw, 'identity', p));
  const workspace = goTrim(readString(raw, 'workspace', p)).replaceAll('\\', '/');
  const riskClass = goLower(goTrim(readString(raw, 'risk_class', p)));
  if (identity === '') throw invalidIntent('context.identity is required');
  if (workspace === '') throw invalidIntent('context.workspace is required');
  if (riskClass === '') throw invalidIntent('context.risk_class is required');

  const plain = {} as Record<(typeof CONTEXT_PLAIN_STRING_FIELDS)[number], string>;
  for (const field of CONTEXT_PLAIN_STRING_FIELDS) plain[field] = goTrim(readString(raw, field, p));

  const contextSetDigest = goLower(goTrim(readString(raw, 'context_set_digest', p)));
  if (contextSetDigest !== '' && !isSha256Hex(contextSetDigest)) throw invalidIntent('context.context_set_digest must be sha256 hex');

  const ttl = readInt(raw, 'credential_ttl_seconds', p);
  if (ttl < 0) throw invalidIntent('context.credential_ttl_seconds must be >= 0');
  const credentialSource = goLower(goTrim(readString(raw, 'credential_source', p)));
  if (credentialSource !== '' && !CREDENTIAL_SOURCES.has(credentialSource)) {
    throw invalidIntent(`context.credential_source is unsupported: ${credentialSource}`);
  }
  const accessType = goLower(goTrim(readString(raw, 'credential_access_type', p)));
  if (accessType !== '' && !CREDENTIAL_ACCESS_TYPES.has(accessType)) {
    throw invalidIntent(`context.credential_access_type is unsupported: ${accessType}`);
  }
  const mode = goLower(goTrim(readString(raw, 'context_evidence_mode', p)));
  if (mode !== '' && mode !== 'best_effort' && mode !== 'required') {
    throw invalidIntent('context.context_evidence_mode must be best_effort or required');
  }
  let phase = goLower(goTrim(readString(raw, 'phase', p)));
  if (phase === '') phase = 'apply';
  if (phase !== 'plan' && phase !== 'apply') throw invalidIntent('context.phase must be plan or apply');

  const sandboxRaw = readObject(raw, 'sandbox', p);
  const agentRaw = readObject(raw, 'agent_identity', p);
  const authRaw = readObject(raw, 'auth_context', p);
  let authContext: JsonObject | undefined;
  if (authRaw) {
    authContext = normalizeArgs(authRaw, 'context.auth_context');
    assertNoRawCredentials('context.auth_context', authContext);
    if (Object.keys(authContext).length === 0) authContext = undefined;
  }

  return {
    identity,
    workspace,
    risk_class: riskClass,
    phase,
    ...plain,
    credential_source: credentialSource,
    credential_access_type: accessType,
    credential_ttl_seconds: ttl,
    credential_scopes: uniqueSorted(readStringArray(raw, 'credential_scopes', p)),
    agent_identity: agentRaw ? normalizeAgentIdentity(agentRaw) : undefined,
    sandbox: sandboxRaw ? normalizeSandbox(sandboxRaw) : undefined,
    auth_context: authContext,
    context_set_digest: contextSetDigest,
    context_evidence_mode: mode,
    context_refs: uniqueSorted(readStringArray(raw, 'context_refs', p)),
  };
}

function normalizeAgentIdentity(raw: JsonObject): AgentIdentity {
  const p = 'context.agent_identity.';
  const agent: AgentIdentity = {
    lifecycle_states: uniqueSorted(readStringArray(raw, 'lifecycle_states', p)),
    owner: goTrim(readString(raw, 'owner', p)),
    publisher: goTrim(readString(raw, 'publisher', p)),
    source: goLower(goTrim(readString(raw, 'source', p))),
    manifest_digest: goLower(goTrim(readString(raw, 'manifest_digest', p))),
    issued_at: toUTC(readTime(raw, 'issued_at', p)),
    approved_at: toUTC(readTime(raw, 'approved_at', p)),
    expires_at: toUTC(readTime(raw, 'expires_at', p)),
    revoked: readBool(raw, 'revoked', p),
  };
  if (agent.manifest_digest !== '' && !isSha256Hex(agent.manifest_digest)) {
    throw invalidIntent('context.agent_identity.manifest_digest must be sha256 hex');
  }
  const set = (t: GoTime) => !isZeroTime(t);
  if (set(agent.issued_at) && set(agent.approved_at) && compareTime(agent.approved_at, agent.issued_at) < 0) {
    throw invalidIntent('context.agent_identity.approved_at must be on or after issued_at');
  }
  if (set(agent.expires_at)) {
    if (set(agent.issued_at) && compareTime(agent.expires_at, agent.issued_at) <= 0) {
      throw invalidIntent('context.agent_identity.expires_at must be after issued_at');
    }
    if (set(agent.approved_at) && compareTime(agent.expires_at, agent.approved_at) <= 0) {
      throw invalidIntent('context.agent_identity.expires_at must be after approved_at');
    }
  }
  return agent;
}

function normalizeSandbox(raw: JsonObject): SandboxContext | undefined {
  const p = 'context.sandbox.';
  const sandbox: SandboxContext = {
    network_mode: goLower(goTrim(readString(raw, 'network_mode', p))),
    env_exposure_mode: goLower(goTrim(readString(raw, 'env_exposure_mode', p))),
    filesystem_isolation: goLower(goTrim(readString(raw, 'filesystem_isolation', p))),
    user_mode: goLower(goTrim(readString(raw, 'user_mode', p))),
    timeout_seconds: readInt(raw, 'timeout_seconds', p),
    writable_paths: normalizeSandboxPaths(readStringArray(raw, 'writable_paths', p), 'writable_paths'),
    read_only_roots: normalizeSandboxPaths(readStringArray(raw, 'read_only_roots', p), 'read_only_roots'),
    evidence_ref: goTrim(readString(raw, 'evidence_ref', p)),
    evidence_digest: goLower(goTrim(readString(raw, 'evidence_digest', p))),
  };
  for (const field of ['network_mode', 'env_exposure_mode', 'filesystem_isolation', 'user_mode'] as const) {
    const value = sandbox[field];
    if (value !== '' && !SANDBOX_ENUMS[field].has(value)) throw invalidIntent(`context.sandbox.${field} is unsupported: ${value}`);
  }
  if (sandbox.timeout_seconds < 0) throw invalidIntent('context.sandbox.timeout_seconds must be >= 0');
  if (sandbox.evidence_digest !== '' && !isSha256Hex(sandbox.evidence_digest)) {
    throw invalidIntent('context.sandbox.evidence_digest must be sha256 hex');
  }
  if (sandbox.evidence_ref !== '') {
    if (isEnvAssignment(sandbox.evidence_ref)) {
      throw invalidIntent('context.sandbox.evidence_ref must not contain raw environment variable assignments');
    }
    if (!isSafeEvidenceRef(sandbox.evidence_ref)) {
      throw invalidIntent('context.sandbox.evidence_ref must not contain secret-like sandbox material');
    }
  }
  const empty =
    sandbox.network_mode === '' &&
    sandbox.env_exposure_mode === '' &&
    sandbox.filesystem_isolation === '' &&
    sandbox.user_mode === '' &&
    sandbox.timeout_seconds === 0 &&
    sandbox.writable_paths.length === 0 &&
    sandbox.read_only_roots.length === 0 &&
    sandbox.evidence_ref === '' &&
    sandbox.evidence_digest === '';
  return empty ? undefined : sandbox;
}

/**
 * Clean sandbox path lists: `path.Clean`, drop `.`/empty, dedupe, sort. The reference's
 * `filepath.ToSlash` is the identity on Linux, so `\` stays an ordinary character (unlike the
 * workspace, where the reference replaces it explicitly).
 */
function normalizeSandboxPaths(list: readonly string[], field: string): string[] {
  const cleaned: string[] = [];
  for (const entry of list) {
    const trimmed = goTrim(entry);
    if (trimmed === '') continue;
    if (isEnvAssignment(trimmed)) {
      throw invalidIntent(`context.sandbox.${field} must not contain raw environment variable assignments`);
    }
    const clean = goCleanPath(trimmed);
    if (clean !== '.') cleaned.push(clean);
  }
  return uniqueSorted(cleaned);
}

function normalizeDelegation(raw: JsonObject): Delegation {
  const p = 'delegation.';
  const requester = goTrim(readString(raw, 'requester_identity', p));
  if (requester === '') throw invalidIntent('delegation.requester_identity is required');
  const issuedAt = toUTC(readTime(raw, 'issued_at', p));
  const expiresAt = toUTC(readTime(raw, 'expires_at', p));
  const chain = readObjectArray(raw, 'chain', p).map((link, i): DelegationLink => {
    const lp = `delegation.chain[${i}].`;
    const normalized: DelegationLink = {
      delegator_identity: goTrim(readString(link, 'delegator_identity', lp)),
      delegate_identity: goTrim(readString(link, 'delegate_identity', lp)),
      scope_class: goLower(goTrim(readString(link, 'scope_class', lp))),
      token_ref: goTrim(readString(link, 'token_ref', lp)),
      issued_at: toUTC(readTime(link, 'issued_at', lp)),
      expires_at: toUTC(readTime(link, 'expires_at', lp)),
    };
    if (normalized.delegator_identity === '' || normalized.delegate_identity === '') {
      throw invalidIntent(`delegation.chain[${i}] requires delegator_identity and delegate_identity`);
    }
    if (expiresBeforeIssue(normalized.issued_at, normalized.expires_at)) {
      throw invalidIntent(`delegation.chain[${i}] expires_at must be after issued_at`);
    }
    return normalized;
  });
  for (let i = 1; i < chain.length; i++) {
    if (chain[i]!.delegator_identity !== chain[i - 1]!.delegate_identity) {
      throw invalidIntent(
        `delegation.chain[${i}] delegator_identity must match delegation.chain[${i - 1}].delegate_identity`,
      );
    }
  }
  if (expiresBeforeIssue(issuedAt, expiresAt)) throw invalidIntent('delegation.expires_at must be after issued_at');
  if (chain.length > 0 && chain[chain.length - 1]!.delegate_identity !== requester) {
    throw invalidIntent('delegation.chain last delegate_identity must match delegation.requester_identity');
  }
  return {
    requester_identity: requester,
    scope_class: goLower(goTrim(readString(raw, 'scope_class', p))),
    token_refs: uniqueSorted(readStringArray(raw, 'token_refs', p)),
    issued_at: issuedAt,
    expires_at: expiresAt,
    chain,
  };
}

function expiresBeforeIssue(issued: GoTime, expires: GoTime): boolean {
  return !isZeroTime(issued) && !isZeroTime(expires) && compareTime(expires, issued) <= 0;
}

/**
 * W3C Trace Context carried in the intent context (Ward extension). The reference ignores these
 * keys, so they are outside every digest; an invalid `traceparent` is dropped rather than
 * propagated, because joining on a wrong trace id is worse than not joining.
 */
function readTraceContext(raw: JsonObject): TraceContext | undefined {
  const traceparent = raw['traceparent'];
  const tracestate = raw['tracestate'];
  return parseTraceContext({
    traceparent: typeof traceparent === 'string' ? traceparent : undefined,
    tracestate: typeof tracestate === 'string' ? tracestate : undefined,
  }).context;
}

