import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { POLICY_SPEC, type FieldSpec } from '../../src/policy/schema.js';
import { REPO } from '../cli/run.js';

const doc = readFileSync(join(REPO, 'docs', 'policies.md'), 'utf8');

function keys(spec: FieldSpec): string[] {
  if (spec.kind === 'object') return Object.entries(spec.fields).flatMap(([k, f]) => [k, ...keys(f)]);
  if (spec.kind === 'object_list') return keys(spec.item);
  return [];
}

describe('docs/policies.md', () => {
  it('documents every policy key', () => {
    for (const key of new Set(keys(POLICY_SPEC))) expect(doc, key).toMatch(new RegExp(`\\b${key}\\b`));
  });

  it('quotes the shipped templates verbatim', () => {
    const blocks = [...doc.matchAll(/```yaml\n# (policies\/[\w.-]+)\n([\s\S]*?)```/g)];
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const [, file, body] of blocks) {
      expect(readFileSync(join(REPO, file as string), 'utf8'), file).toContain(body);
    }
  });
});
