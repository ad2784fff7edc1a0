import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, isWardError, WardError } from '../../errors.js';
import {
  captureReceiptArtifact,
  DEFAULT_RESULT_FILE,
  initFixture,
  isValidFixtureName,
  readRegressConfig,
  regressJunit,
  renderRegressResult,
  resolveConfigPath,
  runpackOf,
  runRegress,
  topFailureReason,
  type CandidateArtifact,
  type InitResult,
  type RegressResult,
  recordFromCapture,
  recordsFromRunpack,
  recordsFromStore,
  recordsFromTraceDir,
  renderReplayJson,
  renderReplayJunit,
  renderReplayMarkdown,
  replayPolicy,
  type ReplayInput,
  type ReplayReport,
} from '../../regress/index.js';
import { isJsonObject, parseRFC3339, type JsonObject } from '../../canon/index.js';
import { loadPolicyFile } from '../../policy/load.js';
import { parseJsonInput, readInputText } from '../input.js';
import { writeFileAtomic } from '../../state/atomic-file.js';
import { locateArtifact } from '../../store/index.js';
import { storeOpener, type StoreLocationFlags } from '../store-access.js';
import { WARD_VERSION } from '../../version.js';
import { STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';
import { correlationId, goJsonLine } from '../output.js';
import { displayPath } from './run.js';
import { PROGRESS_HELP, progressOf } from '../progress.js';

interface SourceFlags extends StoreLocationFlags {
  from: string;
  name?: string;
  checkpoint?: string;
  config?: string;
  stateDir?: string;
  json?: boolean;
}

interface RunFlags extends StoreLocationFlags {
  config?: string;
  output?: string;
  junit?: string;
  candidate?: string[];
  allowNondeterministic?: boolean;
  contextConformance?: boolean;
  allowContextRuntimeDrift?: boolean;
  stateDir?: string;
  json?: boolean;
  progress?: boolean;
}

/** `ward regress init|add|run|bootstrap` (packs-regress.md §5) and `ward regress replay`. */
export function register(program: Command, ctx: CliContext): void {
  const regress = program
    .command('regress')
    .description('turn runs into deterministic CI regressions (exit 0 pass, 5 regression, 6 config) and replay recorded decisions under a new policy');

  sourceOptions(
    regress
      .command('init')
      .description('make a fixture from a runpack, run id, run pack or store id: fixtures/<name>/ and the regress config'),
  ).action(async (flags: SourceFlags) => guarded(async () => {
    const init = await initFrom(ctx, flags, false);
    printInit(ctx, flags, init, false);
  }));

  sourceOptions(
    regress
      .command('add')
      .description('like init; --from also accepts a gait.capture.receipt file naming a runpack'),
  ).action(async (flags: SourceFlags) => guarded(async () => {
    const init = await initFrom(ctx, flags, true);
    printInit(ctx, flags, init, true);
  }));

  runOptions(regress.command('run').description('grade every fixture: exit 0 pass, 5 regression, 6 config or usage error')).action(
    async (flags: RunFlags) => guarded(async () => {
      const run = await runFromConfig(ctx, flags);
      printRun(ctx, flags, run);
    }),
  );

  runOptions(sourceOptions(regress.command('bootstrap').description('init, then run: a fixture and its first grading in one step'))).action(
    async (flags: SourceFlags & RunFlags) => guarded(async () => {
      const init = await initFrom(ctx, flags, true);
      const run = await runFromConfig(ctx, flags);
      printRun(ctx, flags, run, {
        run_id: init.result.run_id,
        fixture_name: init.result.fixture_name,
        fixture_dir: init.result.fixture_dir,
        runpack_path: init.result.runpack_path,
        config_path: init.result.config_path,
      });
    }),
  );

  registerReplay(regress, ctx);
}

function sourceOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--from <source>', 'runpack path, run id (<state>/runpack_<id>.zip, then the store), run pack, or store id')
    .option('--name <name>', 'fixture name (default: the run id, sanitized)')
    .option('--checkpoint <n>', 'session chains only (not supported by Ward)')
    .option('--config <file>', 'regress config to rewrite (default ward.yaml, or gait.yaml when only that exists)')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'one line of JSON on stdout')
    .option('--store <url>', STORE_HELP)
    .option('--store-password-file <file>', STORE_PASSWORD_HELP);
}

