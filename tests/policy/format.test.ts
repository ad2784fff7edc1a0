import { describe, expect, it } from 'vitest';
import { formatPolicyYaml, parsePolicyYaml } from '../../src/policy/index.js';

describe('formatPolicyYaml (ward policy fmt)', () => {
  it('writes the normalized policy: fixed key order, sorted rules and lists, derived settings explicit, defaults and comments dropped', () => {
    const input = [
      '# comments are not preserved',
      'rules:',
      '  - name: zeta',
      '    action: Require_Approval',
      '    min_approvals: 2',
      '    match: {tool_name: Tool.Write, risk_classes: [High, low, high]}',
      '  - name: alpha',
      '    priority: 5',
      '    effect: block',
      '    endpoint:',
      '      path_denylist: [/root/**, /etc/shadow]',
      '      reason_code: endpoint_constraint_violation',
      'default_action: Block',
      'fail_closed: {enabled: true}',
      '',
    ].join('\n');
    expect(formatPolicyYaml(parsePolicyYaml(input).policy)).toBe(
      [
        'schema_id: gait.gate.policy',
        'schema_version: 1.0.0',
        'default_verdict: block',
        'fail_closed:',
        '  enabled: true',
        '  risk_classes: [critical, high]',
        'rules:',
        '  - name: zeta',
        '    priority: 0',
        '    effect: require_approval',
        '    match:',
        '      tool_names: [tool.write]',
        '      risk_classes: [high, low]',
        '    min_approvals: 2',
        '    require_distinct_approvers: true',
        '  - name: alpha',
        '    priority: 5',
        '    effect: block',
        '    endpoint:',
        '      enabled: true',
        '      path_denylist: [/etc/shadow, /root/**]',
        '      action: block',
        '',
      ].join('\n'),
    );
  });

  it('quotes strings that YAML would otherwise read as another type', () => {
    const policy = parsePolicyYaml('rules:\n  - name: "123"\n    effect: allow\n    reason_codes: ["true", "null", "*star"]\n').policy;
    const text = formatPolicyYaml(policy);
    expect(parsePolicyYaml(text).policy).toEqual(policy);
    expect(text).toContain('name: "123"');
  });

  it('keeps false tool-annotation selectors and a zero delegation depth', () => {
    const policy = parsePolicyYaml(
      'rules:\n  - name: r\n    effect: allow\n    match:\n      tool_annotations: {readOnlyHint: false}\n      max_delegation_depth: 0\n',
    ).policy;
    const text = formatPolicyYaml(policy);
    expect(text).toContain('readOnlyHint: false');
    expect(text).toContain('max_delegation_depth: 0');
    expect(parsePolicyYaml(text).policy).toEqual(policy);
  });

  it('writes an empty rule list for a default-only policy', () => {
    expect(formatPolicyYaml(parsePolicyYaml('').policy)).toBe(
      'schema_id: gait.gate.policy\nschema_version: 1.0.0\ndefault_verdict: require_approval\nrules: []\n',
    );
  });
});
