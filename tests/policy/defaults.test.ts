import { describe, expect, it } from 'vitest';
import { parsePolicyYaml, type PolicyRule } from '../../src/policy/index.js';

function onlyRule(body: string): PolicyRule {
  const indented = body
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => `    ${l}`)
    .join('\n');
  const rule = parsePolicyYaml(`rules:\n  - name: r\n    effect: allow\n${indented}\n`).policy.rules[0];
  if (!rule) throw new Error('no rule');
  return rule;
}

describe('top-level defaults (gate.md §2.2)', () => {
  it('fills schema id, version and require_approval', () => {
    const { policy } = parsePolicyYaml('{}');
    expect(policy.schema_id).toBe('gait.gate.policy');
    expect(policy.schema_version).toBe('1.0.0');
    expect(policy.default_verdict).toBe('require_approval');
    expect(policy.rules).toEqual([]);
  });

  it('trims and lowercases default_verdict, and accepts default_action as an alias', () => {
    expect(parsePolicyYaml('default_verdict: " ALLOW "\n').policy.default_verdict).toBe('allow');
    expect(parsePolicyYaml('default_action: dry_run\n').policy.default_verdict).toBe('dry_run');
    expect(parsePolicyYaml('default_verdict: Block\ndefault_action: block\n').policy.default_verdict).toBe('block');
  });

  it('default_action is not part of the digest', () => {
    expect(parsePolicyYaml('default_verdict: block\ndefault_action: block\n').digest).toBe(
      parsePolicyYaml('default_verdict: block\n').digest,
    );
  });

  it('fail_closed enabled with no risk classes covers critical and high', () => {
    expect(parsePolicyYaml('fail_closed:\n  enabled: true\n').policy.fail_closed.risk_classes).toEqual(['critical', 'high']);
    expect(parsePolicyYaml('fail_closed:\n  enabled: true\n  risk_classes: [Medium, " high "]\n').policy.fail_closed.risk_classes).toEqual([
      'high',
      'medium',
    ]);
  });

  it('fail_closed disabled keeps its lists but gets no default risk classes', () => {
    const fc = parsePolicyYaml('fail_closed:\n  required_fields: [Targets, targets]\n').policy.fail_closed;
    expect(fc).toEqual({ enabled: false, risk_classes: [], required_fields: ['targets'], required_high_risk_fields: [] });
  });

  it('scripts.max_steps 0 stays 0 (the evaluator reads it as 64)', () => {
    expect(parsePolicyYaml('scripts:\n  require_approval_above: 3\n').policy.scripts).toEqual({
      max_steps: 0,
      require_approval_above: 3,
      block_mixed_risk: false,
    });
  });

  it('mcp_trust: any key turns it on, with block, [critical, high] and a canonical max_age', () => {
    const trust = parsePolicyYaml('mcp_trust:\n  snapshot: " ./trust.json "\n  max_age: 720h\n  publisher_allowlist: [Acme]\n').policy
      .mcp_trust;
    expect(trust).toEqual({
      enabled: true,
      snapshot: './trust.json',
      action: 'block',
      required_risk_classes: ['critical', 'high'],
      min_score: 0,
      max_age: '720h0m0s',
      max_age_seconds: 2_592_000,
      publisher_allowlist: ['acme'],
      require_registry: false,
    });
    expect(parsePolicyYaml('mcp_trust:\n  snapshot: s\n  max_age: 1.5s\n').policy.mcp_trust.max_age_seconds).toBe(1.5);
    expect(parsePolicyYaml('mcp_trust:\n  enabled: false\n').policy.mcp_trust.enabled).toBe(false);
  });

  it('sorts rules by priority, then name byte-wise, with negative priorities first', () => {
    const text = [
      'rules:',
      '  - {name: b, priority: 10, effect: allow}',
      '  - {name: a, priority: 10, effect: allow}',
      '  - {name: Z, priority: 10, effect: allow}',
      '  - {name: late, effect: allow}',
      '  - {name: early, priority: -5, effect: allow}',
      '',
    ].join('\n');
    expect(parsePolicyYaml(text).policy.rules.map((r) => r.name)).toEqual(['early', 'late', 'Z', 'a', 'b']);
  });

  it('sorts rule names by UTF-8 bytes, not UTF-16 units', () => {
    const text = 'rules:\n  - {name: "\\uFF5E", effect: allow}\n  - {name: "\\U0001F600", effect: allow}\n';
    expect(parsePolicyYaml(text).policy.rules.map((r) => r.name)).toEqual(['\uff5e', '\u{1f600}']);
  });
});

