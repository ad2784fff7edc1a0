import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allowlistsWithoutTargets,
  unmatchablePathPatterns,
  emptySelectorFindings,
  highRiskClassesWithoutEvidence,
  matchCovers,
  neverMatchReason,
  policyFindings,
  shadowingRule,
} from '../../src/policy/findings.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { REPO } from '../cli/run.js';

const policy = (rules: string, head = 'default_verdict: block\n') => parsePolicyYaml(`${head}rules:\n${rules}`).policy;
const kinds = (yaml: string) => policyFindings(parsePolicyYaml(yaml).policy, yaml).map((f) => `${f.kind}:${f.rule}`);

describe('never_matches', () => {
  it('flags selectors whose every value is outside what an intent can carry', () => {
    const p = policy(`  - { name: bad-kind, effect: block, match: { target_kinds: [file, dir] } }
  - { name: bad-dest, effect: block, match: { destination_kinds: [disk] } }
  - { name: bad-prov, effect: block, match: { provenance_sources: [llm] } }
  - { name: backslash, effect: block, match: { workspace_prefixes: ['C:\\\\work'] } }
  - { name: some-good, effect: block, match: { target_kinds: [file, path] } }
`);
    const reasons = Object.fromEntries(p.rules.map((r) => [r.name, neverMatchReason(r, p)]));
    expect(reasons['bad-kind']).toContain('target_kinds lists only unknown target kinds (dir, file)');
    expect(reasons['bad-dest']).toContain('destination_kinds');
    expect(reasons['bad-prov']).toContain('provenance_sources');
    expect(reasons['backslash']).toContain('workspace_prefixes');
    expect(reasons['some-good']).toBeUndefined();
  });

  it('flags contradictory delegation selectors', () => {
    const p = policy(`  - { name: no-links, effect: allow, match: { max_delegation_depth: 0, allowed_delegator_identities: [boss] } }
  - { name: fine, effect: allow, match: { max_delegation_depth: 1, allowed_delegator_identities: [boss] } }
`);
    const rule = (name: string) => p.rules.find((r) => r.name === name)!;
    expect(neverMatchReason(rule('no-links'), p)).toContain('max_delegation_depth 0');
    expect(neverMatchReason(rule('fine'), p)).toBeUndefined();
  });

  it('flags rules that fail-closed always blocks before rules run', () => {
    const head = 'default_verdict: block\nfail_closed: { enabled: true, risk_classes: [high] }\n';
    const p = policy(`  - { name: other-high, effect: allow, match: { endpoint_classes: [other], risk_classes: [high] } }
  - { name: other-low, effect: allow, match: { endpoint_classes: [other], risk_classes: [low] } }
  - { name: other-any, effect: allow, match: { endpoint_classes: [other] } }
`, head);
    expect(neverMatchReason(p.rules.find((r) => r.name === 'other-high')!, p)).toContain('fail_closed');
    expect(neverMatchReason(p.rules.find((r) => r.name === 'other-low')!, p)).toBeUndefined();
    expect(neverMatchReason(p.rules.find((r) => r.name === 'other-any')!, p)).toBeUndefined();
  });

  it('a rule that never matches is reported once, not also as shadowed or risky', () => {
    expect(kinds(`default_verdict: block
rules:
  - { name: all, priority: 1, effect: block, match: {} }
  - { name: dead, priority: 2, effect: allow, match: { target_kinds: [nope], risk_classes: [high] } }
`)).toEqual(['never_matches:dead']);
  });
});

