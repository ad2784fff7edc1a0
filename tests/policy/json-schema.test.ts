import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { POLICY_SPEC, type FieldSpec } from '../../src/policy/schema.js';
import { REPO } from '../cli/run.js';

interface JsonSchemaNode {
  type?: string;
  properties?: Record<string, JsonSchemaNode>;
  items?: JsonSchemaNode;
}

const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'gait.gate.policy.schema.json'), 'utf8')) as JsonSchemaNode;

/** The key tree of the decoder's spec and of the JSON Schema must be the same. */
function specTree(spec: FieldSpec): unknown {
  if (spec.kind === 'object') return Object.fromEntries(Object.entries(spec.fields).map(([k, f]) => [k, specTree(f)]));
  if (spec.kind === 'object_list') return [specTree(spec.item)];
  return spec.kind === 'string_list' ? 'array' : 'scalar';
}

function schemaTree(node: JsonSchemaNode): unknown {
  if (node.type === 'object') return Object.fromEntries(Object.entries(node.properties ?? {}).map(([k, n]) => [k, schemaTree(n)]));
  if (node.type === 'array') return node.items?.type === 'object' ? [schemaTree(node.items)] : 'array';
  return 'scalar';
}

describe('schemas/gait.gate.policy.schema.json (editor aid)', () => {
  it('describes exactly the keys the strict decoder accepts', () => {
    expect(schemaTree(schema)).toEqual(specTree(POLICY_SPEC));
  });

  it('accepts every shipped template and reference fixture', () => {
    const validate = new Ajv2020({ strict: true }).compile(schema);
    for (const dir of ['policies', join('fixtures', 'policies')]) {
      for (const file of readdirSync(join(REPO, dir)).filter((f) => f.endsWith('.yaml'))) {
        const ok = validate(parse(readFileSync(join(REPO, dir, file), 'utf8')) ?? {});
        expect(ok, `${dir}/${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('rejects an unknown key and a bad effect', () => {
    const validate = new Ajv2020({ strict: true }).compile(schema);
    expect(validate({ rules: [{ name: 'r', effect: 'allow', bogus: 1 }] })).toBe(false);
    expect(validate({ rules: [{ name: 'r', effect: 'permit' }] })).toBe(false);
  });
});
