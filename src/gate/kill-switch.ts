import { decodeError, decodeJsonText, expectRootObject, readBool, readObjectArray, readString, readStringArray, readTime, rejectUnknownFields, type Decoder } from '../context/index.js';
import { ERROR_CODES } from '../errors.js';
import { compareTime, formatRFC3339Nano, goCleanPath, goLower, goTrim, isZeroTime, toUTC, uniqueSorted, type GoTime, type JsonObject } from '../canon/index.js';
import { TARGET_KINDS } from '../contract/vocabulary.js';
import type { NormalizedIntent, Target } from '../intent/types.js';
import { canonicalPaths, canonicalTarget } from '../intent/canonical.js';
import { underPrefix } from './constraints.js';
import { resolvePathPattern, targetValueIn } from './target-match.js';

/*
 * Kill switches (`gate.md` §3.1 step 6). The state file `gait.gate.kill_switch_state` 1.0.0 is a
 * secondary artifact in the contract; its shape is Ward's and is documented in docs/kill-switch.md.
 * Parsing is strict and fails closed: a state the gate cannot fully understand is "unavailable",
 * which blocks high-risk intents, rather than a state that silently matches less.
 */

export const KILL_SWITCH_STATE_SCHEMA_ID = 'gait.gate.kill_switch_state';
export const KILL_SWITCH_STATE_SCHEMA_VERSION = '1.0.0';

export const KILL_SWITCH_ACTIVE = 'kill_switch_active';
export const KILL_SWITCH_STATE_UNAVAILABLE = 'kill_switch_state_unavailable';

export interface KillSwitchEntry {
  readonly id: string;
  readonly enabled: boolean;
  readonly reason: string;
  /** Informational; the zero time when absent. */
  readonly created_at: GoTime;
  /** The zero time means "never expires". */
  readonly expires_at: GoTime;
  /** Selectors; "" or [] means "not set". Every selector that is set must match. */
  readonly agent_id: string;
  readonly identity: string;
  /** Lowercased. */
  readonly tool_name: string;
  /** Lowercased; compared with the intent's environment lowercased. */
  readonly environment: string;
  /** Lowercased; one of the contract's target kinds. */
  readonly target_kind: string;
  readonly target_value: string;
  /** Cleaned (`/` separators, Go path.Clean), deduplicated, sorted. */
  readonly path_prefixes: readonly string[];
  readonly workspace_prefixes: readonly string[];
}

export interface KillSwitchState {
  readonly schema_id: typeof KILL_SWITCH_STATE_SCHEMA_ID;
  readonly schema_version: typeof KILL_SWITCH_STATE_SCHEMA_VERSION;
  /** Informational; the zero time when absent. */
  readonly updated_at: GoTime;
  readonly entries: readonly KillSwitchEntry[];
}

const DECODER: Decoder = {
  prefix: 'parse kill switch state: ',
  root: 'KillSwitchState',
  code: ERROR_CODES.KILL_SWITCH_INVALID,
};

const STATE_KEYS: ReadonlySet<string> = new Set(['schema_id', 'schema_version', 'updated_at', 'entries']);
const ENTRY_KEYS: ReadonlySet<string> = new Set([
  'id',
  'enabled',
  'reason',
  'created_at',
  'expires_at',
  'agent_id',
  'identity',
  'tool_name',
  'environment',
  'target_kind',
  'target_value',
  'path_prefixes',
  'workspace_prefixes',
]);

/**
 * Parse a kill-switch state file. Unknown keys, wrong types, a missing `entries` array, an entry
 * without `id` or `enabled`, duplicate ids and unsupported target kinds are all errors: a typo
 * must never turn into a selector that quietly matches nothing.
 */