describe('shadowed', () => {
  it('a higher-priority rule whose match covers the rule shadows it, whatever its effect', () => {
    expect(kinds(`default_verdict: block
rules:
  - { name: reads, priority: 10, effect: require_approval, match: { endpoint_classes: [fs.read, fs.write] } }
  - { name: workspace-reads, priority: 20, effect: allow, match: { endpoint_classes: [fs.read], workspace_prefixes: [/w] } }
`)).toEqual(['shadowed:workspace-reads']);
  });

  it('does not flag a rule the earlier one only partly covers, or a rule of higher priority', () => {
    const p = policy(`  - { name: a, priority: 10, effect: block, match: { endpoint_classes: [fs.read] } }
  - { name: b, priority: 20, effect: allow, match: { endpoint_classes: [fs.read, fs.write] } }
  - { name: c, priority: 5, effect: allow, match: { endpoint_classes: [fs.read], identities: [x] } }
`);
    expect(p.rules.map((_, i) => shadowingRule(p, i)?.name)).toEqual([undefined, undefined, undefined]);
  });

  it('at equal priority only a rule that always blocks shadows one that can never block', () => {
    const p = policy(`  - { name: a-block, priority: 10, effect: block, match: { tool_names: [x] } }
  - { name: b-allow, priority: 10, effect: allow, match: { tool_names: [x], identities: [me] } }
  - { name: c-allow-endpoint, priority: 10, effect: allow, match: { tool_names: [x] }, endpoint: { path_denylist: [/etc/**] } }
  - { name: d-block, priority: 10, effect: block, match: { tool_names: [x] } }
`);
    const byName = (n: string) => shadowingRule(p, p.rules.findIndex((r) => r.name === n))?.name;
    expect(byName('b-allow')).toBe('a-block');
    expect(byName('c-allow-endpoint')).toBeUndefined(); // its endpoint constraint can block and contribute
    expect(byName('d-block')).toBeUndefined();
  });

  it('a block rule whose dataflow action replaces the effect does not always block', () => {
    const p = policy(`  - { name: a, priority: 10, effect: block, match: {}, dataflow: { tainted_sources: [external], action: require_approval } }
  - { name: b, priority: 10, effect: allow, match: { tool_names: [x] } }
`);
    expect(shadowingRule(p, 1)).toBeUndefined();
  });

  it('matchCovers: empty covers everything; subsets, prefixes, hints and delegation', () => {
    const m = (yaml: string) => policy(`  - { name: r, effect: allow, match: ${yaml} }\n`).rules[0]!.match;
    expect(matchCovers(m('{}'), m('{ tool_names: [a] }'))).toBe(true);
    expect(matchCovers(m('{ tool_names: [a] }'), m('{}'))).toBe(false);
    expect(matchCovers(m('{ tool_names: [a, b] }'), m('{ tool_names: [a] }'))).toBe(true);
    expect(matchCovers(m('{ workspace_prefixes: [/w] }'), m('{ workspace_prefixes: [/w/x, /wide] }'))).toBe(true);
    expect(matchCovers(m('{ workspace_prefixes: [/w/x] }'), m('{ workspace_prefixes: [/w] }'))).toBe(false);
    expect(matchCovers(m('{ target_kinds: [path] }'), m('{ destination_kinds: [path] }'))).toBe(true);
    expect(matchCovers(m('{ tool_annotations: { destructiveHint: true } }'), m('{ tool_annotations: { destructiveHint: true, readOnlyHint: false } }'))).toBe(true);
    expect(matchCovers(m('{ tool_annotations: { destructiveHint: true } }'), m('{ tool_annotations: { readOnlyHint: false } }'))).toBe(false);
    expect(matchCovers(m('{ require_delegation: true }'), m('{}'))).toBe(false);
    expect(matchCovers(m('{ max_delegation_depth: 3 }'), m('{ max_delegation_depth: 2, delegation_scopes: [ops] }'))).toBe(true);
    expect(matchCovers(m('{ max_delegation_depth: 1 }'), m('{ max_delegation_depth: 2 }'))).toBe(false);
  });
});

describe('high_risk_allow_without_evidence', () => {
  it('flags allow rules naming high or critical risk without any evidence requirement', () => {
    const p = policy(`  - { name: open, priority: 1, effect: allow, match: { risk_classes: [high, low], tool_names: [a] } }
  - { name: evidenced, priority: 1, effect: allow, require_context_evidence: true, match: { risk_classes: [critical], tool_names: [b] } }
  - { name: approved, priority: 1, effect: require_approval, match: { risk_classes: [critical], tool_names: [c] } }
  - { name: delegated, priority: 1, effect: allow, match: { risk_classes: [high], require_delegation: true, tool_names: [d] } }
  - { name: unrestricted, priority: 1, effect: allow, match: { tool_names: [e] } }
`);
    const flagged = Object.fromEntries(p.rules.map((r) => [r.name, highRiskClassesWithoutEvidence(r, p)]));
    expect(flagged).toEqual({ open: ['high'], evidenced: [], approved: [], delegated: [], unrestricted: [] });
  });

  it('policy-level fail-closed context_evidence covers the risk classes it lists, and only those', () => {
    const head = 'default_verdict: block\nfail_closed: { enabled: true, risk_classes: [high], required_fields: [context_evidence] }\n';
    const p = policy(`  - { name: r, effect: allow, match: { risk_classes: [high, critical] } }\n`, head);
    expect(highRiskClassesWithoutEvidence(p.rules[0]!, p)).toEqual(['critical']);
  });
});

