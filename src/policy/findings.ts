import { parse as parseYaml } from 'yaml';
import { PROVENANCE_SOURCES, TARGET_KINDS } from '../contract/vocabulary.js';
import { hasAgentConstraint, hasCredentialConstraint } from './rule.js';
import type { NormalizedPolicy, PolicyMatch, PolicyRule } from './types.js';

/**
 * Static findings about a policy for `ward check`: things that are valid YAML and a valid policy
 * but almost certainly not what the author meant. Every analysis is pure and sound: a finding is
 * reported only when it holds for every possible intent (no false alarms; some cases go unseen).
 */
export type FindingKind =
  | 'never_matches'
  | 'shadowed'
  | 'high_risk_allow_without_evidence'
  | 'allowlist_without_targets'
  | 'pattern_cannot_match'
  | 'empty_selector';

export interface PolicyFinding {
  kind: FindingKind;
  rule: string;
  message: string;
  /** What to change. */
  fix: string;
  /** For `shadowed`: the rule that decides instead. */
  shadowed_by?: string;
}

/** What `ward check` reports about a policy; the console's policy view and change preview show the same. */
export interface PolicyCheck {
  findings: PolicyFinding[];
  gap_warnings: GapWarning[];
}

export function policyCheck(policy: NormalizedPolicy, yamlText?: string): PolicyCheck {
  return { findings: policyFindings(policy, yamlText), gap_warnings: policyGapWarnings(policy) };
}

/** All findings: per rule in rule order, then empty selectors (only when `yamlText` is given). */
export function policyFindings(policy: NormalizedPolicy, yamlText?: string): PolicyFinding[] {
  const out: PolicyFinding[] = [];
  policy.rules.forEach((rule, index) => {
    const never = neverMatchReason(rule, policy);
    if (never !== undefined) {
      out.push({
        kind: 'never_matches',
        rule: rule.name,
        message: `rule ${rule.name} can never match: ${never}`,
        fix: `fix or remove rule ${rule.name}`,
      });
      return; // a rule that cannot match is neither shadowed nor a risk
    }
    const by = shadowingRule(policy, index);
    if (by) {
      const why =
        by.priority < rule.priority
          ? `higher-priority rule ${by.name} (priority ${by.priority} < ${rule.priority}) matches every call it matches, so it is never evaluated`
          : `rule ${by.name} at the same priority matches every call it matches and always blocks, so it never changes a decision`;
      out.push({
        kind: 'shadowed',
        rule: rule.name,
        shadowed_by: by.name,
        message: `rule ${rule.name} is shadowed: ${why}`,
        fix: `give ${rule.name} a lower priority number than ${by.name}, narrow ${by.name}'s match, or remove ${rule.name}`,
      });
    }
    const uncovered = highRiskClassesWithoutEvidence(rule, policy);
    if (uncovered.length) {
      out.push({
        kind: 'high_risk_allow_without_evidence',
        rule: rule.name,
        message: `rule ${rule.name} allows ${uncovered.join('/')} risk calls without requiring evidence (context evidence, delegation, a declared agent or a broker credential)`,
        fix: `set require_context_evidence: true on ${rule.name}, or make it effect: require_approval`,
      });
    }
    for (const problem of unmatchablePathPatterns(rule)) {
      out.push({
        kind: 'pattern_cannot_match',
        rule: rule.name,
        message: `rule ${rule.name}: endpoint.${problem.list} entry ${JSON.stringify(problem.pattern)} cannot match as written: ${problem.why}`,
        fix: problem.fix,
      });
    }
    const lists = allowlistsWithoutTargets(rule, policy);
    if (lists.length) {
      out.push({
        kind: 'allowlist_without_targets',
        rule: rule.name,
        message: `rule ${rule.name} allows calls with no targets: endpoint.${lists.join(' and endpoint.')} only checks the targets a call declares, so a call that declares none passes it`,
        fix: `add a target selector to ${rule.name}'s match (e.g. target_kinds), or fail_closed.required_fields: [targets] for the risk classes it covers`,
      });
    }
  });
  if (yamlText !== undefined) out.push(...emptySelectorFindings(yamlText));
  return out;
}

// ---------------------------------------------------------------------------------------------
// gap warnings

export interface GapWarning {
  code: string;
  message: string;
  fix: string;
}

/**
 * Policy-wide gaps (not tied to one rule): `ward check`'s gap warnings. Every host that shows a
 * policy's findings (the CLI, the daemon's console) shows these from here, so they never differ.
 */
