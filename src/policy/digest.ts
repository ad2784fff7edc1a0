import { digestJcs, type JsonObject, type JsonValue } from '../canon/index.js';
import type { NormalizedPolicy, PolicyMatch, PolicyRule } from './types.js';

/**
 * The policy digest payload (`gate.md` §2.6): the normalized policy under the Go struct's
 * PascalCase names, for compatibility with the reference's historical struct serialization.
 * Which keys are always present, which only when set, and `[]` versus `null` are all part of
 * the contract: each changes the digest.
 */
export function policyDigestPayload(policy: NormalizedPolicy): JsonObject {
  const failClosed: JsonObject = {
    Enabled: policy.fail_closed.enabled,
    RiskClasses: policy.fail_closed.risk_classes,
    RequiredFields: policy.fail_closed.required_fields,
  };
  setIfAny(failClosed, 'RequiredHighRiskFields', policy.fail_closed.required_high_risk_fields);
  const payload: JsonObject = {
    SchemaID: policy.schema_id,
    SchemaVersion: policy.schema_version,
    DefaultVerdict: policy.default_verdict,
    FailClosed: failClosed,
    Rules: policy.rules.map(rulePayload),
  };
  const scripts = policy.scripts;
  if (scripts.max_steps !== 0 || scripts.require_approval_above !== 0 || scripts.block_mixed_risk) {
    payload['Scripts'] = {
      MaxSteps: scripts.max_steps,
      RequireApprovalAbove: scripts.require_approval_above,
      BlockMixedRisk: scripts.block_mixed_risk,
    };
  }
  const trust = policy.mcp_trust;
  if (trust.enabled) {
    payload['MCPTrust'] = {
      Enabled: true,
      SnapshotPath: trust.snapshot,
      Action: trust.action,
      RequiredRiskClasses: trust.required_risk_classes,
      MinScore: trust.min_score,
      MaxAge: trust.max_age,
      PublisherAllowlist: trust.publisher_allowlist,
      RequireRegistry: trust.require_registry,
    };
  }
  // Ward extensions: present only when configured, so every Gait policy keeps its digest.
  const results = policy.results;
  if (results.enabled) {
    const detectors: JsonObject = {};
    if (results.credentials.enabled) detectors['Credentials'] = { Action: results.credentials.action };
    if (results.invisible.enabled) detectors['Invisible'] = { Action: results.invisible.action };
    if (results.oversize.enabled) detectors['Oversize'] = { Action: results.oversize.action, MaxBytes: results.oversize.max_bytes };
    if (results.pii.enabled) {
      detectors['PII'] = { Action: results.pii.action, Patterns: results.pii.patterns.map((p) => ({ Name: p.name, Regex: p.regex })) };
    }
    payload['Results'] = detectors;
  }
  if (policy.context.enabled) payload['Context'] = { RetrievalTools: [...policy.context.retrieval_tools] };
  return payload;
}

/** sha256 hex of JCS(policyDigestPayload(policy)). */
export function policyDigest(policy: NormalizedPolicy): string {
  return digestJcs(policyDigestPayload(policy));
}

