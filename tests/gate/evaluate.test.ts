import { describe, expect, it } from 'vitest';
import { parseRFC3339 } from '../../src/canon/gotime.js';
import { isRegisteredReasonCode } from '../../src/gate/reason-codes.js';
import { decide, intent } from './helpers.js';

const allowWrites = `
default_verdict: block
rules:
  - name: allow-writes
    priority: 10
    effect: allow
    match: { tool_names: [tool.write] }
`;

describe('rule selection and defaults (§3.2)', () => {
  it('uses the default verdict and default_<verdict> when no rule matches', () => {
    const o = decide('default_verdict: require_approval', intent());
    expect(o.verdict).toBe('require_approval');
    expect(o.reasonCodes).toEqual(['default_require_approval']);
    expect(o.minApprovals).toBe(1);
    expect(o.matchedRule).toBe('');
  });

  it('allows a matching allow rule and names it in the default reason code', () => {
    const o = decide(allowWrites, intent());
    expect(o.verdict).toBe('allow');
    expect(o.reasonCodes).toEqual(['matched_rule_allow_writes']);
    expect(o.matchedRule).toBe('allow-writes');
  });

  it('lower priority number wins and later tiers are never consulted', () => {
    const o = decide(
      `
default_verdict: allow
rules:
  - { name: b-block, priority: 20, effect: block, match: { tool_names: [tool.write] } }
  - { name: a-allow, priority: 10, effect: allow, match: { tool_names: [tool.write] } }
`,
      intent(),
    );
    expect(o.verdict).toBe('allow');
    expect(o.matchedRule).toBe('a-allow');
  });

  it('aggregates an equal-priority tier: most restrictive wins, only its reasons count, all names listed', () => {
    const o = decide(
      `
default_verdict: allow
rules:
  - { name: Allow Everything-Now, priority: 5, effect: allow }
  - { name: zz-second, priority: 5, effect: block, reason_codes: [second_blocks], violations: [v2] }
  - { name: other-tier, priority: 6, effect: allow }
`,
      intent(),
    );
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual(['second_blocks']);
    expect(o.violations).toEqual(['v2']);
    expect(o.matchedRule).toBe('Allow Everything-Now,zz-second');
  });

  it('sanitizes rule names the reference way for matched_rule_ codes', () => {
    const o = decide('rules: [{ name: "Allow Everything-Now", effect: allow }]', intent());
    expect(o.reasonCodes).toEqual(['matched_rule_allow_everything_now']);
  });

  it('strips every leading and trailing quote like Go strings.Trim, eating the quote of a final \\" escape (§3.3)', () => {
    const named = (name: string) => decide(`rules: [{ name: ${JSON.stringify(name)}, effect: allow }]`, intent()).reasonCodes;
    expect(named('say "hi"')).toEqual(['matched_rule_say_\\"hi\\']);
    expect(named('"quoted"')).toEqual(['matched_rule_\\"quoted\\']);
    expect(named('a<b & c')).toEqual(['matched_rule_a\\u003cb_\\u0026_c']);
  });

  it('matches workspace prefixes as raw string prefixes (no path boundary)', () => {
    const policy = `
default_verdict: block
rules: [{ name: tmp, effect: allow, match: { workspace_prefixes: [/tmp] } }]
`;
    expect(decide(policy, intent({}, { workspace: '/tmpx' })).verdict).toBe('allow');
    expect(decide(policy, intent({}, { workspace: '/var' })).verdict).toBe('block');
  });
});