export function parseKillSwitchState(text: string): KillSwitchState {
  const root = expectRootObject(DECODER, decodeJsonText(DECODER, text));
  rejectUnknownFields(DECODER, root, STATE_KEYS);
  const schemaId = goTrim(readString(DECODER, root, 'schema_id')) || KILL_SWITCH_STATE_SCHEMA_ID;
  if (schemaId !== KILL_SWITCH_STATE_SCHEMA_ID) throw decodeError(DECODER, `unsupported kill switch state schema_id: ${schemaId}`);
  const version = goTrim(readString(DECODER, root, 'schema_version')) || KILL_SWITCH_STATE_SCHEMA_VERSION;
  if (version !== KILL_SWITCH_STATE_SCHEMA_VERSION) {
    throw decodeError(DECODER, `unsupported kill switch state schema_version: ${version}`);
  }
  if (!Array.isArray(root['entries'])) throw decodeError(DECODER, 'entries must be a JSON array');
  const entries = readObjectArray(DECODER, root, 'entries', 'KillSwitchEntry').map(decodeEntry);
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.id)) throw decodeError(DECODER, `duplicate entry id ${JSON.stringify(entry.id)}`);
    seen.add(entry.id);
  }
  return Object.freeze({
    schema_id: KILL_SWITCH_STATE_SCHEMA_ID,
    schema_version: KILL_SWITCH_STATE_SCHEMA_VERSION,
    updated_at: toUTC(readTime(DECODER, root, 'updated_at')),
    entries: Object.freeze(entries),
  });
}

function decodeEntry(raw: JsonObject, index: number): KillSwitchEntry {
  rejectUnknownFields(DECODER, raw, ENTRY_KEYS);
  const path = 'entries';
  const id = goTrim(readString(DECODER, raw, 'id', path));
  if (id === '') throw decodeError(DECODER, `entries[${index}].id is required`);
  if (typeof raw['enabled'] !== 'boolean') throw decodeError(DECODER, `entries[${index}].enabled must be true or false`);
  const targetKind = goLower(goTrim(readString(DECODER, raw, 'target_kind', path)));
  if (targetKind !== '' && !TARGET_KINDS.has(targetKind)) {
    throw decodeError(DECODER, `entries[${index}].target_kind is unsupported: ${targetKind}`);
  }
  return Object.freeze({
    id,
    enabled: readBool(DECODER, raw, 'enabled', path),
    reason: goTrim(readString(DECODER, raw, 'reason', path)),
    created_at: toUTC(readTime(DECODER, raw, 'created_at', path)),
    expires_at: toUTC(readTime(DECODER, raw, 'expires_at', path)),
    agent_id: goTrim(readString(DECODER, raw, 'agent_id', path)),
    identity: goTrim(readString(DECODER, raw, 'identity', path)),
    tool_name: goLower(goTrim(readString(DECODER, raw, 'tool_name', path))),
    environment: goLower(goTrim(readString(DECODER, raw, 'environment', path))),
    target_kind: targetKind,
    target_value: goTrim(readString(DECODER, raw, 'target_value', path)),
    path_prefixes: Object.freeze(cleanPrefixes(readStringArray(DECODER, raw, 'path_prefixes', path))),
    workspace_prefixes: Object.freeze(cleanPrefixes(readStringArray(DECODER, raw, 'workspace_prefixes', path))),
  });
}

function cleanPrefixes(list: readonly string[]): string[] {
  return uniqueSorted(uniqueSorted(list).map(cleanSlashPath));
}

/** `\` becomes `/` (as for intent workspaces), then Go path.Clean, so `..` cannot step around a prefix. */
function cleanSlashPath(value: string): string {
  return goCleanPath(value.replaceAll('\\', '/'));
}

/** The JSON form of a state (what `ward kill-switch` writes); parseKillSwitchState reads it back unchanged. */
export function killSwitchStateJson(state: KillSwitchState): JsonObject {
  const out: JsonObject = { schema_id: state.schema_id, schema_version: state.schema_version };
  if (!isZeroTime(state.updated_at)) out['updated_at'] = formatRFC3339Nano(state.updated_at);
  out['entries'] = state.entries.map((entry) => {
    const e: JsonObject = { id: entry.id, enabled: entry.enabled };
    if (entry.reason) e['reason'] = entry.reason;
    if (!isZeroTime(entry.created_at)) e['created_at'] = formatRFC3339Nano(entry.created_at);
    if (!isZeroTime(entry.expires_at)) e['expires_at'] = formatRFC3339Nano(entry.expires_at);
    for (const key of ['agent_id', 'identity', 'tool_name', 'environment', 'target_kind', 'target_value'] as const) {
      if (entry[key]) e[key] = entry[key];
    }
    if (entry.path_prefixes.length) e['path_prefixes'] = [...entry.path_prefixes];
    if (entry.workspace_prefixes.length) e['workspace_prefixes'] = [...entry.workspace_prefixes];
    return e;
  });
  return out;
}