function rulePayload(rule: PolicyRule): JsonObject {
  const out: JsonObject = {
    Name: rule.name,
    Priority: rule.priority,
    Effect: rule.effect,
    Match: matchPayload(rule.match),
    ReasonCodes: rule.reason_codes,
    Violations: rule.violations,
  };
  setIfSet(out, 'MinApprovals', rule.min_approvals);
  setIfSet(out, 'RequireDeclaredAgent', rule.require_declared_agent);
  setIfAny(out, 'AllowedAgentIDs', rule.allowed_agent_ids);
  setIfAny(out, 'DeniedAgentIDs', rule.denied_agent_ids);
  setIfSet(out, 'RequiredAgentManifestDigest', rule.required_agent_manifest_digest);
  setIfAny(out, 'AllowedAgentManifestPublishers', rule.allowed_agent_manifest_publishers);
  setIfAny(out, 'AllowedAgentManifestSources', rule.allowed_agent_manifest_sources);
  setIfAny(out, 'RequiredAgentLifecycleStates', rule.required_agent_lifecycle_states);
  setIfSet(out, 'RequireAgentOwner', rule.require_agent_owner);
  setIfSet(out, 'RequireUnexpiredAgent', rule.require_unexpired_agent);
  setIfSet(out, 'BlockStandingCredentials', rule.block_standing_credentials);
  setIfAny(out, 'AllowedCredentialSources', rule.allowed_credential_sources);
  setIfAny(out, 'AllowedCredentialIssuers', rule.allowed_credential_issuers);
  setIfAny(out, 'AllowedCredentialAccessTypes', rule.allowed_credential_access_types);
  setIfSet(out, 'MaxCredentialTTLSeconds', rule.max_credential_ttl_seconds);
  setIfSet(out, 'RequireJITCredential', rule.require_jit_credential);
  setIfSet(out, 'RequireDistinctApprovers', rule.require_distinct_approvers);
  // Ward extension: digested only when set, so a reference policy's digest is unchanged.
  setIfSet(out, 'ApprovalBinding', rule.approval_binding);
  setIfSet(out, 'RequireContextEvidence', rule.require_context_evidence);
  setIfSet(out, 'RequiredContextEvidenceMode', rule.required_context_evidence_mode);
  setIfSet(out, 'MaxContextAgeSeconds', rule.max_context_age_seconds);
  setIfSet(out, 'RequireBrokerCredential', rule.require_broker_credential);
  setIfSet(out, 'BrokerReference', rule.broker_reference);
  setIfAny(out, 'BrokerScopes', rule.broker_scopes);

  const freeze = rule.freeze_window;
  if (freeze.enabled) {
    out['FreezeWindow'] = {
      Enabled: true,
      Timezone: freeze.timezone,
      Effect: freeze.effect,
      Reason: freeze.reason,
      Environments: freeze.environments,
      RiskClasses: freeze.risk_classes,
      Windows: freeze.windows.map((w) => ({ Name: w.name, Start: w.start, End: w.end })),
    };
  }
  const sandbox = rule.sandbox;
  if (sandbox.enabled) {
    out['Sandbox'] = {
      Enabled: true,
      AllowedNetworkModes: sandbox.allowed_network_modes,
      AllowedWritablePathPrefixes: sandbox.allowed_writable_path_prefixes,
      RequiredReadOnlyRoots: sandbox.required_read_only_roots,
      AllowedEnvExposureModes: sandbox.allowed_env_exposure_modes,
      MaxTimeoutSeconds: sandbox.max_timeout_seconds,
      AllowedFilesystemIsolations: sandbox.allowed_filesystem_isolations,
      AllowedUserModes: sandbox.allowed_user_modes,
    };
  }
  for (const [key, limit] of [
    ['RateLimit', rule.rate_limit],
    ['DestructiveBudget', rule.destructive_budget],
  ] as const) {
    if (limit.requests > 0) out[key] = { Requests: limit.requests, Window: limit.window, Scope: limit.scope };
  }
  const dataflow = rule.dataflow;
  if (dataflow.enabled) {
    const payload: JsonObject = {
      Enabled: true,
      TaintedSources: dataflow.tainted_sources,
      Action: dataflow.action,
      ReasonCode: dataflow.reason_code,
      Violation: dataflow.violation,
    };
    setIfAny(payload, 'DestinationKinds', dataflow.destination_kinds);
    setIfAny(payload, 'DestinationValues', dataflow.destination_values);
    setIfAny(payload, 'DestinationOperations', dataflow.destination_operations);
    out['Dataflow'] = payload;
  }
  const endpoint = rule.endpoint;
  if (endpoint.enabled) {
    out['Endpoint'] = {
      Enabled: true,
      PathAllowlist: endpoint.path_allowlist,
      PathDenylist: endpoint.path_denylist,
      DomainAllowlist: endpoint.domain_allowlist,
      DomainDenylist: endpoint.domain_denylist,
      EgressClasses: endpoint.egress_classes,
      Action: endpoint.action,
      DestructiveAction: endpoint.destructive_action,
      ReasonCode: endpoint.reason_code,
      Violation: endpoint.violation,
    };
  }
  return out;
}

function matchPayload(match: PolicyMatch): JsonObject {
  const out: JsonObject = {
    ToolNames: match.tool_names,
    RiskClasses: match.risk_classes,
    TargetKinds: match.target_kinds,
    TargetValues: match.target_values,
    ProvenanceSources: match.provenance_sources,
    Identities: match.identities,
    WorkspacePrefixes: match.workspace_prefixes,
  };
  setIfAny(out, 'EndpointClasses', match.endpoint_classes);
  setIfAny(out, 'DiscoveryMethods', match.discovery_methods);
  const hints = match.tool_annotations;
  if (hints) {
    const annotations: JsonObject = {};
    if (hints.read_only_hint !== undefined) annotations['ReadOnlyHint'] = hints.read_only_hint;
    if (hints.destructive_hint !== undefined) annotations['DestructiveHint'] = hints.destructive_hint;
    if (hints.idempotent_hint !== undefined) annotations['IdempotentHint'] = hints.idempotent_hint;
    if (hints.open_world_hint !== undefined) annotations['OpenWorldHint'] = hints.open_world_hint;
    out['ToolAnnotations'] = annotations;
  }
  setIfAny(out, 'SkillPublishers', match.skill_publishers);
  setIfAny(out, 'SkillSources', match.skill_sources);
  setIfAny(out, 'DataClasses', match.data_classes);
  setIfAny(out, 'DestinationKinds', match.destination_kinds);
  setIfAny(out, 'DestinationValues', match.destination_values);
  setIfAny(out, 'DestinationOps', match.destination_operations);
  setIfAny(out, 'ContextToolNames', match.context_tool_names);
  setIfAny(out, 'ContextDataClasses', match.context_data_classes);
  setIfAny(out, 'ContextEndpointClasses', match.context_endpoint_classes);
  setIfAny(out, 'ContextAutonomyLevels', match.context_autonomy_levels);
  setIfSet(out, 'RequireDelegation', match.require_delegation);
  setIfAny(out, 'AllowedDelegatorIdentities', match.allowed_delegator_identities);
  setIfAny(out, 'AllowedDelegateIdentities', match.allowed_delegate_identities);
  setIfAny(out, 'DelegationScopes', match.delegation_scopes);
  if (match.max_delegation_depth !== undefined) out['MaxDelegationDepth'] = match.max_delegation_depth;
  return out;
}

/** Go omitempty for scalars: "" 0 false are left out. */
function setIfSet(out: JsonObject, key: string, value: string | number | boolean): void {
  if (value !== '' && value !== 0 && value !== false) out[key] = value;
}

function setIfAny(out: JsonObject, key: string, value: readonly JsonValue[]): void {
  if (value.length > 0) out[key] = [...value];
}