describe('destructive targets and phase (§3.3h)', () => {
  const policy = 'rules: [{ name: allow-all, effect: allow }]';
  it('an allow rule never lets a destructive target through in apply phase', () => {
    const o = decide(policy, intent({ targets: [{ kind: 'path', value: '/tmp/x', operation: 'delete' }] }));
    expect(o.verdict).toBe('require_approval');
    expect(o.reasonCodes).toContain('destructive_apply_requires_approval');
  });
  it('plan phase turns a destructive call into dry_run', () => {
    const o = decide(policy, intent({ targets: [{ kind: 'path', value: '/tmp/x', operation: 'delete' }] }, { phase: 'plan' }));
    expect(o.verdict).toBe('dry_run');
    expect(o.reasonCodes).toContain('plan_phase_non_destructive');
  });
  it('adds the destructive reason even when the rule blocks', () => {
    const o = decide('rules: [{ name: block-destructive-tools, effect: block }]', intent({ targets: [{ kind: 'other', value: 'sh', operation: 'exec' }] }));
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual(['destructive_apply_requires_approval', 'matched_rule_block_destructive_tools']);
  });
});

describe('fail-closed (§3.1 step 2, Ward decision 3)', () => {
  const policy = `
default_verdict: allow
fail_closed:
  enabled: true
  required_fields: [targets, arg_provenance]
  required_high_risk_fields: [agent_id, credential_ttl_seconds]
`;
  it('blocks a high-risk intent missing required fields before any rule runs', () => {
    const o = decide(policy, intent({ targets: [], arg_provenance: [] }, { risk_class: 'high' }));
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual([
      'fail_closed_missing_agent_id',
      'fail_closed_missing_arg_provenance',
      'fail_closed_missing_credential_ttl_seconds',
      'fail_closed_missing_targets',
    ]);
    expect(o.violations).toEqual(['missing_agent_id', 'missing_arg_provenance', 'missing_credential_ttl_seconds', 'missing_targets']);
  });
  it('does not apply outside the fail-closed risk classes', () => {
    expect(decide(policy, intent({ targets: [] }, { risk_class: 'low' })).verdict).toBe('allow');
  });
  it('blocks unknown endpoint classes whenever fail-closed applies', () => {
    const o = decide(
      'fail_closed: { enabled: true }\ndefault_verdict: allow',
      intent({ targets: [{ kind: 'repo', value: 'org/x' }] }, { risk_class: 'critical' }),
    );
    expect(o.reasonCodes).toEqual(['fail_closed_endpoint_class_unknown']);
  });
  it('turns an unevaluable high-risk intent into a block instead of an error', () => {
    const o = decide('fail_closed: { enabled: true }\ndefault_verdict: allow', intent({ targets: [{ kind: 'spaceship', value: 'x' }] }, { risk_class: 'high' }));
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual(['fail_closed_intent_invalid']);
    expect(o.violations).toEqual(['intent_not_evaluable']);
    expect(o.intentError?.message).toBe('unsupported target kind: spaceship');
  });
  it('throws for an unevaluable intent outside fail-closed risk classes', () => {
    expect(() => decide('default_verdict: allow', intent({ targets: [{ kind: 'spaceship', value: 'x' }] }))).toThrow(
      'unsupported target kind: spaceship',
    );
  });
});

describe('context evidence claims are never authoritative (§4.5)', () => {
  it('strips claimed digest, mode and age when no envelope is bound', () => {
    const o = decide(
      `
default_verdict: block
rules:
  - { name: ctx, effect: allow, require_context_evidence: true, max_context_age_seconds: 30, match: { tool_names: [tool.write] } }
`,
      intent({}, {
        context_set_digest: 'a'.repeat(64),
        context_evidence_mode: 'required',
        auth_context: { context_age_seconds: 1 },
      }),
    );
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual([
      'context_evidence_missing',
      'context_evidence_mode_mismatch',
      'context_freshness_exceeded',
      'context_set_digest_missing',
      'matched_rule_ctx',
    ]);
    expect(o.preparedIntent?.context.context_set_digest).toBe('');
    expect(o.preparedIntent?.context.auth_context).toBeUndefined();
  });
});

