/**
 * The closest of `candidates` to a misspelled `word` (edit distance at most 2, and less than half
 * its length), for "did you mean" hints; undefined when nothing is close enough to be a typo.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(word, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.min(2, Math.floor((word.length - 1) / 2)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** A hint for a value outside a fixed vocabulary: the likely intended value, then every valid one. */
export function oneOfHint(value: string, valid: Iterable<string>): string {
  const all = [...valid].sort();
  const near = closestMatch(value, all);
  return `${near ? `did you mean ${JSON.stringify(near)}? ` : ''}valid values: ${all.join(', ')}`;
}