describe('rule defaults (gate.md §2.3)', () => {
  it('effect may be written as action, and both may agree', () => {
    const rule = parsePolicyYaml('rules:\n  - name: r\n    action: BLOCK\n').policy.rules[0];
    expect(rule?.effect).toBe('block');
    expect(parsePolicyYaml('rules:\n  - name: r\n    action: block\n    effect: Block\n').policy.rules[0]?.effect).toBe('block');
  });

  it('priority defaults to 0 and names are trimmed', () => {
    const rule = parsePolicyYaml('rules:\n  - name: "  spaced name "\n    effect: allow\n').policy.rules[0];
    expect(rule?.priority).toBe(0);
    expect(rule?.name).toBe('spaced name');
  });

  it('reason codes and violations are trimmed, deduped and sorted, with case kept', () => {
    const rule = onlyRule('reason_codes: [" Zed", a, a, ""]\nviolations: [v2, v1]');
    expect(rule.reason_codes).toEqual(['Zed', 'a']);
    expect(rule.violations).toEqual(['v1', 'v2']);
  });

  it('min_approvals above 1 forces distinct approvers; 1 does not', () => {
    expect(onlyRule('min_approvals: 2').require_distinct_approvers).toBe(true);
    expect(onlyRule('min_approvals: 1').require_distinct_approvers).toBe(false);
    expect(onlyRule('require_distinct_approvers: true').require_distinct_approvers).toBe(true);
  });

  it('require_context_evidence sets the required evidence mode', () => {
    expect(onlyRule('require_context_evidence: true').required_context_evidence_mode).toBe('required');
    expect(onlyRule('required_context_evidence_mode: " Required "').required_context_evidence_mode).toBe('required');
    expect(onlyRule('max_context_age_seconds: 30').required_context_evidence_mode).toBe('');
  });

  it('normalizes agent and credential lists with the documented case rules', () => {
    const rule = onlyRule(
      [
        'allowed_agent_ids: [Agent-B, Agent-A]',
        'denied_agent_ids: [X]',
        'required_agent_manifest_digest: ' + 'AB'.repeat(32),
        'allowed_agent_manifest_publishers: [Acme]',
        'allowed_agent_manifest_sources: [Registry]',
        'required_agent_lifecycle_states: [Approved]',
        'allowed_credential_sources: [GitHub_OIDC]',
        'allowed_credential_issuers: [Vault-Prod]',
        'allowed_credential_access_types: [JIT]',
        'broker_reference: " vault "',
        'broker_scopes: [Repo:Write]',
      ].join('\n'),
    );
    expect(rule.allowed_agent_ids).toEqual(['Agent-A', 'Agent-B']);
    expect(rule.denied_agent_ids).toEqual(['X']);
    expect(rule.required_agent_manifest_digest).toBe('ab'.repeat(32));
    expect(rule.allowed_agent_manifest_publishers).toEqual(['acme']);
    expect(rule.allowed_agent_manifest_sources).toEqual(['registry']);
    expect(rule.required_agent_lifecycle_states).toEqual(['approved']);
    expect(rule.allowed_credential_sources).toEqual(['github_oidc']);
    expect(rule.allowed_credential_issuers).toEqual(['Vault-Prod']);
    expect(rule.allowed_credential_access_types).toEqual(['jit']);
    expect(rule.broker_reference).toBe('vault');
    expect(rule.broker_scopes).toEqual(['repo:write']);
  });
});