describe('dataflow and endpoint constraints (§3.3a-b)', () => {
  it('dataflow replaces the effect (a block rule with action require_approval becomes require_approval)', () => {
    const o = decide(
      `
rules:
  - name: flow
    effect: block
    dataflow: { tainted_sources: [external], action: require_approval }
`,
      intent({
        targets: [{ kind: 'url', value: 'https://api.example.com/x' }],
        arg_provenance: [{ arg_path: '$.body', source: 'external' }],
      }),
    );
    expect(o.verdict).toBe('require_approval');
    expect(o.reasonCodes).toEqual(['dataflow_tainted_destination', 'matched_rule_flow']);
    expect(o.violations).toEqual(['tainted_dataflow']);
  });

  it('denies a path in the denylist and adds the configured endpoint code', () => {
    const o = decide(
      `
rules:
  - name: paths
    effect: allow
    endpoint: { path_denylist: ["/etc/**"], path_allowlist: ["/tmp/**"] }
`,
      intent({ targets: [{ kind: 'path', value: '/etc/passwd', operation: 'read' }] }),
    );
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual([
      'endpoint_constraint_violation',
      'endpoint_path_denied',
      'endpoint_path_not_allowlisted',
      'matched_rule_paths',
    ]);
  });

  it('cleans traversal out of paths before matching allowlists', () => {
    const o = decide(
      'rules: [{ name: tmp-only, effect: allow, endpoint: { path_allowlist: ["/tmp/**"] } }]',
      intent({ targets: [{ kind: 'path', value: '/tmp/../etc/shadow', operation: 'read' }] }),
    );
    expect(o.reasonCodes).toContain('endpoint_path_not_allowlisted');
  });

  it('matches *.domain against subdomains only and checks egress classes', () => {
    const policy = `
rules:
  - name: net
    effect: allow
    endpoint: { domain_allowlist: ["*.example.com"], egress_classes: [net.http] }
`;
    expect(decide(policy, intent({ targets: [{ kind: 'url', value: 'https://api.example.com/' }] })).verdict).toBe('allow');
    const apex = decide(policy, intent({ targets: [{ kind: 'url', value: 'https://example.com/' }] }));
    expect(apex.reasonCodes).toContain('endpoint_domain_not_allowlisted');
    const dns = decide(policy, intent({ targets: [{ kind: 'host', value: 'api.example.com', operation: 'lookup' }] }));
    expect(dns.reasonCodes).toContain('endpoint_egress_class_not_allowed');
  });
});

describe('agent identity and credential posture (§3.3d-e)', () => {
  it('blocks undeclared, revoked and expired agents', () => {
    const policy = `
rules:
  - name: agents
    effect: allow
    require_declared_agent: true
    require_unexpired_agent: true
    denied_agent_ids: [bad]
`;
    const undeclared = decide(policy, intent());
    expect(undeclared.reasonCodes).toEqual(['agent_expired', 'agent_unknown', 'matched_rule_agents']);
    expect(undeclared.violations).toEqual(['agent_expired', 'agent_identity_missing']);
    const revoked = decide(policy, intent({}, { agent_id: 'bad', agent_identity: { expires_at: '2027-01-01T00:00:00Z' } }));
    expect(revoked.reasonCodes).toEqual(['agent_revoked', 'matched_rule_agents']);
    const fine = decide(policy, intent({}, { agent_id: 'good', agent_identity: { expires_at: '2027-01-01T00:00:00Z' } }));
    expect(fine.verdict).toBe('allow');
  });

  it('requires JIT credentials within the ttl and blocks standing ones', () => {
    const policy = `
rules:
  - { name: creds, effect: allow, require_jit_credential: true, block_standing_credentials: true, max_credential_ttl_seconds: 600 }
`;
    const standing = decide(policy, intent({}, { credential_ref: 'ref:x', credential_source: 'env', credential_access_type: 'standing', credential_ttl_seconds: 60 }));
    expect(standing.reasonCodes).toEqual(['credential_not_jit', 'matched_rule_creds', 'standing_credential_disallowed']);
    const long = decide(policy, intent({}, { credential_ref: 'ref:x', credential_source: 'aws_sts', credential_access_type: 'jit', credential_ttl_seconds: 3600 }));
    expect(long.reasonCodes).toEqual(['credential_ttl_exceeded', 'matched_rule_creds']);
    const ok = decide(policy, intent({}, { credential_ref: 'ref:x', credential_source: 'aws_sts', credential_access_type: 'jit', credential_ttl_seconds: 60 }));
    expect(ok.verdict).toBe('allow');
  });
});

