import { parseRFC3339 } from '../../src/canon/gotime.js';
import { evaluate, type EvaluateOptions, type GateOutcome } from '../../src/gate/evaluate.js';
import { visitCandidates } from '../../src/gate/rule-index.js';
import type { NormalizedIntent } from '../../src/intent/types.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import type { NormalizedPolicy, PolicyRule } from '../../src/policy/types.js';

export const NOW = parseRFC3339('2026-03-12T12:00:00Z');

/** A minimal valid intent; `over` replaces top-level keys, `ctx` merges into context. */
export function intent(over: Record<string, unknown> = {}, ctx: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    tool_name: 'tool.write',
    args: { path: '/tmp/out.txt' },
    targets: [{ kind: 'path', value: '/tmp/out.txt', operation: 'write' }],
    arg_provenance: [{ arg_path: '$.path', source: 'user' }],
    ...over,
    context: { identity: 'alice', workspace: '/repo', risk_class: 'medium', ...ctx },
  };
}

export function decide(policyYaml: string, raw: unknown, options: Partial<EvaluateOptions> = {}): GateOutcome {
  return evaluate(parsePolicyYaml(policyYaml), raw, { now: NOW, ...options });
}

/** Every rule the rule index lets the tier walk visit for this intent, in visiting order. */
export function candidateRules(policy: NormalizedPolicy, normalized: NormalizedIntent): PolicyRule[] {
  const out: PolicyRule[] = [];
  visitCandidates(policy, normalized, (rule) => {
    out.push(rule);
    return true;
  });
  return out;
}
