import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { compareUtf8 } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { Runpack } from '../runpack/index.js';
import { writeFileAtomic } from '../state/atomic-file.js';
import { configFormatOf, parseRegressConfig, renderRegressConfig } from './config.js';
import { parseFixtureMeta, renderFixtureMeta } from './fixture.js';
import { toolSequence, verdictSequence } from './graders/trajectory.js';
import { stubReplay } from './graders/expected-exit-code.js';
import { isValidFixtureName, sanitizeFixtureName } from './name.js';
import { checkedRunpack } from './source.js';
import {
  DEFAULT_CONFIG_FILE,
  DEFAULT_FIXTURE_SET,
  FIXTURE_FILE,
  FIXTURE_RUNPACK_FILE,
  FIXTURES_DIR,
  REFERENCE_CONFIG_FILE,
  REGRESS_CONFIG_SCHEMA,
  REGRESS_FIXTURE_SCHEMA,
  type ConfigFixture,
  type FixtureMeta,
  type RegressConfig,
} from './types.js';

/** `--config`, else `ward.yaml`, else the reference's `gait.yaml` when only that exists (Ward decision 8). */
export function resolveConfigPath(cwd: string, flag: string | undefined): string {
  if (flag) return resolve(cwd, flag);
  const ward = resolve(cwd, DEFAULT_CONFIG_FILE);
  const reference = resolve(cwd, REFERENCE_CONFIG_FILE);
  return !existsSync(ward) && existsSync(reference) ? reference : ward;
}

export function readRegressConfig(path: string, shown: string): RegressConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new WardError(ERROR_CODES.USAGE, `read regress config ${shown}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`, {
      hint: 'create it with: ward regress init --from <runpack|run_id|pack>',
    });
  }
  return parseRegressConfig(text, shown);
}

export interface InitOptions {
  /** The working directory paths are shown relative to. */
  cwd: string;
  /** The runpack bytes (already taken out of a pack). */
  runpackBytes: Buffer;
  /** How the source is named in errors. */
  sourceLabel: string;
  name?: string | undefined;
  /** The config to rewrite; its directory is the layout root (`fixtures/` lives beside it). */
  configPath: string;
}

export interface InitResult {
  run_id: string;
  fixture_name: string;
  fixture_dir: string;
  runpack_path: string;
  config_path: string;
  meta: FixtureMeta;
}

/**
 * `regress init` (§5.2): copy the verified runpack to `fixtures/<name>/runpack.zip`, write
 * `fixture.json` with the expectations the run itself sets (tool and verdict sequences, and the
 * context digest when it has one), then rewrite the config from every `fixtures/*\/fixture.json`.
 */
export function initFixture(options: InitOptions): InitResult {
  let runpack: Runpack;
  try {
    runpack = checkedRunpack(options.runpackBytes, options.sourceLabel);
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `regress source ${options.sourceLabel}: ${(err as Error).message}`, { hint: `check it with: ward verify ${options.sourceLabel}` });
  }
  const runId = runpack.manifest.run_id;
  const name = sanitizeFixtureName(options.name ?? runId);
  if (!isValidFixtureName(name)) throw new WardError(ERROR_CODES.USAGE, `invalid fixture name ${JSON.stringify(name)}`);
  const root = dirname(options.configPath);
  const dir = join(root, FIXTURES_DIR, name);
  const dirRel = displayRelative(options.cwd, dir);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileAtomic(join(dir, FIXTURE_RUNPACK_FILE), options.runpackBytes, 0o600);
  const meta = fixtureMetaFor(name, runpack);
  writeFileAtomic(join(dir, FIXTURE_FILE), renderFixtureMeta(meta), 0o600);
  rewriteConfig(options.configPath);
  return {
    run_id: runId,
    fixture_name: name,
    fixture_dir: dirRel,
    runpack_path: `${dirRel}/${FIXTURE_RUNPACK_FILE}`,
    config_path: displayRelative(options.cwd, options.configPath),
    meta,
  };
}

export function fixtureMetaFor(name: string, runpack: Runpack): FixtureMeta {
  const meta: FixtureMeta = {
    schema_id: REGRESS_FIXTURE_SCHEMA.id,
    schema_version: REGRESS_FIXTURE_SCHEMA.version,
    name,
    run_id: runpack.manifest.run_id,
    runpack: FIXTURE_RUNPACK_FILE,
    // What the stub replay of this run exits with (2 when an intent has neither a result nor a stub
    // family): the reference always writes 0, so such a fixture failed its own grader from the start.
    expected_replay_exit_code: stubReplay(runpack).exitCode,
  };
  const tools = toolSequence(runpack);
  if (tools.length > 0) meta.expected_tool_sequence = tools;
  const verdicts = verdictSequence(runpack);
  if (verdicts.length > 0) meta.expected_verdict_sequence = verdicts;
  const digest = runpack.refs.context_set_digest;
  if (digest) {
    meta.context_conformance = 'required';
    meta.expected_context_set_digest = digest;
  }
  return meta;
}

/**
 * Rewrite the config from the `fixtures/*\/fixture.json` beside it, sorted by name. A directory without
 * fixture.json is skipped unless it holds a runpack.zip (a half-written fixture is an error).
 * The fixture set name of an existing config is kept, and a JSON config stays JSON.
 */
export function rewriteConfig(configPath: string): RegressConfig {
  const existing = existsSync(configPath) ? readFileSync(configPath, 'utf8') : undefined;
  let fixtureSet = DEFAULT_FIXTURE_SET;
  if (existing !== undefined) {
    try {
      fixtureSet = parseRegressConfig(existing).fixture_set;
    } catch {
      // An unreadable config is replaced; the scan below is the source of truth.
    }
  }
  const config: RegressConfig = { schema_id: REGRESS_CONFIG_SCHEMA.id, schema_version: REGRESS_CONFIG_SCHEMA.version, fixture_set: fixtureSet, fixtures: scanFixtures(dirname(configPath)) };
  writeFileAtomic(configPath, renderRegressConfig(config, configFormatOf(existing, basename(configPath))), 0o644);
  return config;
}

/** `<root>/fixtures/*\/fixture.json` as config entries (runpack paths relative to `root`). */
export function scanFixtures(layoutRoot: string): ConfigFixture[] {
  const root = join(layoutRoot, FIXTURES_DIR);
  if (!existsSync(root)) return [];
  const out: ConfigFixture[] = [];
  for (const dirName of readdirSync(root).sort(compareUtf8)) {
    const dir = join(root, dirName);
    if (!statSync(dir).isDirectory()) continue;
    const metaPath = join(dir, FIXTURE_FILE);
    if (!existsSync(metaPath)) {
      if (existsSync(join(dir, FIXTURE_RUNPACK_FILE))) {
        throw new WardError(ERROR_CODES.USAGE, `${FIXTURES_DIR}/${dirName} has a ${FIXTURE_RUNPACK_FILE} but no ${FIXTURE_FILE}`, {
          hint: `remove ${FIXTURES_DIR}/${dirName} or run ward regress init for it again`,
        });
      }
      continue;
    }
    const meta = parseFixtureMeta(readFileSync(metaPath, 'utf8'), `${FIXTURES_DIR}/${dirName}/${FIXTURE_FILE}`);
    out.push({ name: meta.name, run_id: meta.run_id, runpack: `${FIXTURES_DIR}/${dirName}/${meta.runpack}` });
  }
  return out.sort((a, b) => compareUtf8(a.name, b.name));
}

function displayRelative(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel.startsWith('..') || rel === '' ? path : rel.split('\\').join('/');
}
