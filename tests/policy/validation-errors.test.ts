import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { parsePolicyYaml } from '../../src/policy/index.js';

/** A one-rule policy; `body` is extra rule keys, indented under the rule. */
function ruleYaml(body: string, head = 'name: r1\n    effect: allow'): string {
  const indented = body
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => `    ${l}`)
    .join('\n');
  return `rules:\n  - ${head}\n${indented}\n`;
}

function failure(text: string): WardError {
  try {
    parsePolicyYaml(text);
  } catch (err) {
    if (err instanceof WardError) return err;
    throw err;
  }
  throw new Error('expected the policy to be rejected');
}

/** Every normalizePolicy message of gate.md §2.5, byte for byte. */
const CASES: readonly (readonly [string, string, string])[] = [
  ['unknown schema_id', 'schema_id: gait.other\n', 'unsupported policy schema_id: gait.other'],
  ['unknown schema_version', 'schema_version: "2.0.0"\n', 'unsupported policy schema_version: 2.0.0'],
  [
    'default_action disagrees with default_verdict',
    'default_verdict: allow\ndefault_action: block\n',
    'default_action must match default_verdict when both are set',
  ],
  ['bad default_verdict', 'default_verdict: Maybe\n', 'invalid default_verdict: maybe'],
  ['bad default_action alone', 'default_action: deny\n', 'invalid default_verdict: deny'],
  [
    'bad fail_closed required field',
    'fail_closed:\n  enabled: true\n  required_fields: [targets, bogus]\n',
    'unsupported fail_closed required_field: bogus',
  ],
  [
    'bad fail_closed high-risk field',
    'fail_closed:\n  required_high_risk_fields: [agent_id, token]\n',
    'unsupported fail_closed required_high_risk_field: token',
  ],
  [
    'mcp_trust without snapshot',
    'mcp_trust:\n  min_score: 0.5\n',
    'mcp_trust.snapshot is required when mcp_trust is configured',
  ],
  [
    'mcp_trust enabled alone needs a snapshot',
    'mcp_trust:\n  enabled: true\n',
    'mcp_trust.snapshot is required when mcp_trust is configured',
  ],
  ['bad mcp_trust action', 'mcp_trust:\n  snapshot: s.json\n  action: allow\n', 'unsupported mcp_trust.action "allow"'],
  ['mcp_trust min_score above 1', 'mcp_trust:\n  snapshot: s.json\n  min_score: 1.5\n', 'mcp_trust.min_score must be between 0 and 1'],
  ['mcp_trust min_score negative', 'mcp_trust:\n  snapshot: s.json\n  min_score: -0.1\n', 'mcp_trust.min_score must be between 0 and 1'],
  ['mcp_trust min_score NaN', 'mcp_trust:\n  snapshot: s.json\n  min_score: .nan\n', 'mcp_trust.min_score must be between 0 and 1'],
  [
    'mcp_trust max_age without unit',
    'mcp_trust:\n  snapshot: s.json\n  max_age: "24"\n',
    'parse mcp_trust.max_age: time: missing unit in duration "24"',
  ],
  [
    'mcp_trust max_age with unknown unit',
    'mcp_trust:\n  snapshot: s.json\n  max_age: 1d\n',
    'parse mcp_trust.max_age: time: unknown unit "d" in duration "1d"',
  ],
  ['mcp_trust max_age zero', 'mcp_trust:\n  snapshot: s.json\n  max_age: 0s\n', 'mcp_trust.max_age must be > 0'],
  ['mcp_trust max_age negative', 'mcp_trust:\n  snapshot: s.json\n  max_age: -1h\n', 'mcp_trust.max_age must be > 0'],
  ['negative scripts.max_steps', 'scripts:\n  max_steps: -1\n', 'scripts.max_steps must be >= 0'],
  ['negative scripts.require_approval_above', 'scripts:\n  require_approval_above: -2\n', 'scripts.require_approval_above must be >= 0'],
  ['rule without name', 'rules:\n  - effect: allow\n', 'rule name is required'],
  ['rule with blank name', 'rules:\n  - name: "   "\n    effect: allow\n', 'rule name is required'],
  ['action disagrees with effect', ruleYaml('action: block'), 'rule action must match effect for r1'],
  ['rule without effect', 'rules:\n  - name: r1\n', 'rule effect is required for r1'],
  ['bad rule effect', ruleYaml('', 'name: r1\n    effect: Deny'), 'invalid rule effect "deny" for r1'],
  ['bad rule action alias', ruleYaml('', 'name: r1\n    action: permit'), 'invalid rule effect "permit" for r1'],
  [
    'bad match endpoint_class',
    ruleYaml('match:\n  endpoint_class: [fs.read, fs.nuke]'),
    'unsupported match endpoint_class "fs.nuke" for r1',
  ],
  [
    'bad match endpoint_classes',
    ruleYaml('match:\n  endpoint_classes: [net.smtp]'),
    'unsupported match endpoint_class "net.smtp" for r1',
  ],
  [
    'bad match discovery_method',
    ruleYaml('match:\n  discovery_method: [carrier_pigeon]'),
    'unsupported match discovery_method "carrier_pigeon" for r1',
  ],
  ['negative max_delegation_depth', ruleYaml('match:\n  max_delegation_depth: -1'), 'max_delegation_depth must be >= 0 for r1'],
  [
    'short manifest digest',
    ruleYaml('required_agent_manifest_digest: abc123'),
    'required_agent_manifest_digest must be sha256 hex for r1',
  ],
  [
    'bad credential source',
    ruleYaml('allowed_credential_sources: [env, pastebin]'),
    'unsupported allowed_credential_source "pastebin" for r1',
  ],
  [
    'bad credential access type',
    ruleYaml('allowed_credential_access_types: [jit, forever]'),
    'unsupported allowed_credential_access_type "forever" for r1',
  ],
  ['negative credential ttl', ruleYaml('max_credential_ttl_seconds: -5'), 'max_credential_ttl_seconds must be >= 0 for r1'],
  ['negative min_approvals', ruleYaml('min_approvals: -1'), 'min_approvals must be >= 0 for r1'],
  [
    'context mode other than required',
    ruleYaml('required_context_evidence_mode: best_effort'),
    'required_context_evidence_mode must be required for r1',
  ],
  ['negative context age', ruleYaml('max_context_age_seconds: -1'), 'max_context_age_seconds must be >= 0 for r1'],
  [
    'freeze window without timezone',
    ruleYaml('freeze_window:\n  windows:\n    - start: "2026-01-01T00:00:00"\n      end: "2026-01-02T00:00:00"'),
    'freeze_window.timezone is required for r1',
  ],
  [
    'freeze window with bad effect',
    ruleYaml('freeze_window:\n  timezone: UTC\n  effect: allow'),
    'unsupported freeze_window.effect "allow" for r1',
  ],
  ['freeze window without windows', ruleYaml('freeze_window:\n  timezone: UTC'), 'freeze_window.windows is required for r1'],
  [
    'freeze window entry without end',
    ruleYaml('freeze_window:\n  timezone: UTC\n  windows:\n    - name: w\n      start: "2026-01-01T00:00:00"'),
    'freeze_window window start and end are required for r1',
  ],
  [
    'bad sandbox network mode',
    ruleYaml('sandbox:\n  allowed_network_modes: [open]'),
    'unsupported sandbox.allowed_network_mode "open" for r1',
  ],
  [
    'bad sandbox env exposure mode',
    ruleYaml('sandbox:\n  allowed_env_exposure_modes: [everything]'),
    'unsupported sandbox.allowed_env_exposure_mode "everything" for r1',
  ],
  [
    'bad sandbox filesystem isolation',
    ruleYaml('sandbox:\n  allowed_filesystem_isolations: [vm]'),
    'unsupported sandbox.allowed_filesystem_isolation "vm" for r1',
  ],
  ['bad sandbox user mode', ruleYaml('sandbox:\n  allowed_user_modes: [admin]'), 'unsupported sandbox.allowed_user_mode "admin" for r1'],
  ['negative sandbox timeout', ruleYaml('sandbox:\n  max_timeout_seconds: -1'), 'sandbox.max_timeout_seconds must be >= 0 for r1'],
  [
    'env assignment in writable prefixes',
    ruleYaml('sandbox:\n  allowed_writable_path_prefixes: [/tmp, "AWS_SECRET_ACCESS_KEY=abc"]'),
    'sandbox.allowed_writable_path_prefixes must not contain raw environment variable assignments for r1',
  ],
  [
    'env assignment in read-only roots',
    ruleYaml('sandbox:\n  required_read_only_roots: ["HOME=/root"]'),
    'sandbox.required_read_only_roots must not contain raw environment variable assignments for r1',
  ],
  ['negative rate limit', ruleYaml('rate_limit:\n  requests: -1'), 'rate_limit.requests must be >= 0 for r1'],
  ['bad rate limit window', ruleYaml('rate_limit:\n  requests: 5\n  window: day'), 'unsupported rate_limit.window "day" for r1'],
  ['bad rate limit scope', ruleYaml('rate_limit:\n  requests: 5\n  scope: global'), 'unsupported rate_limit.scope "global" for r1'],
  ['negative destructive budget', ruleYaml('destructive_budget:\n  requests: -1'), 'destructive_budget.requests must be >= 0 for r1'],
  [
    'destructive budget configured with zero requests',
    ruleYaml('destructive_budget:\n  window: hour'),
    'destructive_budget.requests must be >= 1 for r1',
  ],
  [
    'bad destructive budget window',
    ruleYaml('destructive_budget:\n  requests: 1\n  window: week'),
    'unsupported destructive_budget.window "week" for r1',
  ],
  [
    'bad destructive budget scope',
    ruleYaml('destructive_budget:\n  requests: 1\n  scope: everyone'),
    'unsupported destructive_budget.scope "everyone" for r1',
  ],
  [
    'bad dataflow action',
    ruleYaml('dataflow:\n  tainted_sources: [external]\n  action: allow'),
    'unsupported dataflow.action "allow" for r1',
  ],
  [
    'unknown endpoint egress class',
    ruleYaml('endpoint:\n  egress_classes: [net.ftp]'),
    'unsupported endpoint.egress_class "net.ftp" for r1',
  ],
  [
    'non-network endpoint egress class',
    ruleYaml('endpoint:\n  egress_classes: [net.http, fs.write]'),
    'endpoint.egress_class must be network class for r1',
  ],
  [
    'bad endpoint action',
    ruleYaml('endpoint:\n  path_denylist: [/etc/**]\n  action: dry_run'),
    'unsupported endpoint.action "dry_run" for r1',
  ],
  [
    'bad endpoint destructive action',
    ruleYaml('endpoint:\n  destructive_action: allow'),
    'unsupported endpoint.destructive_action "allow" for r1',
  ],
];