describe('freeze windows and sandbox (§3.3f-g)', () => {
  const freeze = (zone: string) => `
rules:
  - name: freeze
    effect: allow
    freeze_window:
      timezone: ${zone}
      windows: [{ name: release, start: "2026-03-12T12:30:00", end: "2026-03-12T14:00:00" }]
`;
  it('is active inside the window in its local zone (13:00 Paris = 12:00 UTC)', () => {
    const o = decide(freeze('Europe/Paris'), intent());
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual(['freeze_window_active_block', 'matched_rule_freeze']);
    expect(o.freezeWindow?.status).toBe('active');
    expect(o.freezeWindow?.reason).toBe('release');
  });
  it('is inactive outside the window and blocks on an unknown zone', () => {
    expect(decide(freeze('UTC'), intent()).verdict).toBe('allow');
    expect(decide(freeze('Mars/Olympus'), intent()).reasonCodes).toContain('freeze_window_invalid_timezone');
  });
  it('blocks without sandbox metadata and accepts a valid sandbox for exec targets', () => {
    const policy = 'rules: [{ name: sb, effect: allow, sandbox: { allowed_network_modes: [disabled], max_timeout_seconds: 60 } }]';
    const exec = { args: { command: 'ls' }, targets: [{ kind: 'other', value: 'ls', operation: 'exec' }] };
    expect(decide(policy, intent(exec)).reasonCodes).toEqual(['destructive_apply_requires_approval', 'matched_rule_sb', 'sandbox_metadata_missing']);
    const ok = decide(policy, intent(exec, { sandbox: { network_mode: 'disabled', timeout_seconds: 30, evidence_ref: 'ref:s', evidence_digest: 'b'.repeat(64) } }));
    expect(ok.sandbox?.status).toBe('valid');
    expect(ok.verdict).toBe('allow');
  });
});

describe('scripts (§3.4)', () => {
  const script = (steps: unknown[]) => intent({ tool_name: 'script', targets: [], arg_provenance: [], script: { steps } });
  const read = { tool_name: 'tool.read', args: {}, targets: [{ kind: 'path', value: '/tmp/a', operation: 'read' }] };
  const write = { tool_name: 'tool.write', args: {}, targets: [{ kind: 'path', value: '/tmp/b', operation: 'write' }] };
  it('rolls up the most restrictive step and every step reason', () => {
    const o = decide(
      `
default_verdict: allow
rules: [{ name: no-writes, effect: block, match: { tool_names: [tool.write] } }]
`,
      script([read, write]),
    );
    expect(o.verdict).toBe('block');
    expect(o.reasonCodes).toEqual(['default_allow', 'matched_rule_no_writes']);
    expect(o.script?.stepVerdicts.map((s) => s.verdict)).toEqual(['allow', 'block']);
    expect(o.script?.compositeRiskClass).toBe('medium');
  });
  it('enforces max_steps, the approval threshold and mixed risk', () => {
    expect(decide('default_verdict: allow\nscripts: { max_steps: 1 }', script([read, write])).reasonCodes).toContain('script_max_steps_exceeded');
    const t = decide('default_verdict: allow\nscripts: { require_approval_above: 1 }', script([read, write]));
    expect(t.verdict).toBe('require_approval');
    expect(t.reasonCodes).toContain('script_step_threshold_approval');
    const m = decide('default_verdict: allow\nscripts: { block_mixed_risk: true }', script([read, write]));
    expect(m.violations).toEqual(['script_mixed_risk']);
  });
});

