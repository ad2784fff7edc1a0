/**
 * Go `path.Clean` (identical to `filepath.Clean` on the Linux reference): the shortest path
 * equivalent by purely lexical processing. Backslashes are ordinary characters, as on Linux.
 */
export function goCleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const parts: string[] = [];
  for (const segment of p.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
      else if (!rooted) parts.push('..');
      continue;
    }
    parts.push(segment);
  }
  const joined = parts.join('/');
  if (rooted) return '/' + joined;
  return joined === '' ? '.' : joined;
}