const STORE_HELP = 'look run and store ids up in a PostgreSQL store (postgres://user@host:5432/db; also WARD_STORE_URL; no password here)';
const STORE_PASSWORD_HELP = 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)';

function runOptions(cmd: Command): Command {
  const has = (name: string) => cmd.options.some((o) => o.long === name);
  if (!has('--config')) cmd.option('--config <file>', 'regress config (default ward.yaml, or gait.yaml when only that exists)');
  if (!has('--state-dir')) cmd.option('--state-dir <dir>', STATE_DIR_HELP);
  if (!has('--json')) cmd.option('--json', 'one line of JSON on stdout');
  cmd.option('--progress', PROGRESS_HELP);
  if (!has('--store')) cmd.option('--store <url>', STORE_HELP).option('--store-password-file <file>', STORE_PASSWORD_HELP);
  return cmd
    .option('--output <file>', `result JSON (default ${DEFAULT_RESULT_FILE})`)
    .option('--junit <file>', 'also write JUnit XML')
    .option(
      '--candidate <ref...>',
      'compare fixtures with this run instead of fixture.json candidate_runpack: a runpack, run pack, run id or store id; <fixture>=<ref> targets one fixture',
    )
    .option('--allow-nondeterministic', 'accepted for compatibility; every grader is deterministic')
    .option('--context-conformance', 'enforce context conformance for every fixture (fails fixtures without context evidence)')
    .option('--allow-context-runtime-drift', 'runtime-only context drift (same sources, retrieved at other times) passes');
}

/**
 * Regress errors exit 6, except I/O, lock and timeout problems (1), as in the reference (§5.6).
 * Verification failures of sources and candidates are configuration problems here, not exit 2.
 */
async function guarded(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    if (!isWardError(err)) throw err;
    // The reference also maps messages mentioning a lock or timeout to 1; Ward's errors carry
    // their category, so a YAML error about a "block" mapping stays a config error.
    const exit = err.exitCode === EXIT.INTERNAL ? EXIT.INTERNAL : EXIT.INVALID_INPUT;
    if (exit === err.exitCode) throw err;
    throw new WardError(err.code, err.message, { exitCode: exit, cause: err, ...(err.hint ? { hint: err.hint } : {}), ...(err.details ? { details: err.details } : {}) });
  }
}

async function initFrom(ctx: CliContext, flags: SourceFlags, acceptReceipt: boolean): Promise<{ result: InitResult; source: string }> {
  if (flags.checkpoint !== undefined || /session_chain[^/\\]*\.json$/.test(flags.from)) {
    throw new WardError(ERROR_CODES.USAGE, 'session chains are not supported by Ward: record the run with ward run record and use its runpack');
  }
  let ref = flags.from;
  if (acceptReceipt && ref.endsWith('.json') && existsSync(resolve(ctx.cwd, ref))) {
    const receiptPath = resolve(ctx.cwd, ref);
    const artifact = captureReceiptArtifact(readFileSync(receiptPath, 'utf8'), ref);
    if (artifact === undefined) throw new WardError(ERROR_CODES.USAGE, `${ref} is not a gait.capture.receipt`);
    // The receipt's path as written (relative to the working directory), else beside the receipt.
    const candidates = [resolve(ctx.cwd, artifact), resolve(dirname(receiptPath), artifact)];
    ref = candidates.find((p) => existsSync(p)) ?? artifact;
  }
  const state = stateDir(ctx, flags.stateDir);
  const openStore = storeOpener(ctx, flags, state);
  const located = await locateArtifact(ref, {
    cwd: ctx.cwd,
    stateDir: state,
    kinds: ['runpack', 'pack'],
    fileName: (id) => `runpack_${id}.zip`,
    ...(openStore ? { openStore } : {}),
  });
  const source = runpackOf(located.bytes);
  const result = initFixture({
    cwd: ctx.cwd,
    runpackBytes: source.bytes,
    sourceLabel: flags.from,
    name: flags.name,
    configPath: resolveConfigPath(ctx.cwd, flags.config),
  });
  return { result, source: displayPath(ctx.cwd, located.path) };
}

