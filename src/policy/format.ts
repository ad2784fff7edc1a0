import { Document, isScalar, visit } from 'yaml';
import type { NormalizedPolicy, PolicyMatch, PolicyRule, RateLimitConfig } from './types.js';

type YamlMap = Record<string, unknown>;

/**
 * The normalized policy as YAML (`ward policy fmt`): keys in a fixed order, rules sorted, lists
 * normalized, derived settings written out, and off or empty settings left out. Re-parsing the
 * text gives the same normalized policy and digest. Comments are not preserved.
 */
export function formatPolicyYaml(policy: NormalizedPolicy): string {
  const out: YamlMap = {
    schema_id: policy.schema_id,
    schema_version: policy.schema_version,
    default_verdict: policy.default_verdict,
  };
  const fc = policy.fail_closed;
  if (fc.enabled || fc.risk_classes.length + fc.required_fields.length + fc.required_high_risk_fields.length > 0) {
    out['fail_closed'] = compact({
      enabled: fc.enabled,
      risk_classes: fc.risk_classes,
      required_fields: fc.required_fields,
      required_high_risk_fields: fc.required_high_risk_fields,
    });
  }
  const scripts = policy.scripts;
  if (scripts.max_steps !== 0 || scripts.require_approval_above !== 0 || scripts.block_mixed_risk) {
    out['scripts'] = compact({ ...scripts });
  }
  const trust = policy.mcp_trust;
  if (trust.enabled) {
    out['mcp_trust'] = compact({
      enabled: true,
      snapshot: trust.snapshot,
      action: trust.action,
      required_risk_classes: trust.required_risk_classes,
      min_score: trust.min_score,
      max_age: trust.max_age,
      publisher_allowlist: trust.publisher_allowlist,
      require_registry: trust.require_registry,
    });
  }
  const results = policy.results;
  if (results.enabled) {
    const section: YamlMap = {};
    if (results.credentials.enabled) section['credentials'] = { action: results.credentials.action };
    if (results.invisible.enabled) section['invisible'] = { action: results.invisible.action };
    if (results.pii.enabled) section['pii'] = { action: results.pii.action, patterns: results.pii.patterns.map((p) => ({ name: p.name, regex: p.regex })) };
    if (results.oversize.enabled) section['oversize'] = { action: results.oversize.action, max_bytes: results.oversize.max_bytes };
    out['results'] = section;
  }
  if (policy.context.enabled) out['context'] = { retrieval_tools: policy.context.retrieval_tools };
  out['rules'] = policy.rules.map(formatRule);
  const doc = new Document(out, { version: '1.2' });
  visit(doc, {
    Seq(_key, node) {
      const items = node.items;
      if (items.every(isScalar) && items.reduce((n, item) => n + String(item.value).length + 2, 0) <= FLOW_LIST_WIDTH) {
        node.flow = true;
      }
    },
  });
  return doc.toString({ lineWidth: 0, indentSeq: true, flowCollectionPadding: false });
}

/** Short lists of scalars read best on one line (`[critical, high]`); long ones one item a line. */
const FLOW_LIST_WIDTH = 60;

const DEFAULT_CONSTRAINT_CODE = 'endpoint_constraint_violation';