export function policyGapWarnings(p: NormalizedPolicy): GapWarning[] {
  const out: GapWarning[] = [];
  if (p.default_verdict === 'allow') {
    out.push({
      code: 'default_allow',
      message: 'calls that no rule matches are allowed (default_verdict: allow)',
      fix: 'set default_verdict: block (or require_approval) and allow what you need with rules',
    });
  }
  if (!p.fail_closed.enabled) {
    out.push({
      code: 'fail_closed_disabled',
      message: 'fail_closed is off: high-risk calls without targets or provenance are evaluated like any other',
      fix: 'add fail_closed: { enabled: true, required_fields: [targets, arg_provenance] }',
    });
  }
  const escapable = listsEscapableByUnmappedArguments(p);
  if (escapable.length) {
    const named = escapable.map((e) => `${e.rule} (${e.lists.join(', ')})`).join(', ');
    out.push({
      code: 'lists_escapable_by_unmapped_arguments',
      message: `endpoint lists of ${named} see URLs and absolute paths in any argument, but relative paths and bare host names only in arguments named for them (path, file, dir, src, target, url, host, …): a tool that reads "secrets/key.pem" or "169.254.169.254" from an argument named otherwise escapes them`,
      fix: 'name such arguments in the MCP proxy\'s --targets-map, allow only the tools you know (default_verdict: block, rules by tool_names), and confine what a gate cannot see with the agent\'s sandbox (ward sandbox --agent claude-code)',
    });
  }
  if (p.rules.length === 0) {
    out.push({ code: 'no_rules', message: `the policy has no rules: every call gets ${p.default_verdict}`, fix: 'add rules (docs/policies.md)' });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// pattern_cannot_match

export interface PatternProblem {
  list: 'path_allowlist' | 'path_denylist';
  pattern: string;
  why: string;
  fix: string;
}

/**
 * Endpoint path patterns no canonical path can match (docs/canonical-targets.md): a `dir/**`
 * whose `dir` holds glob characters (the part before `/**` is compared literally, so a `*` there
 * only matches a directory really named `*`), and `~` patterns (targets are absolute paths; `~` is
 * never expanded).
 */
export function unmatchablePathPatterns(rule: PolicyRule): PatternProblem[] {
  if (!rule.endpoint.enabled) return [];
  const out: PatternProblem[] = [];
  const lists = [
    ['path_allowlist', rule.endpoint.path_allowlist],
    ['path_denylist', rule.endpoint.path_denylist],
  ] as const;
  for (const [list, patterns] of lists) {
    for (const pattern of patterns) {
      // A denylist reads `**` segments at any depth (gate/glob.ts deepPathMatch): only allowlists compare the prefix literally.
      if (list === 'path_allowlist' && pattern.endsWith('/**') && /[*?[\\]/.test(pattern.slice(0, -3))) {
        out.push({
          list,
          pattern,
          why: 'the part before /** is compared literally, not as a glob',
          fix: `list each directory (e.g. ${JSON.stringify(pattern.slice(0, -3).replace(/\*/g, 'alice'))}/**), or use a glob without /** (in a denylist, a glob also covers everything under what it matches)`,
        });
      } else if (pattern.startsWith('~')) {
        out.push({
          list,
          pattern,
          why: 'targets are compared as absolute paths and ~ is never expanded',
          fix: 'write the absolute path (e.g. /home/alice/.ssh/**)',
        });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// lists a call escapes through an argument Ward does not map (a policy-wide gap warning)

const LISTS = ['path_allowlist', 'path_denylist', 'domain_allowlist', 'domain_denylist'] as const;

/**
 * The rules whose endpoint lists a call can escape through an unmapped argument, with those
 * lists. Target discovery (src/intent/discover.ts) finds URLs and absolute paths in every argument,
 * but a relative path or a bare host name only in an argument whose name says it takes one: a tool
 * that reads `secrets/key.pem` or `169.254.169.254` from `{"note": …}` is checked against no list.
 * Every rule with a list has the gap (Ward cannot know what an unknown tool reads), so `ward check`
 * reports it once for the policy, naming the rules, rather than as a finding per rule.
 */
export function listsEscapableByUnmappedArguments(policy: NormalizedPolicy): { rule: string; lists: string[] }[] {
  const out: { rule: string; lists: string[] }[] = [];
  for (const rule of policy.rules) {
    if (!rule.endpoint.enabled) continue;
    const lists = LISTS.filter((l) => rule.endpoint[l].length > 0);
    if (lists.length) out.push({ rule: rule.name, lists });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// allowlist_without_targets

/** Match selectors that only a call with at least one target can satisfy. */
const TARGET_SELECTORS = [
  'target_kinds',
  'target_values',
  'endpoint_classes',
  'discovery_methods',
  'data_classes',
  'destination_kinds',
  'destination_values',
  'destination_operations',
] as const;

/**
 * The endpoint allowlists of an `allow` rule that a call with no targets satisfies: the rule's
 * match does not need a target, and fail-closed does not demand targets for every risk class the
 * rule can match.
 */
export function allowlistsWithoutTargets(rule: PolicyRule, policy: NormalizedPolicy): string[] {
  if (rule.effect !== 'allow' || !rule.endpoint.enabled) return [];
  const lists = [
    rule.endpoint.path_allowlist.length ? 'path_allowlist' : '',
    rule.endpoint.domain_allowlist.length ? 'domain_allowlist' : '',
  ].filter((l) => l !== '');
  if (lists.length === 0) return [];
  const m = rule.match;
  if (TARGET_SELECTORS.some((key) => m[key].length > 0) || m.tool_annotations) return [];
  const fc = policy.fail_closed;
  const demandsTargets = fc.enabled && fc.required_fields.includes('targets');
  if (demandsTargets && m.risk_classes.length > 0 && m.risk_classes.every((c) => fc.risk_classes.includes(c))) return [];
  return lists;
}

// ---------------------------------------------------------------------------------------------
// never_matches

/**
 * Why no intent can ever select this rule, or undefined when some intent can. Covers selectors
 * whose every value is outside what a normalized intent can carry, contradictory delegation
 * selectors, and rules the policy's fail-closed checks always block before rules run.
 */
export function neverMatchReason(rule: PolicyRule, policy: NormalizedPolicy): string | undefined {
  const m = rule.match;
  const allOutside = (key: keyof PolicyMatch, values: readonly string[], allowed: ReadonlySet<string>, what: string) =>
    values.length > 0 && values.every((v) => !allowed.has(v)) ? `match.${key} lists only ${what} (${values.join(', ')})` : undefined;
  const reasons = [
    allOutside('target_kinds', m.target_kinds, TARGET_KINDS, 'unknown target kinds'),
    allOutside('destination_kinds', m.destination_kinds, TARGET_KINDS, 'unknown target kinds'),
    allOutside('provenance_sources', m.provenance_sources, PROVENANCE_SOURCES, 'unknown provenance sources'),
    m.workspace_prefixes.length > 0 && m.workspace_prefixes.every((p) => p.includes('\\'))
      ? 'match.workspace_prefixes all contain "\\", but intent workspaces always use "/"'
      : undefined,
    m.max_delegation_depth === 0 && m.allowed_delegator_identities.length > 0
      ? 'match.max_delegation_depth 0 allows no delegation links, but allowed_delegator_identities needs one'
      : undefined,
    failClosedPreempts(rule, policy),
  ];
  return reasons.find((r) => r !== undefined);
}

/**
 * With fail-closed on for every risk class the rule matches, a target whose endpoint class is
 * `other` always blocks (`fail_closed_endpoint_class_unknown`) before any rule is evaluated.
 */
function failClosedPreempts(rule: PolicyRule, policy: NormalizedPolicy): string | undefined {
  const fc = policy.fail_closed;
  const m = rule.match;
  if (!fc.enabled || m.risk_classes.length === 0 || !m.risk_classes.every((c) => fc.risk_classes.includes(c))) return undefined;
  if (m.endpoint_classes.length === 0 || !m.endpoint_classes.every((c) => c === 'other')) return undefined;
  return `it matches only endpoint class "other" for risk classes ${m.risk_classes.join(', ')}, which fail_closed always blocks first`;
}

// ---------------------------------------------------------------------------------------------
// shadowed

/** The rule that makes `rules[index]` irrelevant (rules sorted as the policy stores them), if any. */
export function shadowingRule(policy: NormalizedPolicy, index: number): PolicyRule | undefined {
  const rules = policy.rules;
  const rule = rules[index]!;
  const { candidates, never } = shadowIndex(policy);
  for (const i of candidates(rule)) {
    if (i === index) continue;
    const other = rules[i]!;
    if (!matchCovers(other.match, rule.match) || never[i] !== undefined) continue;
    // The first matching rule fixes the tier: a covering rule with a smaller priority number
    // always matches first, and the walk stops before this rule.
    if (other.priority < rule.priority) return other;
    // Same tier: only the most restrictive effect contributes. A rule that always ends in
    // `block` leaves nothing to a rule that can never reach `block`.
    if (other.priority === rule.priority && alwaysBlocks(other) && !canBlock(rule)) return other;
  }
  return undefined;
}

interface ShadowIndex {
  /** Indices, ascending, of the rules that could cover `rule`. */
  candidates(rule: PolicyRule): readonly number[];
  never: readonly (string | undefined)[];
}

const shadowIndexes = new WeakMap<NormalizedPolicy, ShadowIndex>();

/**
 * A rule that covers another lists all of its tool names, or none: indexing rules by tool name
 * keeps the shadowing check near-linear for the large policies that name a tool in every rule
 * (10,000 rules: seconds, not minutes).
 */
function shadowIndex(policy: NormalizedPolicy): ShadowIndex {
  const cached = shadowIndexes.get(policy);
  if (cached) return cached;
  const all = policy.rules.map((_, i) => i);
  const anyTool: number[] = [];
  const byTool = new Map<string, number[]>();
  policy.rules.forEach((rule, i) => {
    if (rule.match.tool_names.length === 0) anyTool.push(i);
    for (const name of rule.match.tool_names) {
      let list = byTool.get(name);
      if (!list) byTool.set(name, (list = []));
      list.push(i);
    }
  });
  const index: ShadowIndex = {
    candidates(rule) {
      const first = rule.match.tool_names[0];
      if (first === undefined) return all;
      return mergeAscending(anyTool, byTool.get(first) ?? []);
    },
    never: policy.rules.map((rule) => neverMatchReason(rule, policy)),
  };
  shadowIndexes.set(policy, index);
  return index;
}

function mergeAscending(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

/** True when every intent that satisfies `inner` also satisfies `outer` (conservative). */
export function matchCovers(outer: PolicyMatch, inner: PolicyMatch): boolean {
  const subset = (a: readonly string[], b: readonly string[]) => b.length > 0 && b.every((v) => a.includes(v));
  // Selectors of the form "the intent's value is in the list" (or "some target's value is").
  const plain: (keyof PolicyMatch)[] = [
    'tool_names',
    'risk_classes',
    'identities',
    'endpoint_classes',
    'discovery_methods',
    'skill_publishers',
    'skill_sources',
    'data_classes',
    'destination_operations',
    'provenance_sources',
    'context_tool_names',
    'context_data_classes',
    'context_endpoint_classes',
    'context_autonomy_levels',
  ];
  for (const key of plain) {
    const a = outer[key] as string[];
    if (a.length && !subset(a, inner[key] as string[])) return false;
  }
  // target_kinds and destination_kinds test the same thing (some target's kind); likewise values.
  const either = (a: readonly string[], b1: readonly string[], b2: readonly string[]) => a.length === 0 || subset(a, b1) || subset(a, b2);
  if (!either(outer.target_kinds, inner.target_kinds, inner.destination_kinds)) return false;
  if (!either(outer.destination_kinds, inner.destination_kinds, inner.target_kinds)) return false;
  if (!either(outer.target_values, inner.target_values, inner.destination_values)) return false;
  if (!either(outer.destination_values, inner.destination_values, inner.target_values)) return false;
  if (outer.workspace_prefixes.length) {
    if (!inner.workspace_prefixes.length) return false;
    if (!inner.workspace_prefixes.every((p) => outer.workspace_prefixes.some((q) => p.startsWith(q)))) return false;
  }
  if (outer.tool_annotations) {
    const a = outer.tool_annotations;
    const b = inner.tool_annotations;
    if (!b) return false;
    for (const hint of ['read_only_hint', 'destructive_hint', 'idempotent_hint', 'open_world_hint'] as const) {
      if (a[hint] !== undefined && a[hint] !== b[hint]) return false;
    }
  }
  return delegationCovers(outer, inner);
}

function delegationConstrained(m: PolicyMatch): boolean {
  return (
    m.require_delegation ||
    m.allowed_delegator_identities.length > 0 ||
    m.allowed_delegate_identities.length > 0 ||
    m.delegation_scopes.length > 0 ||
    m.max_delegation_depth !== undefined
  );
}

function delegationCovers(outer: PolicyMatch, inner: PolicyMatch): boolean {
  if (!delegationConstrained(outer)) return true;
  if (!delegationConstrained(inner)) return false; // inner also matches intents without delegation
  const subset = (a: readonly string[], b: readonly string[]) => a.length === 0 || (b.length > 0 && b.every((v) => a.includes(v)));
  if (outer.max_delegation_depth !== undefined) {
    if (inner.max_delegation_depth === undefined || inner.max_delegation_depth > outer.max_delegation_depth) return false;
  }
  return (
    subset(outer.allowed_delegator_identities, inner.allowed_delegator_identities) &&
    subset(outer.allowed_delegate_identities, inner.allowed_delegate_identities) &&
    subset(outer.delegation_scopes, inner.delegation_scopes)
  );
}

/** A `block` rule stays `block`: per-rule steps only raise the effect, except a dataflow action that replaces it. */
function alwaysBlocks(rule: PolicyRule): boolean {
  return rule.effect === 'block' && (!rule.dataflow.enabled || rule.dataflow.action === 'block');
}

/** Can this rule's evaluation end in `block`? (Any per-rule constraint might; conservative.) */
function canBlock(rule: PolicyRule): boolean {
  return rule.effect === 'block' || hasConstraints(rule);
}

function hasConstraints(rule: PolicyRule): boolean {
  return (
    rule.dataflow.enabled ||
    rule.endpoint.enabled ||
    rule.freeze_window.enabled ||
    rule.sandbox.enabled ||
    hasEvidenceRequirement(rule) ||
    rule.max_context_age_seconds > 0 ||
    hasAgentConstraint(rule) ||
    hasCredentialConstraint(rule)
  );
}

// ---------------------------------------------------------------------------------------------
// high_risk_allow_without_evidence

const HIGH_RISK = ['critical', 'high'];

/** Does the rule itself demand evidence beyond the intent's own claims? */
function hasEvidenceRequirement(rule: PolicyRule): boolean {
  return (
    rule.require_context_evidence ||
    rule.required_context_evidence_mode === 'required' ||
    rule.require_broker_credential ||
    rule.match.require_delegation ||
    rule.require_declared_agent ||
    rule.allowed_agent_ids.length > 0
  );
}

/**
 * The high/critical risk classes an `allow` rule names explicitly for which neither the rule nor
 * the policy's fail-closed `required_fields` (context_evidence or delegation) demand evidence.
 */
export function highRiskClassesWithoutEvidence(rule: PolicyRule, policy: NormalizedPolicy): string[] {
  if (rule.effect !== 'allow' || hasEvidenceRequirement(rule)) return [];
  const fc = policy.fail_closed;
  const policyDemands = (cls: string) =>
    fc.enabled && fc.risk_classes.includes(cls) && fc.required_fields.some((f) => f === 'context_evidence' || f === 'delegation');
  return rule.match.risk_classes.filter((c) => HIGH_RISK.includes(c) && !policyDemands(c));
}

// ---------------------------------------------------------------------------------------------
// empty_selector (needs the YAML: normalization cannot tell `[]` from absent)

const MATCH_LIST_KEYS = [
  'tool_names',
  'risk_classes',
  'identities',
  'workspace_prefixes',
  'target_kinds',
  'target_values',
  'endpoint_class',
  'endpoint_classes',
  'discovery_method',
  'skill_publishers',
  'skill_sources',
  'data_classes',
  'destination_kinds',
  'destination_values',
  'destination_operations',
  'provenance_sources',
  'context_tool_names',
  'context_data_classes',
  'context_endpoint_classes',
  'context_autonomy_levels',
  'allowed_delegator_identities',
  'allowed_delegate_identities',
  'delegation_scopes',
];

/**
 * A selector written as an empty list (or only blank strings) does not restrict anything: Ward,
 * like the reference, treats it as absent, so the rule matches more than it appears to.
 */
export function emptySelectorFindings(yamlText: string): PolicyFinding[] {
  let doc: unknown;
  try {
    doc = parseYaml(yamlText);
  } catch {
    return []; // the loader reports syntax errors
  }
  const rules = isRecord(doc) && Array.isArray(doc['rules']) ? doc['rules'] : [];
  const out: PolicyFinding[] = [];
  for (const raw of rules) {
    if (!isRecord(raw) || !isRecord(raw['match'])) continue;
    const name = String(raw['name'] ?? '').trim();
    const match = raw['match'];
    for (const key of MATCH_LIST_KEYS) {
      const value = match[key];
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() !== '')) continue;
      out.push({
        kind: 'empty_selector',
        rule: name,
        message: `rule ${name}: match.${key} is empty, which does not restrict the rule (it matches any value)`,
        fix: `list the values match.${key} should select, or delete the key`,
      });
    }
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