export type KillSwitchStatus = 'active' | 'inactive' | 'unavailable';

/** The decision recorded in gate output and traces (`gate.md` §6.1 `kill_switch`). */
export interface KillSwitchDecision {
  readonly status: KillSwitchStatus;
  /** `kill_switch_active`, `kill_switch_state_unavailable`, or "" when inactive. */
  readonly reason_code: string;
  /** Sorted; [] when inactive. */
  readonly reason_codes: readonly string[];
  /** Sorted ids of the entries that matched. */
  readonly matched_entry_ids: readonly string[];
  /** The evaluation time, UTC. */
  readonly evaluated_at: GoTime;
}

export interface KillSwitchEvaluation {
  decision: KillSwitchDecision;
  /** Reason codes to add to the gate result ([] when inactive); the verdict becomes block when non-empty. */
  reasonCodes: string[];
  /** Violations to add ([] when inactive). */
  violations: string[];
}

const SELECTOR_CODES = {
  agent_id: 'kill_switch_agent_id_active',
  identity: 'kill_switch_identity_active',
  tool_name: 'kill_switch_tool_name_active',
  environment: 'kill_switch_environment_active',
  target: 'kill_switch_target_active',
  path: 'kill_switch_path_active',
  workspace: 'kill_switch_workspace_active',
} as const;

/**
 * Match every enabled, unexpired entry (expires_at zero or after `evaluationTime`) against the
 * intent. An entry matches when every selector it sets matches; an entry that sets none matches
 * every intent (a global stop). For script intents, targets and tool names of every step count
 * too, so wrapping a stopped tool in a script does not get around its kill switch.
 */
export function evaluateKillSwitch(
  state: KillSwitchState,
  intent: NormalizedIntent,
  evaluationTime: GoTime,
): KillSwitchEvaluation {
  const facts = intentFacts(intent);
  const codes: string[] = [];
  const ids: string[] = [];
  for (const entry of state.entries) {
    if (!entry.enabled || !unexpired(entry, evaluationTime)) continue;
    const matched = matchEntry(entry, facts);
    if (matched === undefined) continue;
    ids.push(entry.id);
    codes.push(...matched);
  }
  if (ids.length === 0) {
    return {
      decision: freezeDecision({ status: 'inactive', reason_code: '', reason_codes: [], matched_entry_ids: [], evaluated_at: toUTC(evaluationTime) }),
      reasonCodes: [],
      violations: [],
    };
  }
  const reasonCodes = uniqueSorted([KILL_SWITCH_ACTIVE, ...codes]);
  return {
    decision: freezeDecision({
      status: 'active',
      reason_code: KILL_SWITCH_ACTIVE,
      reason_codes: reasonCodes,
      matched_entry_ids: uniqueSorted(ids),
      evaluated_at: toUTC(evaluationTime),
    }),
    reasonCodes,
    violations: [KILL_SWITCH_ACTIVE],
  };
}

/** The decision when the state is required but could not be loaded (`gate.md` §3.1 step 3). */
export function killSwitchUnavailableDecision(evaluationTime: GoTime): KillSwitchDecision {
  return freezeDecision({
    status: 'unavailable',
    reason_code: KILL_SWITCH_STATE_UNAVAILABLE,
    reason_codes: [KILL_SWITCH_STATE_UNAVAILABLE],
    matched_entry_ids: [],
    evaluated_at: toUTC(evaluationTime),
  });
}

/**
 * The trace/output JSON of a decision: `status` and `evaluated_at` (RFC3339Nano UTC; a Go time is
 * written even under omitempty) always, the other fields only when non-empty.
 */
