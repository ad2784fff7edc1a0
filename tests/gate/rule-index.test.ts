import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/gate/evaluate.js';
import { linearScanPolicy, visitCandidates } from '../../src/gate/rule-index.js';
import { normalizeIntent } from '../../src/intent/normalize.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { NOW, candidateRules, intent } from './helpers.js';

const POLICY = parsePolicyYaml(`
default_verdict: require_approval
rules:
  - { name: any-path, priority: 0, effect: allow, match: { target_kinds: [path] } }
  - { name: empty-tool-list, priority: 1, effect: allow, match: { tool_names: [] } }
  - { name: write, priority: 2, effect: block, match: { tool_names: [tool.write, fs.delete] } }
  - { name: read, priority: 2, effect: block, match: { tool_names: [tool.read] } }
  - { name: bob, priority: 3, effect: block, match: { identities: [bob] } }
  - { name: alice, priority: 3, effect: block, match: { identities: [alice] } }
  - { name: high, priority: 4, effect: block, match: { risk_classes: [HIGH] } }
  - { name: write-as-bob, priority: 5, effect: block, match: { tool_names: [tool.write], identities: [bob] } }
  - { name: everything, priority: 6, effect: dry_run }
`).policy;

const names = (raw: Record<string, unknown>) => candidateRules(POLICY, normalizeIntent(raw)).map((r) => r.name);

describe('candidateRules', () => {
  it('keeps rules without a tool, identity or risk selector for every intent, in policy order', () => {
    expect(names(intent({}, { identity: 'carol' }))).toEqual(['any-path', 'empty-tool-list', 'write', 'write-as-bob', 'everything']);
    expect(names(intent({ tool_name: 'other.tool' }, { identity: 'carol' }))).toEqual(['any-path', 'empty-tool-list', 'everything']);
  });

  it('files a rule under each of its tool names, and merges tool, identity and risk buckets in policy order', () => {
    expect(names(intent({ tool_name: 'fs.delete' }, { identity: 'alice', risk_class: 'high' }))).toEqual([
      'any-path',
      'empty-tool-list',
      'write',
      'alice',
      'high',
      'everything',
    ]);
    expect(names(intent({ tool_name: 'tool.read' }, { identity: 'bob', risk_class: 'low' }))).toEqual([
      'any-path',
      'empty-tool-list',
      'read',
      'bob',
      'everything',
    ]);
  });

  it('leaves the other selectors of a candidate to ruleMatches', () => {
    const p = parsePolicyYaml('default_verdict: allow\nrules: [{ name: write-as-bob, effect: block, match: { tool_names: [tool.write], identities: [bob] } }]');
    expect(candidateRules(p.policy, normalizeIntent(intent({}, { identity: 'alice' }))).map((r) => r.name)).toEqual(['write-as-bob']);
    expect(evaluate(p, intent({}, { identity: 'alice' }), { now: NOW }).verdict).toBe('allow');
    expect(evaluate(p, intent({}, { identity: 'bob' }), { now: NOW }).verdict).toBe('block');
  });

  it('stops when the visitor says so', () => {
    const visited: string[] = [];
    visitCandidates(POLICY, normalizeIntent(intent({ tool_name: 'fs.delete' }, { identity: 'alice', risk_class: 'high' })), (rule) => {
      visited.push(rule.name);
      return rule.name !== 'alice';
    });
    expect(visited).toEqual(['any-path', 'empty-tool-list', 'write', 'alice']);
  });

  it('linearScanPolicy tries every rule', () => {
    const linear = linearScanPolicy(POLICY);
    expect(candidateRules(linear, normalizeIntent(intent({ tool_name: 'other.tool' })))).toEqual(POLICY.rules);
  });
});

describe('many rules', () => {
  const rules = Array.from(
    { length: 10_000 },
    (_, i) => `  - { name: tool-${String(i).padStart(5, '0')}, priority: 5, effect: ${i % 2 ? 'block' : 'allow'}, match: { tool_names: [tool.n${i}] } }\n`,
  ).join('');
  const big = parsePolicyYaml(`default_verdict: require_approval
rules:
${rules}  - { name: reads, priority: 9, effect: allow, match: { tool_names: [tool.read] } }
  - { name: no-hosts, priority: 9, effect: block, match: { target_kinds: [host] } }
`);

  it('a 10,000-rule policy walks only the rules that can match, and decides as the linear scan does', () => {
    const cases = [
      intent({ tool_name: 'tool.n4242' }),
      intent({ tool_name: 'tool.n4243' }),
      intent({ tool_name: 'tool.read' }),
      intent({ tool_name: 'tool.read', targets: [{ kind: 'host', value: 'evil.com', operation: 'write' }] }),
      intent({ tool_name: 'tool.unlisted' }),
    ];
    const linear = linearScanPolicy(big.policy);
    for (const raw of cases) expect(evaluate(big, raw, { now: NOW })).toStrictEqual(evaluate(linear, raw, { now: NOW }));

    expect(evaluate(big, cases[0], { now: NOW }).matchedRule).toBe('tool-04242');
    expect(evaluate(big, cases[1], { now: NOW }).verdict).toBe('block');
    expect(evaluate(big, cases[3], { now: NOW }).matchedRule).toBe('no-hosts,reads');
    expect(evaluate(big, cases[4], { now: NOW }).reasonCodes).toEqual(['default_require_approval']);
    expect(candidateRules(big.policy, normalizeIntent(cases[0])).map((r) => r.name)).toEqual(['tool-04242', 'no-hosts']);
  });
});
