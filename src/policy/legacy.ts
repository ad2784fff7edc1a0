import { isMap } from 'yaml';
import { ERROR_CODES, WardError } from '../errors.js';
import { keyText, type YamlSource } from './yaml-source.js';

/**
 * Top-level keys of the pre-1.0 policy proposal, in the order the reference reports them, with
 * what replaces each (`gate.md` §2.1). Only the `version` and `name` texts are given by the
 * contract; the other four are Ward's wording in the same form.
 */
const LEGACY_FIELDS: readonly LegacyField[] = [
  {
    field: 'version',
    replacement_fields: ['schema_id', 'schema_version'],
    note: 'set schema_id=gait.gate.policy and schema_version=1.0.0',
  },
  { field: 'name', replacement_fields: [], note: 'remove the top-level policy name' },
  {
    field: 'boundaries',
    replacement_fields: ['rules'],
    note: 'express each boundary as a rule with match and effect',
  },
  {
    field: 'defaults',
    replacement_fields: ['default_verdict'],
    note: 'set default_verdict to allow, block, dry_run or require_approval',
  },
  {
    field: 'trust_sources',
    replacement_fields: ['mcp_trust'],
    note: 'configure mcp_trust.snapshot and mcp_trust.publisher_allowlist',
  },
  {
    field: 'unknown_server',
    replacement_fields: ['mcp_trust.action'],
    note: 'set mcp_trust.action for servers that are not trusted',
  },
];

interface LegacyField {
  field: string;
  replacement_fields: string[];
  note: string;
}

export const LEGACY_POLICY_HINT =
  'use the repo-root `.gait.yaml` contract: `schema_id`, `schema_version`, `default_verdict`, optional `fail_closed`, optional `mcp_trust`, and `rules`';

/**
 * The reference looks for legacy top-level keys before the strict decode, so a legacy file gets
 * migration guidance rather than an `unknown field` error.
 */
export function checkLegacyFields(source: YamlSource): void {
  const root = source.doc.contents;
  if (!isMap(root)) return;
  const present = new Set(root.items.map((pair) => keyText(source, pair.key)));
  const found = LEGACY_FIELDS.filter((f) => present.has(f.field));
  if (found.length === 0) return;
  const guidance = found.map(describeReplacement).join('; ');
  throw new WardError(
    ERROR_CODES.POLICY_LEGACY,
    `parse policy yaml: legacy policy proposal fields are not supported [${found.map((f) => f.field).join(', ')}]: ${guidance}`,
    {
      hint: LEGACY_POLICY_HINT,
      details: {
        migration: {
          kind: 'policy_fields',
          deprecated_fields: found.map((f) => f.field),
          field_replacements: found.map((f) => ({
            field: f.field,
            replacement_fields: [...f.replacement_fields],
            note: f.note,
          })),
        },
      },
    },
  );
}

function describeReplacement(f: LegacyField): string {
  if (f.replacement_fields.length === 0) return `${f.field}->${f.note}`;
  return `${f.field}->${f.replacement_fields.join('|')} (${f.note})`;
}
