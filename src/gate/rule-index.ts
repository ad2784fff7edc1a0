import type { NormalizedIntent } from '../intent/types.js';
import type { NormalizedPolicy, PolicyMatch, PolicyRule } from '../policy/types.js';

/**
 * Which rules can match an intent, without trying them all (docs/gate.md, "Many rules").
 *
 * Some match selectors are exact-membership tests on one value of the intent (`ruleMatches`:
 * `m.tool_names.includes(intent.tool_name)`, and likewise identities and risk classes). A rule is
 * filed under the first of these selectors it sets, once per listed value; a rule that sets none
 * of them is a candidate for every intent. The candidates for an intent are then the rules filed
 * under its tool name, its identity and its risk class, plus the unfiled ones: every rule left
 * out has a selector the intent provably fails. Candidates come back in policy order (priority,
 * then name), and the tier walk still runs the full `ruleMatches` on each, so the outcome is the
 * linear scan's; the index only saves trying rules that cannot match.
 */

/** The selectors a rule may be filed under, in order of preference, and the intent value each tests. */
const KEYS: readonly { selector: (m: PolicyMatch) => readonly string[]; value: (intent: NormalizedIntent) => string }[] = [
  { selector: (m) => m.tool_names, value: (intent) => intent.tool_name },
  { selector: (m) => m.identities, value: (intent) => intent.context.identity },
  { selector: (m) => m.risk_classes, value: (intent) => intent.context.risk_class },
];

interface RuleIndex {
  /** Per KEYS entry: selector value → positions in `policy.rules` of the rules filed under it, ascending. */
  byKey: Map<string, number[]>[];
  /** Positions of the rules filed under no key, ascending. */
  unfiled: number[];
}

/** Built once per rule list: a normalized policy is not modified after it is loaded. */
const indexes = new WeakMap<readonly PolicyRule[], RuleIndex | 'linear'>();

/** The rules that may match `intent`, in evaluation order: a subsequence of `policy.rules` holding every rule that matches. */
export function candidateRules(policy: NormalizedPolicy, intent: NormalizedIntent): readonly PolicyRule[] {
  const rules = policy.rules;
  let index = indexes.get(rules);
  if (index === undefined) {
    index = buildIndex(rules);
    indexes.set(rules, index);
  }
  if (index === 'linear') return rules;
  let positions: readonly number[] = index.unfiled;
  for (let k = 0; k < KEYS.length; k++) {
    const filed = index.byKey[k]!.get(KEYS[k]!.value(intent));
    if (filed) positions = mergeAscending(positions, filed);
  }
  return positions.map((i) => rules[i]!);
}

function buildIndex(rules: readonly PolicyRule[]): RuleIndex {
  const index: RuleIndex = { byKey: KEYS.map(() => new Map()), unfiled: [] };
  rules.forEach((rule, position) => {
    const k = KEYS.findIndex((key) => key.selector(rule.match).length > 0);
    if (k < 0) {
      index.unfiled.push(position);
      return;
    }
    const byValue = index.byKey[k]!;
    for (const value of new Set(KEYS[k]!.selector(rule.match))) {
      const filed = byValue.get(value);
      if (filed) filed.push(position);
      else byValue.set(value, [position]);
    }
  });
  return index;
}

/** Two ascending lists of distinct positions (a rule is filed under one key, so no position is in both) merged into one. */
function mergeAscending(a: readonly number[], b: readonly number[]): readonly number[] {
  if (a.length === 0) return b;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]! < b[j]! ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/**
 * For tests: a copy of `policy` whose rules are all tried in turn (the reference's linear scan),
 * to check that the index changes no outcome.
 */
export function linearScanPolicy(policy: NormalizedPolicy): NormalizedPolicy {
  const copy = { ...policy, rules: [...policy.rules] };
  indexes.set(copy.rules, 'linear');
  return copy;
}