describe('match normalization (gate.md §2.4)', () => {
  it('merges tool_name into tool_names, lowercased and deduped', () => {
    expect(onlyRule('match:\n  tool_name: " Tool.Write "\n  tool_names: [tool.write, TOOL.READ]').match.tool_names).toEqual([
      'tool.read',
      'tool.write',
    ]);
  });

  it('merges endpoint_class and endpoint_classes, lowercased', () => {
    expect(onlyRule('match:\n  endpoint_class: [FS.Write]\n  endpoint_classes: [net.http, fs.write]').match.endpoint_classes).toEqual([
      'fs.write',
      'net.http',
    ]);
  });

  it('spells discovery methods as intents do', () => {
    expect(onlyRule('match:\n  discovery_method: [Dynamic-MCP, static mcp]').match.discovery_methods).toEqual([
      'dynamic_mcp',
      'static_mcp',
    ]);
  });

  it('keeps case where the evaluator compares exactly and lowercases elsewhere', () => {
    const m = onlyRule(
      [
        'match:',
        '  risk_classes: [HIGH]',
        '  identities: [Alice]',
        '  workspace_prefixes: [/Repo]',
        '  target_kinds: [Path]',
        '  target_values: [/Tmp/X]',
        '  skill_publishers: [Acme]',
        '  skill_sources: [GitHub]',
        '  data_classes: [PII]',
        '  destination_kinds: [Host]',
        '  destination_values: [API.example.com]',
        '  destination_operations: [POST]',
        '  provenance_sources: [User]',
        '  context_tool_names: [Tool.X]',
        '  context_data_classes: [Secret]',
        '  context_endpoint_classes: [Net.HTTP]',
        '  context_autonomy_levels: [Full]',
        '  allowed_delegator_identities: [Lead]',
        '  allowed_delegate_identities: [Worker]',
        '  delegation_scopes: [Write]',
      ].join('\n'),
    ).match;
    expect(m).toMatchObject({
      risk_classes: ['high'],
      identities: ['Alice'],
      workspace_prefixes: ['/Repo'],
      target_kinds: ['path'],
      target_values: ['/Tmp/X'],
      skill_publishers: ['acme'],
      skill_sources: ['github'],
      data_classes: ['pii'],
      destination_kinds: ['host'],
      destination_values: ['API.example.com'],
      destination_operations: ['post'],
      provenance_sources: ['user'],
      context_tool_names: ['tool.x'],
      context_data_classes: ['secret'],
      context_endpoint_classes: ['net.http'],
      context_autonomy_levels: ['full'],
      allowed_delegator_identities: ['Lead'],
      allowed_delegate_identities: ['Worker'],
      delegation_scopes: ['write'],
    });
  });

  it('tool annotations: undefined when no hint is set, false kept as a real selector', () => {
    expect(onlyRule('match:\n  tool_annotations: {}').match.tool_annotations).toBeUndefined();
    expect(onlyRule('match:\n  tool_annotations:\n    readOnlyHint: false').match.tool_annotations).toEqual({
      read_only_hint: false,
      destructive_hint: undefined,
      idempotent_hint: undefined,
      open_world_hint: undefined,
    });
  });

  it('max_delegation_depth distinguishes unset from 0', () => {
    expect(onlyRule('match: {}').match.max_delegation_depth).toBeUndefined();
    expect(onlyRule('match:\n  max_delegation_depth: 0').match.max_delegation_depth).toBe(0);
  });
});

