import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Document } from 'yaml';
import { formatPolicyYaml, parsePolicyYaml } from '../../src/policy/index.js';

const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 _.-]{0,11}$/).filter((s) => s.trim() === s);
const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.]{0,7}$/);
const words = fc.array(fc.oneof(word, word.map((w) => ` ${w.toUpperCase()} `)), { maxLength: 4 });
const effect = fc.constantFrom('allow', 'block', 'dry_run', 'require_approval', 'Block', ' ALLOW ');
const action = fc.constantFrom('block', 'require_approval');

/** A raw rule object as a user might write it: messy case, spaces, duplicates, optional blocks. */
const rule = fc.record(
  {
    name,
    priority: fc.integer({ min: -3, max: 3 }),
    effect,
    match: fc.record(
      {
        tool_name: word,
        tool_names: words,
        risk_classes: fc.array(fc.constantFrom('low', 'Medium', 'HIGH', 'critical'), { maxLength: 3 }),
        identities: words,
        endpoint_classes: fc.array(fc.constantFrom('fs.read', 'FS.Write', 'net.http', 'proc.exec'), { maxLength: 3 }),
        discovery_method: fc.array(fc.constantFrom('mcp', 'Dynamic-MCP', 'manual'), { maxLength: 2 }),
        tool_annotations: fc.record({ readOnlyHint: fc.boolean(), openWorldHint: fc.boolean() }, { requiredKeys: [] }),
        max_delegation_depth: fc.integer({ min: 0, max: 4 }),
      },
      { requiredKeys: [] },
    ),
    reason_codes: words,
    violations: words,
    min_approvals: fc.integer({ min: 0, max: 3 }),
    require_context_evidence: fc.boolean(),
    max_context_age_seconds: fc.integer({ min: 0, max: 600 }),
    sandbox: fc.record(
      {
        allowed_writable_path_prefixes: fc.array(fc.constantFrom('/tmp/', '/tmp/a/../b', '.', 'work//x'), { maxLength: 3 }),
        max_timeout_seconds: fc.integer({ min: 0, max: 100 }),
      },
      { requiredKeys: [] },
    ),
    rate_limit: fc.record({ requests: fc.integer({ min: 0, max: 5 }), window: fc.constantFrom('minute', 'HOUR') }),
    dataflow: fc.record({ destination_kinds: fc.array(fc.constantFrom('host', 'URL'), { maxLength: 2 }), action }, { requiredKeys: [] }),
    endpoint: fc.record(
      { path_denylist: fc.array(fc.constantFrom('/etc/**', '/root/*', '/x'), { maxLength: 2 }), destructive_action: action },
      { requiredKeys: [] },
    ),
    freeze_window: fc.record({
      timezone: fc.constantFrom('UTC', 'Europe/Paris'),
      effect: action,
      windows: fc.array(
        fc.record(
          { name: word, start: fc.constant('2026-12-24T00:00:00'), end: fc.constant('2026-12-27T00:00:00') },
          { requiredKeys: ['start', 'end'] },
        ),
        { minLength: 1, maxLength: 2 },
      ),
    }),
    allowed_credential_sources: fc.array(fc.constantFrom('env', 'GitHub_OIDC', 'vault_dynamic'), { maxLength: 2 }),
    required_agent_lifecycle_states: words,
    require_broker_credential: fc.boolean(),
    broker_scopes: words,
  },
  { requiredKeys: ['name', 'effect'] },
);

/** Rules with distinct (priority, name) keys: only then is the sorted order fully determined. */
const rules = fc.uniqueArray(rule, { maxLength: 6, selector: (r) => `${r.priority ?? 0}\u0000${r.name.trim()}` });

const policy = fc.record(
  {
    default_verdict: effect,
    fail_closed: fc.record({ enabled: fc.boolean(), required_fields: fc.array(fc.constantFrom('targets', 'Delegation'), { maxLength: 2 }) }),
    scripts: fc.record({ max_steps: fc.integer({ min: 0, max: 64 }), block_mixed_risk: fc.boolean() }, { requiredKeys: [] }),
    mcp_trust: fc.record(
      { snapshot: fc.constant('trust.json'), min_score: fc.double({ min: 0, max: 1, noNaN: true }), max_age: fc.constantFrom('90m', '1.5h', '720h') },
      { requiredKeys: ['snapshot'] },
    ),
    rules,
  },
  { requiredKeys: ['rules'] },
);

function toYaml(value: unknown): string {
  return new Document(value).toString();
}

describe('policy normalization properties', () => {
  it('is idempotent: formatting the normalized policy and loading it again changes nothing', () => {
    fc.assert(
      fc.property(policy, (raw) => {
        const first = parsePolicyYaml(toYaml(raw));
        const second = parsePolicyYaml(formatPolicyYaml(first.policy));
        expect(second.policy).toEqual(first.policy);
        expect(second.digest).toBe(first.digest);
        expect(formatPolicyYaml(second.policy)).toBe(formatPolicyYaml(first.policy));
      }),
      { numRuns: 200 },
    );
  });

  it('rule order in the file does not change the digest', () => {
    fc.assert(
      fc.property(
        policy.chain((raw) => fc.tuple(fc.constant(raw), fc.shuffledSubarray(raw.rules, { minLength: raw.rules.length }))),
        ([raw, shuffled]) => {
          const a = parsePolicyYaml(toYaml(raw));
          const b = parsePolicyYaml(toYaml({ ...raw, rules: shuffled }));
          expect(b.digest).toBe(a.digest);
          expect(b.policy).toEqual(a.policy);
        },
      ),
      { numRuns: 200 },
    );
  });
});