describe('empty_selector', () => {
  it('flags match lists written empty or blank, which restrict nothing', () => {
    const f = emptySelectorFindings(`default_verdict: block
rules:
  - { name: r1, effect: allow, match: { tool_names: [], identities: [me] } }
  - { name: r2, effect: allow, match: { endpoint_classes: ['  '] } }
`);
    expect(f.map((x) => `${x.rule}:${x.message}`)).toEqual([
      'r1:rule r1: match.tool_names is empty, which does not restrict the rule (it matches any value)',
      'r2:rule r2: match.endpoint_classes is empty, which does not restrict the rule (it matches any value)',
    ]);
  });
});

describe('shipped baselines', () => {
  it.each(['baseline-lowrisk', 'baseline-mediumrisk', 'baseline-highrisk'])('%s has no findings', (name) => {
    const text = readFileSync(join(REPO, 'policies', `${name}.yaml`), 'utf8');
    expect(policyFindings(parsePolicyYaml(text).policy, text)).toEqual([]);
  });
});

describe('allowlist_without_targets', () => {
  it('flags allow rules whose endpoint allowlists a target-less call passes', () => {
    const p = policy(`  - { name: open, effect: allow, match: { tool_names: [http.get] }, endpoint: { domain_allowlist: [api.example.com] } }
  - { name: typed, effect: allow, match: { target_kinds: [url] }, endpoint: { domain_allowlist: [api.example.com] } }
  - { name: blocker, effect: block, endpoint: { path_allowlist: ['/tmp/**'] } }
  - { name: deny-only, effect: allow, endpoint: { path_denylist: ['/etc/**'] } }
  - { name: both, effect: allow, endpoint: { path_allowlist: ['/tmp/**'], domain_allowlist: [x.example] } }
`);
    const lists = Object.fromEntries(p.rules.map((r) => [r.name, allowlistsWithoutTargets(r, p)]));
    expect(lists).toEqual({
      open: ['domain_allowlist'],
      typed: [],
      blocker: [],
      'deny-only': [],
      both: ['path_allowlist', 'domain_allowlist'],
    });
  });

  it('is quiet when fail-closed demands targets for every risk class the rule names', () => {
    const head = 'default_verdict: block\nfail_closed: { enabled: true, risk_classes: [high, critical], required_fields: [targets] }\n';
    const covered = policy(`  - { name: r, effect: allow, match: { risk_classes: [high] }, endpoint: { domain_allowlist: [a.example] } }
`, head);
    expect(allowlistsWithoutTargets(covered.rules[0]!, covered)).toEqual([]);
    const partly = policy(`  - { name: r, effect: allow, match: { risk_classes: [high, low] }, endpoint: { domain_allowlist: [a.example] } }
`, head);
    expect(allowlistsWithoutTargets(partly.rules[0]!, partly)).toEqual(['domain_allowlist']);
  });

  it('is reported by policyFindings with a fix', () => {
    const yaml = 'default_verdict: block\nrules:\n  - { name: open, effect: allow, endpoint: { domain_allowlist: [api.example.com] } }\n';
    const f = policyFindings(parsePolicyYaml(yaml).policy, yaml).find((x) => x.kind === 'allowlist_without_targets');
    expect(f?.message).toContain('a call that declares none passes it');
    expect(f?.fix).toContain('target_kinds');
  });
});

describe('pattern_cannot_match', () => {
  it('flags /** after a glob in an allowlist and ~ patterns, and nothing else (a denylist reads the glob prefix)', () => {
    const p = policy(`  - name: ssh
    effect: allow
    endpoint:
      path_denylist: ['/home/*/.ssh/**', '~/.aws/**', '/etc/**', '/srv/*/secrets', 'secrets/**']
      path_allowlist: ['/work/[ab]/**']
`);
    const problems = unmatchablePathPatterns(p.rules[0]!);
    expect(problems.map((x) => `${x.list} ${x.pattern}`)).toEqual(['path_allowlist /work/[ab]/**', 'path_denylist ~/.aws/**']);
    expect(problems[0]!.fix).toContain('"/work/[ab]"/**');
    const denied = `default_verdict: block\nrules:\n  - { name: ssh, effect: block, endpoint: { path_denylist: ['/home/*/.ssh/**'] } }\n`;
    expect(kinds(denied)).not.toContain('pattern_cannot_match:ssh');
    const allowed = `default_verdict: block\nrules:\n  - { name: ssh, effect: allow, endpoint: { path_allowlist: ['/home/*/.ssh/**'] } }\n`;
    expect(kinds(allowed)).toContain('pattern_cannot_match:ssh');
  });
});
