import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The in-repo copy of the JCS vectors: what the tests read (hermetic). */
export const jcsFixtures = path.join(repoRoot, 'fixtures/jcs');

/** The shared originals (present in the dev workspace and in CI, where shared/ sits beside the clone). */
export const sharedJcsVectors = path.resolve(repoRoot, '../shared/vectors/jcs');

export function fixtureBytes(relative: string): Buffer {
  return readFileSync(path.join(jcsFixtures, relative));
}

export function fixtureText(relative: string): string {
  return readFileSync(path.join(jcsFixtures, relative), 'utf8');
}

export function fixtureJson<T>(relative: string): T {
  return JSON.parse(fixtureText(relative)) as T;
}

/** All regular files below `dir`, as sorted `/`-separated relative paths. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const child = rel === '' ? name : `${rel}/${name}`;
      if (statSync(path.join(dir, child)).isDirectory()) walk(child);
      else out.push(child);
    }
  };
  if (existsSync(dir)) walk('');
  return out.sort();
}
