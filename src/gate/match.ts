import type { JsonObject } from '../canon/index.js';
import type { ArgProvenance, NormalizedIntent, Target } from '../intent/types.js';
import { targetValueIn } from './target-match.js';
import type { PolicyMatch, PolicyRule } from '../policy/types.js';

/** Does a rule's `match` block select this (prepared) intent? All present selectors are AND-ed (§2.4). */
export function ruleMatches(rule: PolicyRule, intent: NormalizedIntent): boolean {
  const m = rule.match;
  const ctx = intent.context;
  const targets = intent.targets;
  if (m.tool_names.length && !m.tool_names.includes(intent.tool_name)) return false;
  if (m.risk_classes.length && !m.risk_classes.includes(ctx.risk_class)) return false;
  if (m.identities.length && !m.identities.includes(ctx.identity)) return false;
  if (m.workspace_prefixes.length && !m.workspace_prefixes.some((p) => ctx.workspace.startsWith(p))) return false;
  if (m.target_kinds.length && !anyTarget(targets, (t) => m.target_kinds.includes(t.kind))) return false;
  if (m.target_values.length && !anyTarget(targets, (t) => targetValueIn(m.target_values, t, ctx.workspace, intent.path_view))) return false;
  if (m.endpoint_classes.length && !anyTarget(targets, (t) => m.endpoint_classes.includes(t.endpoint_class))) return false;
  if (m.discovery_methods.length && !anyTarget(targets, (t) => m.discovery_methods.includes(t.discovery_method))) {
    return false;
  }
  if (m.tool_annotations && !annotationsMatch(m, targets)) return false;
  if (m.skill_publishers.length || m.skill_sources.length) {
    const skill = intent.skill_provenance;
    if (!skill) return false;
    if (m.skill_publishers.length && !m.skill_publishers.includes(skill.publisher.toLowerCase())) return false;
    if (m.skill_sources.length && !m.skill_sources.includes(skill.source.toLowerCase())) return false;
  }
  if (m.data_classes.length && !anyTarget(targets, (t) => m.data_classes.includes(t.sensitivity))) return false;
  if (m.destination_kinds.length && !anyTarget(targets, (t) => m.destination_kinds.includes(t.kind))) return false;
  if (m.destination_values.length && !anyTarget(targets, (t) => targetValueIn(m.destination_values, t, ctx.workspace, intent.path_view))) return false;
  if (m.destination_operations.length && !anyTarget(targets, (t) => m.destination_operations.includes(t.operation))) {
    return false;
  }
  if (m.provenance_sources.length && !effectiveProvenanceSources(intent.arg_provenance).some((s) => m.provenance_sources.includes(s))) {
    return false;
  }
  const auth = ctx.auth_context;
  if (m.context_tool_names.length && !wrkrIn(auth, 'wrkr.tool_name', m.context_tool_names)) return false;
  if (m.context_data_classes.length && !wrkrIn(auth, 'wrkr.data_class', m.context_data_classes)) return false;
  if (m.context_endpoint_classes.length && !wrkrIn(auth, 'wrkr.endpoint_class', m.context_endpoint_classes)) return false;
  if (m.context_autonomy_levels.length && !wrkrIn(auth, 'wrkr.autonomy_level', m.context_autonomy_levels)) return false;
  return delegationMatches(m, intent);
}

const TRUST: Readonly<Record<string, number>> = { system: 3, user: 2, tool_output: 1, external: 0 };

/**
 * One source per argument: when an argument is listed with several sources, the least trusted one
 * is what it is (a value that came from outside does not become the user's by also being listed
 * as the user's).
 */
function effectiveProvenanceSources(list: readonly ArgProvenance[]): string[] {
  const byArg = new Map<string, string>();
  for (const p of list) {
    const seen = byArg.get(p.arg_path);
    if (seen === undefined || (TRUST[p.source] ?? -1) < (TRUST[seen] ?? -1)) byArg.set(p.arg_path, p.source);
  }
  return [...byArg.values()];
}

function anyTarget(targets: readonly Target[], pred: (t: Target) => boolean): boolean {
  for (const t of targets) if (pred(t)) return true;
  return false;
}

function annotationsMatch(m: PolicyMatch, targets: readonly Target[]): boolean {
  const a = m.tool_annotations!;
  if (targets.length === 0) return false;
  const checks: [boolean | undefined, (t: Target) => boolean][] = [
    [a.read_only_hint, (t) => t.read_only_hint],
    [a.destructive_hint, (t) => t.destructive_hint],
    [a.idempotent_hint, (t) => t.idempotent_hint],
    [a.open_world_hint, (t) => t.open_world_hint],
  ];
  for (const [want, get] of checks) {
    if (want !== undefined && !anyTarget(targets, (t) => get(t) === want)) return false;
  }
  return true;
}

function wrkrIn(auth: JsonObject | undefined, key: string, list: readonly string[]): boolean {
  const value = auth?.[key];
  return typeof value === 'string' && value !== '' && list.includes(value.toLowerCase());
}

function delegationMatches(m: PolicyMatch, intent: NormalizedIntent): boolean {
  const constrained =
    m.require_delegation ||
    m.allowed_delegator_identities.length > 0 ||
    m.allowed_delegate_identities.length > 0 ||
    m.delegation_scopes.length > 0 ||
    m.max_delegation_depth !== undefined;
  if (!constrained) return true;
  const d = intent.delegation;
  if (!d) return false;
  if (m.max_delegation_depth !== undefined && d.chain.length > m.max_delegation_depth) return false;
  // The chain must start at an allowed delegator: an allowed identity further down the chain was
  // itself delegated to by someone the policy does not trust.
  if (m.allowed_delegator_identities.length && !(d.chain.length > 0 && m.allowed_delegator_identities.includes(d.chain[0]!.delegator_identity))) {
    return false;
  }
  if (
    m.allowed_delegate_identities.length &&
    !m.allowed_delegate_identities.includes(d.requester_identity) &&
    !d.chain.some((l) => m.allowed_delegate_identities.includes(l.delegate_identity))
  ) {
    return false;
  }
  if (
    m.delegation_scopes.length &&
    !m.delegation_scopes.includes(d.scope_class) &&
    !d.chain.some((l) => m.delegation_scopes.includes(l.scope_class))
  ) {
    return false;
  }
  return true;
}