describe('constraint blocks (gate.md §2.3)', () => {
  it('freeze_window: any key turns it on; block by default; unnamed windows are numbered', () => {
    const fw = onlyRule(
      [
        'freeze_window:',
        '  timezone: " Europe/Paris "',
        '  environments: [Prod]',
        '  windows:',
        '    - start: "2026-12-24T00:00:00"',
        '      end: "2026-12-27T00:00:00"',
        '    - name: new-year',
        '      start: "2026-12-31T18:00:00"',
        '      end: "2027-01-02T00:00:00"',
      ].join('\n'),
    ).freeze_window;
    expect(fw).toEqual({
      enabled: true,
      timezone: 'Europe/Paris',
      effect: 'block',
      reason: '',
      environments: ['prod'],
      risk_classes: [],
      windows: [
        { name: 'window-1', start: '2026-12-24T00:00:00', end: '2026-12-27T00:00:00' },
        { name: 'new-year', start: '2026-12-31T18:00:00', end: '2027-01-02T00:00:00' },
      ],
    });
    expect(onlyRule('freeze_window:\n  enabled: false').freeze_window.enabled).toBe(false);
  });

  it('sandbox: any key turns it on; path lists are cleaned, and null when empty', () => {
    const sb = onlyRule(
      'sandbox:\n  allowed_writable_path_prefixes: ["/tmp/b/", "/tmp/a/../a", ".", "", /tmp/a]\n  allowed_network_modes: [Disabled]',
    ).sandbox;
    expect(sb.enabled).toBe(true);
    expect(sb.allowed_writable_path_prefixes).toEqual(['/tmp/a', '/tmp/b']);
    expect(sb.required_read_only_roots).toBeNull();
    expect(sb.allowed_network_modes).toEqual(['disabled']);
    expect(onlyRule('sandbox:\n  max_timeout_seconds: 30').sandbox.enabled).toBe(true);
  });

  it('rate_limit: 0 requests is off; otherwise minute and tool_identity by default', () => {
    expect(onlyRule('rate_limit:\n  requests: 0').rate_limit.requests).toBe(0);
    expect(onlyRule('rate_limit:\n  requests: 5').rate_limit).toEqual({ requests: 5, window: 'minute', scope: 'tool_identity' });
    expect(onlyRule('rate_limit:\n  requests: 5\n  window: HOUR\n  scope: tool').rate_limit).toEqual({
      requests: 5,
      window: 'hour',
      scope: 'tool',
    });
  });

  it('destructive_budget has the same defaults', () => {
    expect(onlyRule('destructive_budget:\n  requests: 2').destructive_budget).toEqual({
      requests: 2,
      window: 'minute',
      scope: 'tool_identity',
    });
  });

  it('dataflow: any list turns it on, with external and tool_output as tainted sources', () => {
    const df = onlyRule('dataflow:\n  destination_kinds: [Host]').dataflow;
    expect(df).toEqual({
      enabled: true,
      tainted_sources: ['external', 'tool_output'],
      destination_kinds: ['host'],
      destination_values: [],
      destination_operations: [],
      action: 'require_approval',
      reason_code: 'dataflow_tainted_destination',
      violation: 'tainted_dataflow',
    });
    expect(onlyRule('dataflow:\n  enabled: true').dataflow.enabled).toBe(true);
    expect(onlyRule('dataflow:\n  action: block').dataflow.enabled).toBe(false);
  });

  it('endpoint: lists or destructive_action turn it on, action alone does not', () => {
    expect(onlyRule('endpoint:\n  action: require_approval').endpoint.enabled).toBe(false);
    expect(onlyRule('endpoint:\n  destructive_action: require_approval').endpoint).toEqual({
      enabled: true,
      path_allowlist: [],
      path_denylist: [],
      domain_allowlist: [],
      domain_denylist: [],
      egress_classes: [],
      action: 'block',
      destructive_action: 'require_approval',
      reason_code: 'endpoint_constraint_violation',
      violation: 'endpoint_constraint_violation',
    });
    const ep = onlyRule('endpoint:\n  domain_denylist: ["*.Evil.COM"]\n  path_allowlist: [/b, /a/**]\n  egress_classes: [NET.HTTP]').endpoint;
    expect(ep.domain_denylist).toEqual(['*.evil.com']);
    expect(ep.path_allowlist).toEqual(['/a/**', '/b']);
    expect(ep.egress_classes).toEqual(['net.http']);
  });
});
