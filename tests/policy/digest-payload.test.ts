import { describe, expect, it } from 'vitest';
import { parsePolicyYaml, policyDigestPayload } from '../../src/policy/index.js';

function rulePayload(body: string): Record<string, unknown> {
  const indented = body
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => `    ${l}`)
    .join('\n');
  const payload = policyDigestPayload(parsePolicyYaml(`rules:\n  - name: r\n    effect: allow\n${indented}\n`).policy);
  return (payload['Rules'] as Record<string, unknown>[])[0] as Record<string, unknown>;
}

const EMPTY_MATCH = {
  ToolNames: [],
  RiskClasses: [],
  TargetKinds: [],
  TargetValues: [],
  ProvenanceSources: [],
  Identities: [],
  WorkspacePrefixes: [],
};

describe('policy digest payload shape (gate.md §2.6)', () => {
  it('a bare rule has exactly the always-present keys', () => {
    expect(rulePayload('')).toEqual({ Name: 'r', Priority: 0, Effect: 'allow', Match: EMPTY_MATCH, ReasonCodes: [], Violations: [] });
  });

  it('derived settings appear although the YAML never wrote them', () => {
    const rule = rulePayload('min_approvals: 2\nrequire_context_evidence: true');
    expect(rule['MinApprovals']).toBe(2);
    expect(rule['RequireDistinctApprovers']).toBe(true);
    expect(rule['RequireContextEvidence']).toBe(true);
    expect(rule['RequiredContextEvidenceMode']).toBe('required');
  });

  it('uses the Go struct names for the optional rule keys', () => {
    const rule = rulePayload(
      [
        'require_declared_agent: true',
        'allowed_agent_ids: [a]',
        'denied_agent_ids: [d]',
        `required_agent_manifest_digest: ${'a'.repeat(64)}`,
        'allowed_agent_manifest_publishers: [p]',
        'allowed_agent_manifest_sources: [s]',
        'required_agent_lifecycle_states: [active]',
        'require_agent_owner: true',
        'require_unexpired_agent: true',
        'block_standing_credentials: true',
        'allowed_credential_sources: [env]',
        'allowed_credential_issuers: [i]',
        'allowed_credential_access_types: [jit]',
        'max_credential_ttl_seconds: 60',
        'require_jit_credential: true',
        'max_context_age_seconds: 9',
        'require_broker_credential: true',
        'broker_reference: vault',
        'broker_scopes: [x]',
      ].join('\n'),
    );
    expect(Object.keys(rule).sort()).toEqual(
      [
        'Name',
        'Priority',
        'Effect',
        'Match',
        'ReasonCodes',
        'Violations',
        'RequireDeclaredAgent',
        'AllowedAgentIDs',
        'DeniedAgentIDs',
        'RequiredAgentManifestDigest',
        'AllowedAgentManifestPublishers',
        'AllowedAgentManifestSources',
        'RequiredAgentLifecycleStates',
        'RequireAgentOwner',
        'RequireUnexpiredAgent',
        'BlockStandingCredentials',
        'AllowedCredentialSources',
        'AllowedCredentialIssuers',
        'AllowedCredentialAccessTypes',
        'MaxCredentialTTLSeconds',
        'RequireJITCredential',
        'MaxContextAgeSeconds',
        'RequireBrokerCredential',
        'BrokerReference',
        'BrokerScopes',
      ].sort(),
    );
  });

  it('match: optional keys only when set, DestinationOps spelled short, MaxDelegationDepth even when 0', () => {
    const match = rulePayload(
      [
        'match:',
        '  endpoint_classes: [fs.write]',
        '  discovery_method: [mcp]',
        '  tool_annotations: {destructiveHint: false}',
        '  destination_operations: [post]',
        '  require_delegation: false',
        '  max_delegation_depth: 0',
      ].join('\n'),
    )['Match'];
    expect(match).toEqual({
      ...EMPTY_MATCH,
      EndpointClasses: ['fs.write'],
      DiscoveryMethods: ['mcp'],
      ToolAnnotations: { DestructiveHint: false },
      DestinationOps: ['post'],
      MaxDelegationDepth: 0,
    });
  });

  it('sandbox path lists are null when empty, other sandbox lists []', () => {
    expect(rulePayload('sandbox:\n  max_timeout_seconds: 10')['Sandbox']).toEqual({
      Enabled: true,
      AllowedNetworkModes: [],
      AllowedWritablePathPrefixes: null,
      RequiredReadOnlyRoots: null,
      AllowedEnvExposureModes: [],
      MaxTimeoutSeconds: 10,
      AllowedFilesystemIsolations: [],
      AllowedUserModes: [],
    });
  });

  it('freeze window, rate limit, budget, dataflow and endpoint appear only when on', () => {
    const off = rulePayload('rate_limit:\n  requests: 0\nendpoint:\n  action: block\ndataflow:\n  action: block');
    for (const key of ['FreezeWindow', 'Sandbox', 'RateLimit', 'DestructiveBudget', 'Dataflow', 'Endpoint']) {
      expect(off).not.toHaveProperty(key);
    }
    const on = rulePayload(
      [
        'freeze_window: {timezone: UTC, reason: change freeze, windows: [{start: "2026-01-01T00:00:00", end: "2026-01-02T00:00:00"}]}',
        'rate_limit: {requests: 3}',
        'destructive_budget: {requests: 1, window: hour, scope: identity}',
        'dataflow: {tainted_sources: [external]}',
        'endpoint: {path_denylist: [/etc/**]}',
      ].join('\n'),
    );
    expect(on['FreezeWindow']).toEqual({
      Enabled: true,
      Timezone: 'UTC',
      Effect: 'block',
      Reason: 'change freeze',
      Environments: [],
      RiskClasses: [],
      Windows: [{ Name: 'window-1', Start: '2026-01-01T00:00:00', End: '2026-01-02T00:00:00' }],
    });
    expect(on['RateLimit']).toEqual({ Requests: 3, Window: 'minute', Scope: 'tool_identity' });
    expect(on['DestructiveBudget']).toEqual({ Requests: 1, Window: 'hour', Scope: 'identity' });
    expect(on['Dataflow']).toEqual({
      Enabled: true,
      TaintedSources: ['external'],
      Action: 'require_approval',
      ReasonCode: 'dataflow_tainted_destination',
      Violation: 'tainted_dataflow',
    });
    expect(on['Endpoint']).toEqual({
      Enabled: true,
      PathAllowlist: [],
      PathDenylist: ['/etc/**'],
      DomainAllowlist: [],
      DomainDenylist: [],
      EgressClasses: [],
      Action: 'block',
      DestructiveAction: '',
      ReasonCode: 'endpoint_constraint_violation',
      Violation: 'endpoint_constraint_violation',
    });
  });

  it('dataflow destination lists appear only when non-empty', () => {
    expect(rulePayload('dataflow: {destination_values: [Api.X]}')['Dataflow']).toMatchObject({ DestinationValues: ['Api.X'] });
    expect(rulePayload('dataflow: {destination_values: [Api.X]}')['Dataflow']).not.toHaveProperty('DestinationKinds');
  });

  it('root: RequiredHighRiskFields, Scripts and MCPTrust only when set; never default_action', () => {
    const bare = policyDigestPayload(parsePolicyYaml('default_action: allow\n').policy);
    expect(Object.keys(bare).sort()).toEqual(['DefaultVerdict', 'FailClosed', 'Rules', 'SchemaID', 'SchemaVersion']);
    const full = policyDigestPayload(
      parsePolicyYaml(
        'fail_closed: {enabled: true, required_high_risk_fields: [run_id]}\nmcp_trust: {snapshot: t.json, max_age: 90m, min_score: 0.5}\n',
      ).policy,
    );
    expect(full['FailClosed']).toEqual({
      Enabled: true,
      RiskClasses: ['critical', 'high'],
      RequiredFields: [],
      RequiredHighRiskFields: ['run_id'],
    });
    expect(full['MCPTrust']).toEqual({
      Enabled: true,
      SnapshotPath: 't.json',
      Action: 'block',
      RequiredRiskClasses: ['critical', 'high'],
      MinScore: 0.5,
      MaxAge: '1h30m0s',
      PublisherAllowlist: [],
      RequireRegistry: false,
    });
  });
});