function replayWarning(exitCode: number): string {
  return `the run has intents without a result that the stub replay cannot stand in for; expected_replay_exit_code is ${exitCode}`;
}

/** `init` and `add` output; `source` only for `add`, as in the reference. */
function printInit(ctx: CliContext, flags: SourceFlags, init: { result: InitResult; source: string }, withSource: boolean): void {
  const r = init.result;
  const next = nextRunCommand(r.config_path);
  const output = {
    ok: true,
    run_id: r.run_id,
    fixture_name: r.fixture_name,
    fixture_dir: r.fixture_dir,
    runpack_path: r.runpack_path,
    config_path: r.config_path,
    source: withSource ? init.source : undefined,
    next_commands: [next],
    warnings: r.meta.expected_replay_exit_code === 0 ? undefined : [replayWarning(r.meta.expected_replay_exit_code)],
  };
  if (flags.json) ctx.stdout(goJsonLine({ ...output, correlation_id: correlationId(ctx.argv) }) + '\n');
  else {
    ctx.stdout(
      [
        `fixture ${r.fixture_name} (run ${r.run_id}) written to ${r.fixture_dir}/ from ${init.source}`,
        `config ${r.config_path} rewritten`,
        `expects tools: ${(r.meta.expected_tool_sequence ?? []).join(', ') || '-'}`,
        `expects verdicts: ${(r.meta.expected_verdict_sequence ?? []).join(', ') || '-'}`,
        ...(r.meta.expected_context_set_digest ? [`expects context: ${r.meta.expected_context_set_digest}`] : []),
        ...(output.warnings ?? []).map((w) => `warning: ${w}`),
        `next: ${next}`,
      ].join('\n') + '\n',
    );
  }
  ctx.exitCode = EXIT.OK;
}

/** `ward regress run --json`, with `--config` when the config is not the default. */
function nextRunCommand(configShown: string): string {
  return configShown === 'ward.yaml' ? 'ward regress run --json' : `ward regress run --config ${configShown} --json`;
}

interface RunOutcome {
  result: RegressResult;
  output: string;
  junit?: string;
  configShown: string;
}

async function runFromConfig(ctx: CliContext, flags: RunFlags): Promise<RunOutcome> {
  const configPath = resolveConfigPath(ctx.cwd, flags.config);
  const configShown = shown(ctx.cwd, configPath);
  const progress = progressOf(ctx, flags, 'regress run');
  let result: RegressResult;
  try {
    progress.stage(`reading ${configShown}`);
    const config = readRegressConfig(configPath, configShown);
    const candidates = await locateCandidates(ctx, flags, config.fixtures.map((f) => f.name));
    // Ward's layout: fixtures/ lives beside the config, so relative runpack paths resolve there
    // (for a config in the working directory this is the reference's layout exactly).
    result = runRegress(config, {
      cwd: dirname(configPath),
      flags: { contextConformance: flags.contextConformance === true, allowContextRuntimeDrift: flags.allowContextRuntimeDrift === true },
      candidates,
      producerVersion: WARD_VERSION,
      onProgress: (stage, done, total) => progress.count(done, total, `fixtures ${stage}`),
    });
  } finally {
    progress.end();
  }
  const output = flags.output ?? DEFAULT_RESULT_FILE;
  writeFileAtomic(resolve(ctx.cwd, output), renderRegressResult(result), 0o600);
  const outcome: RunOutcome = { result, output, configShown };
  if (flags.junit) {
    writeFileAtomic(resolve(ctx.cwd, flags.junit), regressJunit(result), 0o600);
    outcome.junit = flags.junit;
  }
  return outcome;
}

