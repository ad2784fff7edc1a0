import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as ward from '../src/index.js';
import { REPO } from './cli/run.js';

// The package exports exactly what docs/sdk.md documents: an internal helper that leaks into the
// public surface (or a documented name that disappears) fails here.

function documentedExports(): string[] {
  const doc = readFileSync(join(REPO, 'docs', 'sdk.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Everything the package exports'));
  const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| area'));
  return rows.flatMap((row) => [...row.split('|')[2]!.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]!)).sort();
}

describe('public API', () => {
  it('docs/sdk.md lists the exports in a table', () => {
    expect(documentedExports().length).toBeGreaterThan(50);
  });

  it('exports exactly the documented names', () => {
    expect(Object.keys(ward).sort()).toEqual(documentedExports());
  });
});