function formatRule(rule: PolicyRule): YamlMap {
  const out: YamlMap = { name: rule.name, priority: rule.priority, effect: rule.effect };
  const match = formatMatch(rule.match);
  if (Object.keys(match).length > 0) out['match'] = match;
  Object.assign(
    out,
    compact({
      reason_codes: rule.reason_codes,
      violations: rule.violations,
      min_approvals: rule.min_approvals,
      require_distinct_approvers: rule.require_distinct_approvers,
      approval_binding: rule.approval_binding,
      require_context_evidence: rule.require_context_evidence,
      required_context_evidence_mode: rule.required_context_evidence_mode,
      max_context_age_seconds: rule.max_context_age_seconds,
      require_declared_agent: rule.require_declared_agent,
      allowed_agent_ids: rule.allowed_agent_ids,
      denied_agent_ids: rule.denied_agent_ids,
      required_agent_manifest_digest: rule.required_agent_manifest_digest,
      allowed_agent_manifest_publishers: rule.allowed_agent_manifest_publishers,
      allowed_agent_manifest_sources: rule.allowed_agent_manifest_sources,
      required_agent_lifecycle_states: rule.required_agent_lifecycle_states,
      require_agent_owner: rule.require_agent_owner,
      require_unexpired_agent: rule.require_unexpired_agent,
      block_standing_credentials: rule.block_standing_credentials,
      allowed_credential_sources: rule.allowed_credential_sources,
      allowed_credential_issuers: rule.allowed_credential_issuers,
      allowed_credential_access_types: rule.allowed_credential_access_types,
      max_credential_ttl_seconds: rule.max_credential_ttl_seconds,
      require_jit_credential: rule.require_jit_credential,
      require_broker_credential: rule.require_broker_credential,
      broker_reference: rule.broker_reference,
      broker_scopes: rule.broker_scopes,
    }),
  );
  const freeze = rule.freeze_window;
  if (freeze.enabled) {
    out['freeze_window'] = compact({
      enabled: true,
      timezone: freeze.timezone,
      effect: freeze.effect,
      reason: freeze.reason,
      environments: freeze.environments,
      risk_classes: freeze.risk_classes,
      windows: freeze.windows.map((w) => ({ name: w.name, start: w.start, end: w.end })),
    });
  }
  const sandbox = rule.sandbox;
  if (sandbox.enabled) {
    out['sandbox'] = compact({
      enabled: true,
      allowed_network_modes: sandbox.allowed_network_modes,
      allowed_writable_path_prefixes: sandbox.allowed_writable_path_prefixes,
      required_read_only_roots: sandbox.required_read_only_roots,
      allowed_env_exposure_modes: sandbox.allowed_env_exposure_modes,
      max_timeout_seconds: sandbox.max_timeout_seconds,
      allowed_filesystem_isolations: sandbox.allowed_filesystem_isolations,
      allowed_user_modes: sandbox.allowed_user_modes,
    });
  }
  if (rule.rate_limit.requests > 0) out['rate_limit'] = formatLimit(rule.rate_limit);
  if (rule.destructive_budget.requests > 0) out['destructive_budget'] = formatLimit(rule.destructive_budget);
  const dataflow = rule.dataflow;
  if (dataflow.enabled) {
    out['dataflow'] = compact({
      enabled: true,
      tainted_sources: dataflow.tainted_sources,
      destination_kinds: dataflow.destination_kinds,
      destination_values: dataflow.destination_values,
      destination_operations: dataflow.destination_operations,
      action: dataflow.action,
      reason_code: unlessDefault(dataflow.reason_code, 'dataflow_tainted_destination'),
      violation: unlessDefault(dataflow.violation, 'tainted_dataflow'),
    });
  }
  const endpoint = rule.endpoint;
  if (endpoint.enabled) {
    out['endpoint'] = compact({
      enabled: true,
      path_allowlist: endpoint.path_allowlist,
      path_denylist: endpoint.path_denylist,
      domain_allowlist: endpoint.domain_allowlist,
      domain_denylist: endpoint.domain_denylist,
      egress_classes: endpoint.egress_classes,
      action: endpoint.action,
      destructive_action: endpoint.destructive_action,
      reason_code: unlessDefault(endpoint.reason_code, DEFAULT_CONSTRAINT_CODE),
      violation: unlessDefault(endpoint.violation, DEFAULT_CONSTRAINT_CODE),
    });
  }
  return out;
}

function formatMatch(match: PolicyMatch): YamlMap {
  const out = compact({
    tool_names: match.tool_names,
    risk_classes: match.risk_classes,
    identities: match.identities,
    workspace_prefixes: match.workspace_prefixes,
    target_kinds: match.target_kinds,
    target_values: match.target_values,
    endpoint_classes: match.endpoint_classes,
    discovery_method: match.discovery_methods,
    skill_publishers: match.skill_publishers,
    skill_sources: match.skill_sources,
    data_classes: match.data_classes,
    destination_kinds: match.destination_kinds,
    destination_values: match.destination_values,
    destination_operations: match.destination_operations,
    provenance_sources: match.provenance_sources,
    context_tool_names: match.context_tool_names,
    context_data_classes: match.context_data_classes,
    context_endpoint_classes: match.context_endpoint_classes,
    context_autonomy_levels: match.context_autonomy_levels,
    require_delegation: match.require_delegation,
    allowed_delegator_identities: match.allowed_delegator_identities,
    allowed_delegate_identities: match.allowed_delegate_identities,
    delegation_scopes: match.delegation_scopes,
  });
  const hints = match.tool_annotations;
  if (hints) {
    // false is a real selector (it matches targets without the hint), so only unset hints are left out.
    const annotations: YamlMap = {};
    if (hints.read_only_hint !== undefined) annotations['readOnlyHint'] = hints.read_only_hint;
    if (hints.destructive_hint !== undefined) annotations['destructiveHint'] = hints.destructive_hint;
    if (hints.idempotent_hint !== undefined) annotations['idempotentHint'] = hints.idempotent_hint;
    if (hints.open_world_hint !== undefined) annotations['openWorldHint'] = hints.open_world_hint;
    out['tool_annotations'] = annotations;
  }
  // 0 is a real depth limit ("no delegation hops"), so it is written whenever it is set.
  if (match.max_delegation_depth !== undefined) out['max_delegation_depth'] = match.max_delegation_depth;
  return out;
}

/** Reason codes and violations left at their defaults are noise in the formatted file. */
function unlessDefault(value: string, fallback: string): string {
  return value === fallback ? '' : value;
}

function formatLimit(limit: RateLimitConfig): YamlMap {
  return { requests: limit.requests, window: limit.window, scope: limit.scope };
}

/** Drop Go-empty values so the output shows only what is set. */
function compact(obj: YamlMap): YamlMap {
  const out: YamlMap = {};
  for (const [key, value] of Object.entries(obj)) {
    if (value === undefined || value === null || value === '' || value === 0 || value === false) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (typeof value === 'object' && !Array.isArray(value)) {
      const inner = compact(value as YamlMap);
      if (Object.keys(inner).length > 0) out[key] = inner;
      continue;
    }
    out[key] = value;
  }
  return out;
}
