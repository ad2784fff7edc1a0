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
 * out has a selector the intent provably fails. Candidates are visited in policy order (priority,
 * then name), and the tier walk still runs the full `ruleMatches` on each, so the outcome is the
 * linear scan's; the index only saves trying rules that cannot match.
 */

/** The selectors a rule may be filed under, in order of preference, and the intent value each tests. */
const KEYS: readonly { selector: (m: PolicyMatch) => readonly string[]; value: (intent: NormalizedIntent) => string }[] = [
  { selector: (m) => m.tool_names, value: (intent) => intent.tool_name },
  { selector: (m) => m.identities, value: (intent) => intent.context.identity },
  { selector: (m) => m.risk_classes, value: (intent) => intent.context.risk_class },
];

/** Rules in policy order, with their positions in `policy.rules`. */
interface Bucket {
  positions: number[];
  rules: PolicyRule[];
}

interface RuleIndex {
  /** Per KEYS entry: selector value → the rules filed under it. */
  byKey: Map<string, Bucket>[];
  /** The rules filed under no key. */
  unfiled: Bucket;
}

/** Built once per rule list: a normalized policy is not modified after it is loaded. */
const indexes = new WeakMap<readonly PolicyRule[], RuleIndex | 'linear'>();

/**
 * Visit the rules that may match `intent` in evaluation order, until `visit` returns false: a
 * subsequence of `policy.rules` that holds every rule that matches.
 */
export function visitCandidates(policy: NormalizedPolicy, intent: NormalizedIntent, visit: (rule: PolicyRule) => boolean): void {
  const rules = policy.rules;
  let index = indexes.get(rules);
  if (index === undefined) {
    index = buildIndex(rules);
    indexes.set(rules, index);
  }
  if (index === 'linear') {
    for (const rule of rules) if (!visit(rule)) return;
    return;
  }
  const buckets: Bucket[] = index.unfiled.rules.length ? [index.unfiled] : [];
  for (let k = 0; k < KEYS.length; k++) {
    const filed = index.byKey[k]!.get(KEYS[k]!.value(intent));
    if (filed) buckets.push(filed);
  }
  // Merge the buckets in policy order: visit the bucket with the earliest next rule up to the next
  // rule of any other bucket. A rule is filed under one key and the intent has one value per key,
  // so no rule is in two buckets.
  const next = buckets.map(() => 0);
  for (;;) {
    let best = -1;
    let first = Infinity;
    let limit = Infinity;
    for (let b = 0; b < buckets.length; b++) {
      const position = next[b]! < buckets[b]!.positions.length ? buckets[b]!.positions[next[b]!]! : Infinity;
      if (position < first) {
        limit = first;
        first = position;
        best = b;
      } else if (position < limit) {
        limit = position;
      }
    }
    if (best < 0) return;
    const { positions, rules: filed } = buckets[best]!;
    let n = next[best]!;
    while (n < positions.length && positions[n]! < limit) if (!visit(filed[n++]!)) return;
    next[best] = n;
  }
}

function buildIndex(rules: readonly PolicyRule[]): RuleIndex {
  const index: RuleIndex = { byKey: KEYS.map(() => new Map()), unfiled: { positions: [], rules: [] } };
  const file = (bucket: Bucket, position: number) => {
    bucket.positions.push(position);
    bucket.rules.push(rules[position]!);
  };
  rules.forEach((rule, position) => {
    const k = KEYS.findIndex((key) => key.selector(rule.match).length > 0);
    if (k < 0) {
      file(index.unfiled, position);
      return;
    }
    const byValue = index.byKey[k]!;
    for (const value of new Set(KEYS[k]!.selector(rule.match))) {
      let bucket = byValue.get(value);
      if (!bucket) byValue.set(value, (bucket = { positions: [], rules: [] }));
      file(bucket, position);
    }
  });
  return index;
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
