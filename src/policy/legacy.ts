import { isMap } from 'yaml';
import { ERROR_CODES, WardError } from '../errors.js';
import { keyText, type YamlSource } from './yaml-source.js';
import { policyParseError } from './invalid.js';

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

/** The reference's hint with Ward's file name (`ward init` writes `.ward.yaml`, not `.gait.yaml`). */
export const LEGACY_POLICY_HINT =
  'use the repo-root `.ward.yaml` contract: `schema_id`, `schema_version`, `default_verdict`, optional `fail_closed`, optional `mcp_trust`, and `rules`';

/**
 * Files people pass as a policy by mistake, recognised by their top-level keys, so the error says
 * what the file is instead of complaining about its first key.
 */
const FOREIGN_DOCUMENTS: readonly { what: string; keys: readonly string[]; enough: number; hint: string }[] = [
  {
    what: 'an intent request (gait.gate.intent_request)',
    keys: ['tool_name', 'targets', 'context', 'args', 'arg_provenance', 'script'],
    enough: 2,
    hint: 'pass this file as --intent, and the policy YAML as --policy',
  },
  {
    what: 'a package.json',
    // Not `scripts`, `name` or `version`: a policy (or a legacy one) has those too.
    keys: ['dependencies', 'devDependencies', 'peerDependencies', 'main', 'exports', 'engines', 'bin'],
    enough: 1,
    hint: 'pass a policy YAML file (`ward init` writes one to .ward.yaml; shipped ones are in policies/)',
  },
];

function topLevelKeys(source: YamlSource): ReadonlySet<string> {
  const root = source.doc.contents;
  return isMap(root) ? new Set(root.items.map((pair) => keyText(source, pair.key))) : new Set();
}

/** Refuse a document that is recognisably something else, with what to pass instead. */
export function checkForeignDocument(source: YamlSource): void {
  const present = topLevelKeys(source);
  if (present.has('rules') || present.has('default_verdict') || present.has('schema_id')) return;
  for (const doc of FOREIGN_DOCUMENTS) {
    const seen = doc.keys.filter((k) => present.has(k));
    if (seen.length >= doc.enough) {
      throw policyParseError(`this looks like ${doc.what}, not a policy (it has ${seen.join(', ')})`, doc.hint);
    }
  }
}

/**
 * The reference looks for legacy top-level keys before the strict decode, so a legacy file gets
 * migration guidance rather than an `unknown field` error.
 */
export function checkLegacyFields(source: YamlSource): void {
  const present = topLevelKeys(source);
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