describe('registry', () => {
  it('every code the engine emitted in these scenarios is registered', () => {
    const codes = [
      'default_allow',
      'matched_rule_allow_writes',
      'destructive_apply_requires_approval',
      'fail_closed_missing_agent_id',
      'context_freshness_exceeded',
      'endpoint_constraint_violation',
      'sandbox_metadata_missing',
      'script_mixed_risk_blocked',
    ];
    for (const code of codes) expect(isRegisteredReasonCode(code), code).toBe(true);
    expect(isRegisteredReasonCode('made_up_code')).toBe(false);
  });

  it('uses the evaluation clock, not the wall clock, for agent expiry', () => {
    const policy = 'rules: [{ name: a, effect: allow, require_unexpired_agent: true }]';
    const i = intent({}, { agent_id: 'x', agent_identity: { expires_at: '2026-06-01T00:00:00Z' } });
    expect(decide(policy, i).verdict).toBe('allow');
    expect(decide(policy, i, { now: parseRFC3339('2026-07-01T00:00:00Z') }).verdict).toBe('block');
  });
});

describe('broker credentials (§3.6 step 9)', () => {
  it('a winning rule that requires a brokered credential cannot allow without a broker', async () => {
    const { runGate } = await import('../../src/decision/gate-run.js');
    const { parsePolicyYaml } = await import('../../src/policy/load.js');
    const { generateSigningKey } = await import('../../src/keys/index.js');
    const { mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'ward-broker-'));
    const r = runGate(
      {
        policy: parsePolicyYaml('rules: [{ name: brokered, effect: allow, require_broker_credential: true }]'),
        signingKey: generateSigningKey(),
        traceFormat: 'ward',
        traceDir: join(dir, 'traces'),
        rateLimitStatePath: join(dir, 'rl.json'),
        profile: 'standard',
      },
      { intent: intent() },
    );
    expect(r.output['verdict']).toBe('block');
    expect(r.output['reason_codes']).toEqual(['broker_credential_required', 'matched_rule_brokered']);
    expect(r.output['violations']).toEqual(['broker_credential_missing']);
    expect(r.exitCode).toBe(3);
  });
});

describe('the outcome object', () => {
  // The members a `{ ...core, result, preparedIntent, ... }` spread gave, in its order; the outcome
  // is now built member by member (evaluate.ts gateOutcome), so nothing is added or reordered.
  const single = [
    'verdict', 'reasonCodes', 'violations', 'matchedRule', 'matchedRules', 'minApprovals', 'requireDistinctApprovers',
    'requireBrokerCredential', 'brokerReference', 'brokerScopes', 'requireDelegation', 'delegationScopes', 'rateLimit',
    'destructiveBudget', 'freezeWindow', 'sandbox',
  ];
  const added = ['result', 'preparedIntent', 'intentError', 'contextSource', 'killSwitch', 'script'];
  it('has the same members in the same order for every single-intent path', () => {
    const policy = 'default_verdict: allow\nfail_closed: { enabled: true, risk_classes: [high], required_fields: [targets] }\nrules: [{ name: b, effect: block, match: { tool_names: [tool.write] } }]';
    const outcomes = [
      decide('default_verdict: allow', intent()),
      decide(policy, intent()),
      decide(policy, intent({ targets: [] }, { risk_class: 'high' })),
      decide(policy, intent({ tool_name: '' }, { risk_class: 'high' })),
      decide('default_verdict: allow', intent(), { killSwitch: { unavailable: true } }),
    ];
    expect(outcomes.map((o) => o.verdict)).toEqual(['allow', 'block', 'block', 'block', 'block']);
    expect(outcomes[3]!.intentError).toBeDefined();
    for (const o of outcomes) expect(Object.keys(o)).toEqual([...single, ...added]);
  });
  it('keeps a script outcome\'s own members (after the single-intent ones)', () => {
    const script = intent({ tool_name: 'script', targets: [], arg_provenance: [], script: { steps: [{ tool_name: 'tool.read', args: {} }] } });
    const o = decide('default_verdict: allow', script);
    expect(Object.keys(o)).toEqual([...single, 'stepCount', 'compositeRiskClass', 'stepVerdicts', 'matchedRuleIds', 'wrkrApplied', ...added]);
  });
});