/**
 * `--candidate <ref>` applies to every fixture; `--candidate <fixture>=<ref>` to one (when the
 * whole value is not itself an existing path). Each is located like any artifact; a candidate
 * that cannot be found is a usage error (exit 6).
 */
async function locateCandidates(ctx: CliContext, flags: RunFlags, names: readonly string[]): Promise<Map<string, CandidateArtifact>> {
  const out = new Map<string, CandidateArtifact>();
  for (const value of flags.candidate ?? []) {
    let key = '*';
    let ref = value;
    const eq = value.indexOf('=');
    if (eq > 0 && !existsSync(resolve(ctx.cwd, value))) {
      const name = value.slice(0, eq);
      if (!isValidFixtureName(name) || !names.includes(name)) {
        throw new WardError(ERROR_CODES.USAGE, `--candidate ${value}: no fixture named ${JSON.stringify(name)} (fixtures: ${names.join(', ')})`);
      }
      key = name;
      ref = value.slice(eq + 1);
    }
    if (out.has(key)) throw new WardError(ERROR_CODES.USAGE, key === '*' ? 'give one --candidate for all fixtures, or <fixture>=<ref> for each' : `two --candidate values for fixture ${key}`);
    const state = stateDir(ctx, flags.stateDir);
    const openStore = storeOpener(ctx, flags, state);
    const located = await locateArtifact(ref, {
      cwd: ctx.cwd,
      stateDir: state,
      kinds: ['runpack', 'pack'],
      fileName: (id) => `runpack_${id}.zip`,
      ...(openStore ? { openStore } : {}),
    });
    out.set(key, { display: located.path.startsWith('store:') ? located.path : shown(ctx.cwd, located.path), bytes: located.bytes });
  }
  return out;
}

function printRun(ctx: CliContext, flags: RunFlags, run: RunOutcome, extra: Record<string, string> = {}): void {
  const { result } = run;
  const failed = result.graders.filter((g) => g.status === 'fail');
  const ok = result.status === 'pass';
  const output = {
    ok,
    status: result.status,
    fixture_set: result.fixture_set,
    graders: result.graders.length,
    failed: failed.length,
    top_failure_reason: topFailureReason(result),
    next_command: nextRunCommand(run.configShown),
    artifact_paths: [run.output, ...(run.junit ? [run.junit] : [])],
    output: run.output,
    junit: run.junit,
    ...extra,
  };
  if (flags.json) ctx.stdout(goJsonLine({ ...output, correlation_id: correlationId(ctx.argv) }) + '\n');
  else {
    const lines = [`regress ${result.status}: fixture set ${result.fixture_set}, ${result.graders.length} graders, ${failed.length} failed`];
    for (const g of failed) lines.push(`  FAIL ${g.name}: ${g.reason_codes.join(', ') || 'failed'}`);
    lines.push(`wrote ${output.artifact_paths.join(', ')}`);
    ctx.stdout(lines.join('\n') + '\n');
  }
  ctx.exitCode = ok ? EXIT.OK : EXIT.REGRESS_FAILED;
}

function shown(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel.startsWith('..') || rel === '' ? path : rel.split('\\').join('/');
}

interface ReplayFlags extends StoreLocationFlags {
  policy: string;
  baselinePolicy?: string;
  from: string;
  since?: string;
  until?: string;
  tool?: string;
  verdict?: string;
  runId?: string;
  limit?: string;
  intentContext?: string;
  allowLoosening?: boolean;
  output?: string;
  markdown?: string;
  junit?: string;
  stateDir?: string;
  json?: boolean;
}