export function killSwitchDecisionJson(decision: KillSwitchDecision): JsonObject {
  const out: JsonObject = { status: decision.status };
  if (decision.reason_code) out['reason_code'] = decision.reason_code;
  if (decision.reason_codes.length) out['reason_codes'] = [...decision.reason_codes];
  if (decision.matched_entry_ids.length) out['matched_entry_ids'] = [...decision.matched_entry_ids];
  out['evaluated_at'] = formatRFC3339Nano(decision.evaluated_at);
  return out;
}

function freezeDecision(decision: KillSwitchDecision): KillSwitchDecision {
  Object.freeze(decision.reason_codes);
  Object.freeze(decision.matched_entry_ids);
  return Object.freeze(decision);
}

function unexpired(entry: KillSwitchEntry, at: GoTime): boolean {
  return isZeroTime(entry.expires_at) || compareTime(entry.expires_at, at) > 0;
}

/** What the selectors look at, gathered once per evaluation. */
interface IntentFacts {
  agentId: string;
  identity: string;
  toolNames: Set<string>;
  environment: string;
  targets: Target[];
  /** Canonical paths of `path` targets; undefined where a path cannot be reduced (every prefix covers it). */
  paths: (string | undefined)[];
  /** The normalized workspace, which relative target values are resolved against. */
  rawWorkspace: string;
  pathView: NormalizedIntent['path_view'];
  workspace: string;
}

function intentFacts(intent: NormalizedIntent): IntentFacts {
  const steps = intent.script?.steps ?? [];
  const targets = [...intent.targets, ...steps.flatMap((step) => step.targets)];
  return {
    agentId: goTrim(intent.context.agent_id),
    identity: goTrim(intent.context.identity),
    toolNames: new Set([intent.tool_name, ...steps.map((step) => step.tool_name)].map((name) => goLower(goTrim(name)))),
    environment: goLower(goTrim(intent.context.environment)),
    targets,
    paths: targets
      .map((target) => canonicalTarget(target, intent.context.workspace, intent.path_view))
      .filter((canonical, i) => targets[i]!.kind === 'path' || canonical.path !== '')
      .flatMap((canonical): (string | undefined)[] => (canonical.path === undefined ? [undefined] : [...canonicalPaths(canonical)])),
    rawWorkspace: intent.context.workspace,
    pathView: intent.path_view,
    workspace: intent.context.workspace === '' ? '' : cleanSlashPath(intent.context.workspace),
  };
}

/** The selector reason codes when every selector the entry sets matches; undefined otherwise. */
function matchEntry(entry: KillSwitchEntry, facts: IntentFacts): string[] | undefined {
  const codes: string[] = [];
  if (entry.agent_id) {
    if (facts.agentId !== entry.agent_id) return undefined;
    codes.push(SELECTOR_CODES.agent_id);
  }
  if (entry.identity) {
    if (facts.identity !== entry.identity) return undefined;
    codes.push(SELECTOR_CODES.identity);
  }
  if (entry.tool_name) {
    if (!facts.toolNames.has(entry.tool_name)) return undefined;
    codes.push(SELECTOR_CODES.tool_name);
  }
  if (entry.environment) {
    if (facts.environment !== entry.environment) return undefined;
    codes.push(SELECTOR_CODES.environment);
  }
  if (entry.target_kind || entry.target_value) {
    const hit = facts.targets.some(
      (target) =>
        (!entry.target_kind || goLower(target.kind) === entry.target_kind) &&
        (!entry.target_value || targetValueIn([entry.target_value], target, facts.rawWorkspace, facts.pathView)),
    );
    if (!hit) return undefined;
    codes.push(SELECTOR_CODES.target);
  }
  if (entry.path_prefixes.length) {
    const covered = (path: string | undefined) =>
      path === undefined || entry.path_prefixes.some((prefix) => underPrefix(path, resolvePathPattern(prefix, facts.rawWorkspace)));
    if (!facts.paths.some(covered)) return undefined;
    codes.push(SELECTOR_CODES.path);
  }
  if (entry.workspace_prefixes.length) {
    if (facts.workspace === '' || !entry.workspace_prefixes.some((prefix) => underPrefix(facts.workspace, prefix))) {
      return undefined;
    }
    codes.push(SELECTOR_CODES.workspace);
  }
  return codes;
}