describe('policy validation errors (gate.md §2.5)', () => {
  it.each(CASES)('%s', (_label, yaml, message) => {
    const err = failure(yaml);
    expect(err.message).toBe(message);
    expect(err.code).toBe(ERROR_CODES.POLICY_INVALID);
    expect(err.exitCode).toBe(EXIT.INVALID_INPUT);
  });

  it('names the rule as written (trimmed) in the suffix', () => {
    expect(failure(ruleYaml('min_approvals: -1', 'name: "  Deploy Gate  "\n    effect: allow')).message).toBe(
      'min_approvals must be >= 0 for Deploy Gate',
    );
  });

  it('Go-quotes the offending value', () => {
    expect(failure(ruleYaml('', 'name: r1\n    effect: "bl\\"ock\\t"')).message).toBe('invalid rule effect "bl\\"ock" for r1');
  });

  it('reports the first invalid rule in file order', () => {
    const text = 'rules:\n  - name: b\n    priority: 1\n    effect: nope\n  - name: a\n    priority: 0\n    effect: nope2\n';
    expect(failure(text).message).toBe('invalid rule effect "nope" for b');
  });

  it('does not validate the freeze-window timezone at load (it blocks at evaluation)', () => {
    const text = ruleYaml(
      'freeze_window:\n  timezone: Mars/Olympus_Mons\n  windows:\n    - start: "2026-01-01T00:00:00"\n      end: "2026-01-02T00:00:00"',
    );
    expect(parsePolicyYaml(text).policy.rules[0]?.freeze_window.timezone).toBe('Mars/Olympus_Mons');
  });

  it('does not validate constraint blocks that stay off', () => {
    const text = ruleYaml('rate_limit:\n  window: fortnight\ndataflow:\n  action: allow\nendpoint:\n  action: allow');
    const rule = parsePolicyYaml(text).policy.rules[0];
    expect(rule?.rate_limit.requests).toBe(0);
    expect(rule?.dataflow.enabled).toBe(false);
    expect(rule?.endpoint.enabled).toBe(false);
  });
});