/** `ward regress replay`: recorded decisions re-evaluated under a candidate policy. */
function registerReplay(regress: Command, ctx: CliContext): void {
  regress
    .command('replay')
    .description('re-evaluate recorded decisions under a candidate policy: exit 0 nothing got looser, 5 something did, 6 usage')
    .requiredOption('--policy <file>', 'the candidate policy')
    .option('--baseline-policy <file>', 'compare with this policy evaluated the same way (default: the recorded decisions)')
    .requiredOption('--from <source>', 'a traces directory (capture_*.json beside trace_*.json), a capture file, "store", or a runpack / run pack / run id / store id')
    .option('--since <time>', '--from store: decisions at or after this RFC 3339 time')
    .option('--until <time>', '--from store: decisions before this RFC 3339 time')
    .option('--tool <name>', '--from store: only this tool')
    .option('--verdict <verdict>', '--from store: only decisions recorded with this verdict')
    .option('--run-id <id>', '--from store: only this run')
    .option('--limit <n>', '--from store: at most this many captures')
    .option('--intent-context <file>', 'runpacks: the gate context (identity, workspace, risk_class, ...) to evaluate their intents with')
    .option('--allow-loosening', 'report decisions that get looser without failing (exit 0)')
    .option('--output <file>', 'write the report JSON here')
    .option('--markdown <file>', 'write a Markdown summary (for a pull-request comment)')
    .option('--junit <file>', 'write JUnit XML (one testcase per tool)')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'the report as one line of JSON on stdout')
    .option('--store <url>', '--from store (or a store id): a PostgreSQL store (postgres://user@host:5432/db; also WARD_STORE_URL; no password here)')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .action(async (flags: ReplayFlags) =>
      guarded(async () => {
        const candidate = loadPolicyFile(resolve(ctx.cwd, flags.policy));
        const baseline = flags.baselinePolicy ? loadPolicyFile(resolve(ctx.cwd, flags.baselinePolicy)) : undefined;
        const input = await replayInput(ctx, flags);
        // Replaying nothing proves nothing: a CI job pointed at the wrong place must not pass.
        if (input.records.length === 0) {
          const skipped = input.not_replayable;
          throw new WardError(ERROR_CODES.USAGE, `no replayable decisions in ${flags.from}${skipped.length ? ` (${skipped.length} not replayable: ${skipped[0]!.detail})` : ''}`, {
            hint: 'record decisions with ward gate eval --capture-intents (or capture_intents in the proxy, daemon or SDK), then replay their traces directory or --from store',
          });
        }
        const report = replayPolicy(input, { candidate, baseline, allowLoosening: flags.allowLoosening === true });
        const written: string[] = [];
        const write = (file: string | undefined, text: () => string) => {
          if (!file) return;
          writeFileAtomic(resolve(ctx.cwd, file), text(), 0o600);
          written.push(file);
        };
        write(flags.output, () => renderReplayJson(report));
        write(flags.markdown, () => renderReplayMarkdown(report));
        write(flags.junit, () => renderReplayJunit(report));
        const ok = report.status === 'pass';
        if (flags.json) ctx.stdout(goJsonLine({ ok, ...report, correlation_id: correlationId(ctx.argv) }) + '\n');
        else ctx.stdout(replayText(report, written));
        ctx.exitCode = ok ? EXIT.OK : EXIT.REGRESS_FAILED;
      }),
    );
}

const STORE_FLAGS = ['since', 'until', 'tool', 'verdict', 'runId', 'limit'] as const;

