import type { Verdict } from '../policy/types.js';

const RANK: Record<string, number> = { allow: 0, dry_run: 1, require_approval: 2, block: 3 };

/** `mostRestrictiveVerdict`: allow < dry_run < require_approval < block (unknown ranks as allow). */
export function mostRestrictive(a: Verdict, b: Verdict): Verdict {
  return (RANK[b] ?? 0) > (RANK[a] ?? 0) ? b : a;
}

export function verdictRank(v: string): number {
  return RANK[v] ?? 0;
}
