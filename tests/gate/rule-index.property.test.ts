import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate, type GateOutcome } from '../../src/gate/evaluate.js';
import { ruleMatches } from '../../src/gate/match.js';
import { linearScanPolicy } from '../../src/gate/rule-index.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import type { NormalizedIntent } from '../../src/intent/types.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import type { NormalizedPolicy } from '../../src/policy/types.js';
import { NOW, candidateRules, intent } from './helpers.js';

/*
 * Issue 17 item 4: evaluation walks only the rules the index says can match. Over random policies
 * and random intents (single and script), that decides exactly what trying every rule in turn
 * decides: the whole outcome, field by field.
 */

const VERDICTS = ['allow', 'block', 'dry_run', 'require_approval'] as const;
// Policy-side spellings: lists are trimmed and lowercased where the policy normalizes them.
const TOOLS = ['tool.write', 'tool.read', 'fs.delete', 'http.get', 'Tool.Write', ' tool.read '];
const IDENTITIES = ['alice', 'bob', 'Alice'];
const RISKS = ['low', 'medium', 'high', 'HIGH'];
const KINDS = ['path', 'url', 'host'];
const CLASSES = ['fs.read', 'fs.write', 'fs.delete', 'net.http'];
const SOURCES = ['user', 'external', 'tool_output'];
const OPERATIONS = ['read', 'write', 'delete'];
const VALUES = ['/tmp/out.txt', '/etc/shadow', 'https://api.example.com/v1'];

const list = (vocab: readonly string[]) => fc.subarray([...vocab], { maxLength: Math.min(3, vocab.length) });

const matchArb = fc.record(
  {
    tool_names: list(TOOLS),
    identities: list(IDENTITIES),
    risk_classes: list(RISKS),
    workspace_prefixes: list(['/tmp', '/repo']),
    target_kinds: list(KINDS),
    target_values: list(VALUES),
    endpoint_classes: list(CLASSES),
    provenance_sources: list(SOURCES),
    destination_operations: list(OPERATIONS),
  },
  { requiredKeys: [] },
);

const ruleArb = fc.record(
  {
    name: fc.constantFrom('a', 'b', 'c', 'Allow Everything-Now', 'zz-second'),
    priority: fc.integer({ min: -1, max: 3 }),
    effect: fc.constantFrom(...VERDICTS),
    match: matchArb,
    reason_codes: list(['r_one', 'r_two']),
    violations: list(['v_one', 'v_two']),
    min_approvals: fc.integer({ min: 0, max: 3 }),
    require_broker_credential: fc.boolean(),
    broker_reference: fc.constantFrom('broker-a', 'broker-b'),
    endpoint: fc.constantFrom({ path_denylist: ['/etc/*'] }, { domain_allowlist: ['api.example.com'], action: 'require_approval' }),
    dataflow: fc.constant({ destination_kinds: ['url', 'host'] }),
    rate_limit: fc.record({ requests: fc.integer({ min: 1, max: 5 }), window: fc.constantFrom('minute', 'hour') }),
  },
  { requiredKeys: ['name', 'effect'] },
);

const policyArb = fc
  .record({ default_verdict: fc.constantFrom(...VERDICTS), rules: fc.array(ruleArb, { maxLength: 14 }) })
  .map((raw) => parsePolicyYaml(JSON.stringify(raw)).policy);

const TARGETS = [
  { kind: 'path', value: '/tmp/out.txt', operation: 'write' },
  { kind: 'path', value: '/etc/shadow', operation: 'read', sensitivity: 'secret' },
  { kind: 'path', value: '../../etc/shadow', operation: 'read' },
  { kind: 'path', value: '/tmp/old.txt', operation: 'delete' },
  { kind: 'url', value: 'https://api.example.com/v1', operation: 'read' },
  { kind: 'host', value: 'evil.com', operation: 'write' },
];
// Intent-side spellings: tool names must already be canonical; identities keep their case.
const INTENT_TOOLS = ['tool.write', 'tool.read', 'fs.delete', 'http.get', 'other.tool'];

const callArb = fc.record({
  tool_name: fc.constantFrom(...INTENT_TOOLS),
  args: fc.constant({}),
  targets: fc.subarray(TARGETS, { maxLength: 2 }),
  arg_provenance: fc.subarray(
    SOURCES.map((source, i) => ({ arg_path: `$.a${i}`, source })),
    { maxLength: 2 },
  ),
});

const intentArb = fc
  .record({
    call: callArb,
    steps: fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: fc.array(callArb, { minLength: 1, maxLength: 3 }), weight: 1 }),
    identity: fc.constantFrom('alice', 'bob', 'Alice', 'carol'),
    risk_class: fc.constantFrom('low', 'medium', 'high'),
    workspace: fc.constantFrom('/tmp/work', '/repo'),
    phase: fc.constantFrom('apply', 'plan'),
  })
  .map(({ call, steps, identity, risk_class, workspace, phase }) => {
    const ctx = { identity, risk_class, workspace, phase };
    return steps ? intent({ tool_name: 'script', targets: [], arg_provenance: [], script: { steps } }, ctx) : intent(call, ctx);
  });

function outcomeOf(policy: NormalizedPolicy, raw: unknown): GateOutcome | { error: string } {
  try {
    return evaluate(policy, raw, { now: NOW });
  } catch (err) {
    return { error: String(err) };
  }
}

describe('rule index (issue 17 item 4)', () => {
  it('decides every random intent exactly as the linear scan does', () => {
    const seen = { decided: 0, matched: 0, multiRuleTier: 0, skipped: 0, scripts: 0 };
    fc.assert(
      fc.property(policyArb, intentArb, (policy, raw) => {
        const indexed = outcomeOf(policy, raw);
        expect(indexed).toStrictEqual(outcomeOf(linearScanPolicy(policy), raw));
        if ('error' in indexed) return;
        seen.decided++;
        if (indexed.matchedRule !== '') seen.matched++;
        if (indexed.matchedRules.length > 1) seen.multiRuleTier++;
        if (indexed.script) seen.scripts++;
        else if (candidateRules(policy, indexed.preparedIntent!).length < policy.rules.length) seen.skipped++;
      }),
      { numRuns: 1000 },
    );
    // The generators exercise what matters: rules match, tiers hold several rules, the index skips rules, scripts run.
    expect(seen.decided).toBeGreaterThan(600);
    expect(seen.matched).toBeGreaterThan(200);
    expect(seen.multiRuleTier).toBeGreaterThan(20);
    expect(seen.skipped).toBeGreaterThan(200);
    expect(seen.scripts).toBeGreaterThan(60);
  });

  it('returns every rule that matches, in policy order', () => {
    fc.assert(
      fc.property(policyArb, intentArb, (policy, raw) => {
        let normalized: NormalizedIntent;
        try {
          normalized = normalizeIntent(raw);
        } catch {
          return;
        }
        if (normalized.script) return;
        const candidates = candidateRules(policy, normalized);
        const positions = candidates.map((r) => policy.rules.indexOf(r));
        expect(positions).toEqual([...positions].sort((a, b) => a - b));
        expect(new Set(candidates).size).toBe(candidates.length);
        for (const rule of policy.rules.filter((r) => ruleMatches(r, normalized))) expect(candidates).toContain(rule);
      }),
      { numRuns: 500 },
    );
  });
});