async function replayInput(ctx: CliContext, flags: ReplayFlags): Promise<ReplayInput> {
  const storeFlags = STORE_FLAGS.filter((f) => flags[f] !== undefined);
  if (flags.from === 'store') {
    for (const key of ['since', 'until'] as const) if (flags[key] !== undefined) parseEvaluationTimeFlag(flags[key]!, `--${key}`);
    const limit = flags.limit === undefined ? undefined : Number(flags.limit);
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit <= 0)) throw new WardError(ERROR_CODES.USAGE, '--limit must be a positive integer');
    const state = stateDir(ctx, flags.stateDir);
    return recordsFromStore(state, { since: flags.since, until: flags.until, tool_name: flags.tool, verdict: flags.verdict, run_id: flags.runId, limit }, storeOpener(ctx, flags, state));
  }
  if (storeFlags.length > 0) {
    throw new WardError(ERROR_CODES.USAGE, `--${storeFlags[0]!.replace('runId', 'run-id')} filters --from store only`, { hint: 'use --from store, or drop the filter' });
  }
  const path = resolve(ctx.cwd, flags.from);
  if (existsSync(path) && statSync(path).isDirectory()) return recordsFromTraceDir(path);
  if (flags.from.endsWith('.json') && existsSync(path)) {
    const r = recordFromCapture(readFileSync(path), shown(ctx.cwd, path));
    if ('reason_code' in r) throw new WardError(ERROR_CODES.USAGE, `${flags.from}: ${r.detail}`);
    return { records: [r], not_replayable: [] };
  }
  const state = stateDir(ctx, flags.stateDir);
  const openStore = storeOpener(ctx, flags, state);
  const located = await locateArtifact(flags.from, {
    cwd: ctx.cwd,
    stateDir: state,
    kinds: ['runpack', 'pack'],
    fileName: (id) => `runpack_${id}.zip`,
    ...(openStore ? { openStore } : {}),
  });
  let intentContext: JsonObject | undefined;
  if (flags.intentContext) {
    const value = parseJsonInput(await readInputText(ctx, flags.intentContext, 'intent context'), 'parse intent context');
    if (!isJsonObject(value)) throw new WardError(ERROR_CODES.USAGE, '--intent-context must be a JSON object (the intent request context)');
    intentContext = value;
  }
  const source = located.path.startsWith('store:') ? located.path : shown(ctx.cwd, located.path);
  return recordsFromRunpack(located.bytes, source, intentContext);
}

function parseEvaluationTimeFlag(text: string, flag: string): void {
  try {
    parseRFC3339(text);
  } catch {
    throw new WardError(ERROR_CODES.USAGE, `invalid ${flag}: ${text}`, { hint: 'use RFC 3339, e.g. 2026-03-12T12:00:00Z' });
  }
}

function replayText(report: ReplayReport, written: readonly string[]): string {
  const s = report.summary;
  const lines = [
    `policy replay ${report.status}: ${s.replayed} replayed, ${s.loosened} loosened, ${s.tightened} tightened, ${s.verdict_changed} other verdict changes, ${s.reasons_changed} reason changes, ${s.error} errors, ${s.not_replayable} not replayable`,
  ];
  for (const e of report.changes.filter((c) => c.change === 'policy_loosened').slice(0, 20)) {
    lines.push(`  LOOSER ${e.tool_name} ${e.baseline.verdict} -> ${e.candidate.verdict} (rule ${e.candidate.matched_rule || '(default)'}) ${e.source}`);
  }
  if (s.loosened > 20) lines.push(`  ... ${s.loosened - 20} more`);
  for (const n of report.not_replayable.slice(0, 10)) lines.push(`  SKIPPED ${n.tool_name || '?'} ${n.source}: ${n.detail}`);
  if (report.not_replayable.length > 10) lines.push(`  ... ${report.not_replayable.length - 10} more not replayable (see --json)`);
  if (report.status === 'fail') lines.push('fail: decisions get looser under the candidate policy (pass --allow-loosening to accept)');
  if (written.length > 0) lines.push(`wrote ${written.join(', ')}`);
  return lines.join('\n') + '\n';
}
