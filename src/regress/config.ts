import { compareUtf8, type JsonObject } from '../canon/index.js';
import { isValidFixtureName } from './name.js';
import { optionalString, parseYamlObject, rejectUnknownKeys, usage } from './strict.js';
import { DEFAULT_FIXTURE_SET, REFERENCE_CONFIG_FILE, REGRESS_CONFIG_SCHEMA, type ConfigFixture, type RegressConfig } from './types.js';

const CONFIG_KEYS = ['schema_id', 'schema_version', 'fixture_set', 'fixtures'] as const;
const FIXTURE_KEYS = ['name', 'run_id', 'runpack'] as const;

/**
 * Parse a regress config (§5.3 step 1, Ward decision 8): YAML (JSON accepted), schema id and
 * version checked when present, `fixture_set` defaulting to `default`, each fixture with a name
 * and a runpack, names unique, fixtures sorted by name. Unknown keys are refused.
 */
export function parseRegressConfig(text: string, what = 'regress config'): RegressConfig {
  const obj = parseYamlObject(text, what);
  rejectUnknownKeys(obj, CONFIG_KEYS, what);
  const schemaId = optionalString(obj, 'schema_id', what) ?? '';
  const schemaVersion = optionalString(obj, 'schema_version', what) ?? '';
  if (schemaId !== '' && schemaId !== REGRESS_CONFIG_SCHEMA.id) throw usage(`${what}: unsupported schema_id ${JSON.stringify(schemaId)} (want ${REGRESS_CONFIG_SCHEMA.id})`, what);
  if (schemaVersion !== '' && schemaVersion !== REGRESS_CONFIG_SCHEMA.version) {
    throw usage(`${what}: unsupported schema_version ${JSON.stringify(schemaVersion)} (want ${REGRESS_CONFIG_SCHEMA.version})`, what);
  }
  const fixtureSet = (optionalString(obj, 'fixture_set', what) ?? '').trim() || DEFAULT_FIXTURE_SET;
  const raw = obj['fixtures'];
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) throw usage(`${what}: fixtures must be a list`, what);
  const fixtures = ((raw as unknown[] | null | undefined) ?? []).map((entry, i) => parseEntry(entry, `${what}: fixtures[${i}]`));
  fixtures.sort((a, b) => compareUtf8(a.name, b.name));
  for (let i = 1; i < fixtures.length; i++) {
    if (fixtures[i]!.name === fixtures[i - 1]!.name) throw usage(`${what}: fixture ${JSON.stringify(fixtures[i]!.name)} is listed twice`, what);
  }
  return { schema_id: REGRESS_CONFIG_SCHEMA.id, schema_version: REGRESS_CONFIG_SCHEMA.version, fixture_set: fixtureSet, fixtures };
}

function parseEntry(entry: unknown, what: string): ConfigFixture {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw usage(`${what} must be a mapping`, what);
  const obj = entry as JsonObject;
  rejectUnknownKeys(obj, FIXTURE_KEYS, what);
  const name = (optionalString(obj, 'name', what) ?? '').trim();
  const runpack = (optionalString(obj, 'runpack', what) ?? '').trim();
  if (name === '') throw usage(`${what}: name is required`, what);
  if (!isValidFixtureName(name)) throw usage(`${what}: name ${JSON.stringify(name)} must match ^[a-z0-9][a-z0-9._-]*$`, what);
  if (runpack === '') throw usage(`${what}: runpack is required`, what);
  const runId = (optionalString(obj, 'run_id', what) ?? '').trim();
  return runId ? { name, run_id: runId, runpack } : { name, runpack };
}

/**
 * The config as `regress init` writes it: YAML by default; JSON (2-space indent, the reference's
 * format) when `json` is set, so a reference `gait.yaml` stays readable by the reference.
 */
export function renderRegressConfig(config: RegressConfig, format: 'yaml' | 'json'): string {
  if (format === 'json') {
    const out = {
      schema_id: config.schema_id,
      schema_version: config.schema_version,
      fixture_set: config.fixture_set,
      fixtures: config.fixtures.map((f) => ({ name: f.name, ...(f.run_id ? { run_id: f.run_id } : {}), runpack: f.runpack })),
    };
    return JSON.stringify(out, null, 2) + '\n';
  }
  const lines = [
    '# Ward regress config (YAML). `ward regress init` rewrites this file from fixtures/*/fixture.json.',
    `schema_id: ${scalar(config.schema_id)}`,
    `schema_version: ${scalar(config.schema_version)}`,
    `fixture_set: ${scalar(config.fixture_set)}`,
  ];
  if (config.fixtures.length === 0) lines.push('fixtures: []');
  else {
    lines.push('fixtures:');
    for (const f of config.fixtures) {
      lines.push(`  - name: ${scalar(f.name)}`);
      if (f.run_id) lines.push(`    run_id: ${scalar(f.run_id)}`);
      lines.push(`    runpack: ${scalar(f.runpack)}`);
    }
  }
  return lines.join('\n') + '\n';
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

/** A YAML scalar: plain when it cannot be read as anything but this string, else double-quoted (JSON escaping is valid YAML). */
function scalar(value: string): string {
  return PLAIN.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
}

/**
 * JSON content is kept JSON when a config is rewritten, and a config named `gait.yaml` is always
 * written as JSON: the reference reads that file with a JSON parser, so YAML there (even a comment
 * line) breaks a pipeline that still runs the reference. Anything else is written as YAML.
 */
export function configFormatOf(existing: string | undefined, fileName: string): 'yaml' | 'json' {
  if (fileName === REFERENCE_CONFIG_FILE) return 'json';
  return existing !== undefined && existing.trimStart().startsWith('{') ? 'json' : 'yaml';
}
