import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Option, type Command } from 'commander';
import { formatRFC3339Nano, nowUTC } from '../../canon/index.js';
import { EXIT, type ExitCode } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError, isWardError } from '../../errors.js';
import { defaultKeyPaths, readPrivateKeyFile } from '../../keys/index.js';
import { policyCheck, type PolicyFinding } from '../../policy/findings.js';
import { loadPolicyFile, parsePolicyYaml } from '../../policy/load.js';
import type { LoadedPolicy } from '../../policy/types.js';
import { WARD_VERSION } from '../../version.js';
import { describeStateDir, STATE_DIR_NAME, type StateDirResolution } from '../../state/state-dir.js';
import { stateDirResolution, wardInvocation, type CliContext } from '../context.js';
import { goJsonLine } from '../output.js';
import { PROGRESS_HELP, progressOf, type ProgressFlags } from '../progress.js';
import type { PgConnectionConfig, StoreLocation } from '../../pg/config.js';
import { storeLocationOf, type StoreLocationFlags } from '../store-access.js';
import { createFileExclusive, writeFileAtomic } from '../../state/atomic-file.js';
import type { JsonObject } from '../../canon/index.js';
import { nodeCommand, WARD_BIN } from '../../decision/approval-command.js';
import { AGENT_SETUPS, AGENTS, DEFAULT_DAEMON_URL, HOOK_TRANSPORTS, readSettings, type Agent, type AgentSetup, type HookTransport } from '../agent-config.js';

/** The package root (holds `policies/`, `dist/`, and in a checkout `src/`). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const POLICY_FILE = '.ward.yaml';
export const TEMPLATES = ['baseline-lowrisk', 'baseline-mediumrisk', 'baseline-highrisk'] as const;
export type Template = (typeof TEMPLATES)[number];
/** The starter policy `ward init --agent` writes when no --template is given. */
const AGENT_TEMPLATE: Template = 'baseline-lowrisk';
const MIN_NODE = [20, 19] as const;
/** This installation's bin/ward.js, links resolved: what a hook command names. */
const WARD_BIN_REAL = (() => {
  try {
    return realpathSync(WARD_BIN);
  } catch {
    return WARD_BIN;
  }
})();

export function register(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description(`write ${POLICY_FILE} from a shipped baseline policy (default baseline-highrisk)`)
    .addOption(new Option('--template <name>', 'baseline policy to start from').choices(TEMPLATES).default('baseline-highrisk'))
    .option('--force', `replace an existing ${POLICY_FILE}`)
    .addOption(new Option('--agent <host>', "also register Ward's hook in a coding agent's project settings (keeps an existing policy; safe to re-run)").choices(AGENTS))
    .addOption(new Option('--hook <transport>', 'with --agent: command (a process per call, no daemon needed) or http (against ward serve)').choices(HOOK_TRANSPORTS).default('command'))
    .option('--daemon-url <url>', 'with --hook http: where ward serve listens', DEFAULT_DAEMON_URL)
    .option('--dry-run', 'with --agent: print what would be written, write nothing')
    .option('--json', 'one line of JSON on stdout')
    .action((flags: InitFlags, command: Command) => {
      if (!flags.agent) return init(ctx, flags);
      // A coding agent runs shell commands and edits files all day: its starter policy asks before
      // commands and guards files and network (baseline-lowrisk); high-risk blocks every command.
      const template = command.getOptionValueSource('template') === 'default' ? AGENT_TEMPLATE : flags.template;
      initAgent(ctx, { ...flags, template, agent: flags.agent });
    });

  program
    .command('check')
    .description('validate a policy and report its contract, rules, default verdict and findings')
    .option('--policy <file>', 'policy to check', POLICY_FILE)
    .option('--json', 'one line of JSON on stdout')
    .action((flags: { policy: string; json?: boolean }) => check(ctx, flags));

  program
    .command('doctor')
    .description('check Node, the state directory, key permissions, the store and the build; print a fix for each problem')
    .option('--state-dir <dir>', 'Ward state directory to check (default: $WARD_STATE_DIR, the nearest .ward/ upwards, .ward/ beside --policy, ~/.local/state/ward)')
    .option('--json', 'one line of JSON on stdout (gait.doctor.result)')
    .option('--progress', PROGRESS_HELP)
    .option('--store <url>', 'check this PostgreSQL store (reachable, schema version) instead of the local one (also WARD_STORE_URL; no password here)')
    .option('--store-password-file <file>', 'file holding the PostgreSQL password (also WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .action(async (flags: { stateDir?: string } & ProgressFlags & StoreLocationFlags) => {
      const progress = progressOf(ctx, flags, 'doctor');
      progress.stage('checking Node and the state directory');
      // A store location that does not parse is a finding of the store check, not a crash.
      let storeLocation: StoreLocation | { error: string; hint?: string | undefined };
      try {
        storeLocation = storeLocationOf(ctx, flags);
      } catch (err) {
        if (!isWardError(err)) throw err;
        storeLocation = { error: err.message, hint: err.hint };
      }
      let state: StateDirResolution | { error: string; hint?: string | undefined };
      try {
        state = stateDirResolution(ctx, flags.stateDir);
      } catch (err) {
        if (!isWardError(err)) throw err;
        state = { error: err.message, hint: err.hint };
      }
      let result: DoctorResult;
      try {
        result = await runDoctor({ cwd: ctx.cwd, state, invocation: wardInvocation(ctx), storeLocation, onStage: (text) => progress.stage(text) });
      } finally {
        progress.end();
      }
      ctx.exitCode = doctorExitCode(result);
      ctx.stdout(flags.json ? goJsonLine(result) + '\n' : renderDoctor(result));
    });
}

// ---------------------------------------------------------------------------------------------
// init

interface InitFlags {
  template: Template;
  force?: boolean;
  json?: boolean;
  agent?: Agent;
  hook: HookTransport;
  daemonUrl: string;
  dryRun?: boolean;
}

/**
 * `ward init --agent <host>`: the project's policy (kept when there is one), `.ward/`, and Ward's
 * hook in the host's project settings file (its `AgentSetup.settingsPath`), merged with the
 * settings already there. Re-running it with the same flags changes nothing; `--dry-run`
 * prints the settings instead of writing.
 */
function initAgent(ctx: CliContext, flags: InitFlags & { agent: Agent }): void {
  const ward = wardInvocation(ctx);
  const setup = AGENT_SETUPS[flags.agent];
  if (!setup.transports.includes(flags.hook)) {
    throw new WardError(ERROR_CODES.USAGE, `--hook ${flags.hook} is not available for ${setup.label}`, {
      hint: `use --hook ${setup.transports.join(' or ')} (${setup.doc} says why)`,
    });
  }
  const policyPath = resolve(ctx.cwd, POLICY_FILE);
  const policyExisted = existsSync(policyPath);
  const settingsPath = resolve(ctx.cwd, setup.settingsPath);
  let current: JsonObject | undefined;
  try {
    current = readSettings(ctx.cwd, setup.settingsPath);
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `${setup.settingsPath}: ${(err as Error).message}`, {
      hint: `fix or move ${setup.settingsPath}; Ward merges its hook into the settings there and never replaces a file it cannot read`,
    });
  }
  const settings = setup.withHook(current ?? {}, {
    transport: flags.hook,
    command: { node: nodeCommand(ctx.env), wardBin: WARD_BIN_REAL },
    daemonUrl: flags.daemonUrl,
    projectDir: resolve(ctx.cwd),
  });
  const settingsText = `${JSON.stringify(settings, null, 2)}\n`;
  const settingsChanged = !current || readFileSync(settingsPath, 'utf8') !== settingsText;
  const policyAction = policyExisted && !flags.force ? 'kept' : flags.dryRun ? 'would write' : policyExisted ? 'replaced' : 'written';
  const settingsAction = !settingsChanged ? 'unchanged' : flags.dryRun ? 'would write' : current ? 'updated' : 'written';
  if (!flags.dryRun) {
    if (policyAction !== 'kept') writeFileAtomic(policyPath, readFileSync(join(PACKAGE_ROOT, 'policies', `${flags.template}.yaml`), 'utf8'), 0o644);
    createProjectStateDir(ctx.cwd);
    if (settingsChanged) {
      mkdirSync(dirname(settingsPath), { recursive: true });
      writeFileAtomic(settingsPath, settingsText, 0o644);
    }
  }
  const next = [`${ward} doctor`, `${ward} check`, ...(flags.hook === 'http' ? [`${ward} serve --policy ${POLICY_FILE} --auth-token-env WARD_DAEMON_TOKEN`] : [])];
  const files = [
    { path: POLICY_FILE, action: policyAction },
    { path: setup.settingsPath, action: settingsAction },
  ];
  if (flags.json) {
    ctx.stdout(goJsonLine({ ok: true, agent: flags.agent, hook: flags.hook, dry_run: flags.dryRun === true, files, ...(flags.dryRun ? { settings } : {}), notes: setup.notes ?? [], next_commands: next }) + '\n');
    return;
  }
  const lines = files.map((f) => `${f.action} ${f.path}`);
  if (flags.dryRun) lines.push(`${setup.settingsPath} would be:`, settingsText.trimEnd());
  if (flags.hook === 'http') lines.push(`the HTTP hook needs ward serve running and WARD_DAEMON_TOKEN exported where ${setup.label} runs (${setup.doc})`);
  lines.push(...(setup.notes ?? []));
  ctx.stdout(`${lines.join('\n')}\nnext:\n${next.map((c) => `  ${c}\n`).join('')}`);
}

function init(ctx: CliContext, flags: InitFlags): void {
  const ward = wardInvocation(ctx);
  const path = resolve(ctx.cwd, POLICY_FILE);
  const existed = existsSync(path);
  if (existed && !flags.force) {
    throw new WardError(ERROR_CODES.USAGE, `${POLICY_FILE} already exists in ${ctx.cwd}; not overwriting it`, {
      hint: `check it with: ${ward} check — or replace it with: ${ward} init --template ${flags.template} --force`,
    });
  }
  const text = readFileSync(join(PACKAGE_ROOT, 'policies', `${flags.template}.yaml`), 'utf8');
  const policy = parsePolicyYaml(text);
  writeFileAtomic(path, text, 0o644);
  const stateCreated = createProjectStateDir(ctx.cwd);
  const next = [`${ward} check`, `${ward} doctor`, `${ward} gate eval --policy ${POLICY_FILE} --intent <intent.json>`];
  if (flags.json) {
    ctx.stdout(
      goJsonLine({
        ok: true,
        policy_path: POLICY_FILE,
        template: flags.template,
        overwritten: existed,
        default_verdict: policy.policy.default_verdict,
        rule_count: policy.policy.rules.length,
        policy_digest: policy.digest,
        state_dir: STATE_DIR_NAME,
        state_dir_created: stateCreated,
        next_commands: next,
      }) + '\n',
    );
    return;
  }
  ctx.stdout(
    `${existed ? 'replaced' : 'wrote'} ${POLICY_FILE} from ${flags.template}: ${policy.policy.rules.length} rules, default verdict ${policy.policy.default_verdict}\n` +
      `${stateCreated ? 'created' : 'kept'} ${STATE_DIR_NAME}/: this project's state (signing key, traces, approvals), used from here and every subdirectory\n` +
      `next:\n${next.map((c) => `  ${c}\n`).join('')}`,
  );
}

/**
 * `.ward/` in the project (mode 0700), found from every subdirectory, with a `.gitignore` that
 * keeps its contents (the private signing key among them) out of version control.
 * Returns whether it was created now.
 */
export function createProjectStateDir(projectDir: string): boolean {
  const dir = join(projectDir, STATE_DIR_NAME);
  const created = !existsSync(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ignore = join(dir, '.gitignore');
  if (!existsSync(ignore)) createFileExclusive(ignore, '# Ward state: signing keys, traces, approvals. Never commit it.\n*\n', 0o644);
  return created;
}

// ---------------------------------------------------------------------------------------------
// check

function check(ctx: CliContext, flags: { policy: string; json?: boolean }): void {
  const ward = wardInvocation(ctx);
  const path = resolve(ctx.cwd, flags.policy);
  if (!existsSync(path)) {
    throw new WardError(ERROR_CODES.USAGE, `no policy at ${path}`, {
      hint: flags.policy === POLICY_FILE ? `create one with: ${ward} init` : `check the path, or create ${POLICY_FILE} with: ${ward} init`,
    });
  }
  let policy: LoadedPolicy;
  try {
    policy = loadPolicyFile(path);
  } catch (err) {
    if (isWardError(err)) {
      const fix = `fix ${flags.policy} and run ${ward} check again (every key is described in docs/policies.md)`;
      throw new WardError(err.code, err.message, {
        exitCode: err.exitCode,
        cause: err,
        ...(err.details ? { details: err.details } : {}),
        hint: err.hint ? `${err.hint}; ${fix}` : fix,
      });
    }
    throw err;
  }
  const { findings, gap_warnings: gaps } = policyCheck(policy.policy, readFileSync(path, 'utf8'));
  const p = policy.policy;
  const summary = `check: rules=${p.rules.length} default_verdict=${p.default_verdict} findings=${findings.length} gap_warnings=${gaps.length}`;
  const next = [`${ward} gate eval --policy ${flags.policy} --intent <intent.json>`, `${ward} policy test --help`];
  if (flags.json) {
    ctx.stdout(
      goJsonLine({
        ok: true,
        policy_path: flags.policy,
        contract: { schema_id: p.schema_id, schema_version: p.schema_version, policy_digest: policy.digest },
        default_verdict: p.default_verdict,
        rule_count: p.rules.length,
        findings,
        gap_warnings: gaps,
        next_commands: next,
        summary,
      }) + '\n',
    );
    return;
  }
  const lines = [
    `policy: ${flags.policy}`,
    `contract: ${p.schema_id} ${p.schema_version} (policy_digest ${policy.digest.slice(0, 16)}…)`,
    `rules: ${p.rules.length}, default verdict: ${p.default_verdict}`,
  ];
  lines.push(findings.length ? `findings (${findings.length}):` : 'findings: none');
  for (const f of findings) lines.push(...renderFinding(f));
  if (gaps.length) {
    lines.push(`gap warnings (${gaps.length}):`);
    for (const g of gaps) lines.push(`  ${g.code}: ${g.message}`, `    fix: ${g.fix}`);
  }
  lines.push(summary, 'next:', ...next.map((c) => `  ${c}`));
  ctx.stdout(lines.join('\n') + '\n');
}

function renderFinding(f: PolicyFinding): string[] {
  return [`  ${f.kind}: ${f.message}`, `    fix: ${f.fix}`];
}

// ---------------------------------------------------------------------------------------------
// doctor (cli.md §7.5; result gait.doctor.result 1.0.0)

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface DoctorCheck {
  name: string;
  scope: 'universal' | 'repo_checkout';
  status: CheckStatus;
  message: string;
  fix_command?: string;
  non_fixable?: boolean;
}

export interface DoctorResult {
  schema_id: 'gait.doctor.result';
  schema_version: '1.0.0';
  created_at: string;
  producer_version: string;
  onboarding_mode: 'installed_binary' | 'repo_checkout';
  /** Ward's addition to the reference's result: no check failed (warnings allowed), as every other `--json` output says it. */
  ok: boolean;
  status: CheckStatus;
  non_fixable: boolean;
  summary: string;
  fix_commands: string[];
  checks: DoctorCheck[];
  /** The state directory checked, how it was chosen (flag, env, found, policy, user) and why. */
  state_dir?: string;
  state_dir_source?: StateDirResolution['source'];
  state_dir_reason?: string;
}

export interface DoctorOptions {
  cwd: string;
  /** The state directory to check (tests); `state` says how it was chosen. */
  stateDir?: string;
  /** How the CLI resolved the state directory, or why it could not. */
  state?: StateDirResolution | { error: string; hint?: string | undefined };
  /** `ward` or `node bin/ward.js`, for fix commands. */
  invocation?: string;
  /** Default: this process's Node version. */
  nodeVersion?: string;
  /** Default: the package Ward runs from. */
  packageRoot?: string;
  /** The store to check: the local one (default), a PostgreSQL store, or why `--store` / WARD_STORE_URL is unusable. */
  storeLocation?: StoreLocation | { error: string; hint?: string | undefined };
  /** Told before a check that can take long begins (the CLI's progress on stderr). */
  onStage?: (text: string) => void;
}

export async function runDoctor(opts: DoctorOptions): Promise<DoctorResult> {
  const ward = opts.invocation ?? 'ward';
  const root = opts.packageRoot ?? PACKAGE_ROOT;
  const checkout = existsSync(join(root, 'src')) && existsSync(join(root, 'tsconfig.json'));
  const state = opts.state && 'error' in opts.state ? opts.state : undefined;
  const resolved: StateDirResolution | undefined =
    opts.state && !('error' in opts.state) ? opts.state : opts.stateDir !== undefined ? { dir: resolve(opts.cwd, opts.stateDir), source: 'flag', reason: 'given' } : undefined;
  const checks: DoctorCheck[] = [nodeVersionCheck(opts.nodeVersion ?? process.versions.node)];
  if (resolved) {
    const dir = resolved.dir;
    const location = opts.storeLocation;
    // Opening the store (or reaching a PostgreSQL server) is the check that can take long.
    opts.onStage?.('checking the store');
    const store: DoctorCheck =
      location && 'error' in location
        ? { name: 'store', scope: 'universal', status: 'fail', message: location.error, ...(location.hint ? { fix_command: location.hint } : {}) }
        : location?.kind === 'postgres'
          ? await pgStoreCheck(location.config, ward)
          : await storeCheck(dir, ward);
    checks.push(stateDirCheck(resolved, ward), keyCheck(dir, ward), store, rateLimitLockCheck(dir));
  } else {
    checks.push({
      name: 'state_dir',
      scope: 'universal',
      status: 'fail',
      message: state?.error ?? 'no state directory',
      fix_command: `${ward} init   (creates .ward/ here), or pass --state-dir /absolute/path/.ward (or set WARD_STATE_DIR)`,
    });
  }
  checks.push(tempDirCheck(), policyFileCheck(opts.cwd, ward), ...agentHookChecks(opts.cwd, ward));
  if (checkout) checks.push(buildCheck(root));
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  const nonFixable = checks.some((c) => c.non_fixable === true);
  const status: CheckStatus = failed ? 'fail' : warned ? 'warn' : 'pass';
  const mode = checkout ? 'repo_checkout' : 'installed_binary';
  return {
    schema_id: 'gait.doctor.result',
    schema_version: '1.0.0',
    created_at: formatRFC3339Nano(nowUTC()),
    producer_version: WARD_VERSION,
    onboarding_mode: mode,
    ok: status !== 'fail',
    status,
    non_fixable: nonFixable,
    summary: `doctor: onboarding_mode=${mode} status=${status} failed=${failed} warned=${warned} non_fixable=${nonFixable}`,
    ...(resolved ? { state_dir: resolved.dir, state_dir_source: resolved.source, state_dir_reason: resolved.reason } : {}),
    fix_commands: [...new Set(checks.flatMap((c) => (c.fix_command ? [c.fix_command] : [])))].sort(),
    checks,
  };
}

/** 7 when something needs more than a command Ward can suggest (cli.md §7.5); warn and fail are otherwise 0. */
export function doctorExitCode(result: DoctorResult): ExitCode {
  return result.non_fixable ? EXIT.DEPENDENCY_MISSING : EXIT.OK;
}

export function nodeVersionCheck(version: string): DoctorCheck {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  const need = `${MIN_NODE[0]}.${MIN_NODE[1]}`;
  if (ok) return { name: 'node_version', scope: 'universal', status: 'pass', message: `Node.js ${version} (needs ${need} or newer)` };
  return {
    name: 'node_version',
    scope: 'universal',
    status: 'fail',
    message: `Node.js ${version} is too old: Ward needs ${need} or newer`,
    fix_command: `install Node.js ${need} or newer (https://nodejs.org), then run npm ci`,
    non_fixable: true,
  };
}

function stateDirCheck(state: StateDirResolution, ward: string): DoctorCheck {
  const base = { name: 'state_dir', scope: 'universal' as const };
  const dir = state.dir;
  const which = describeStateDir(state);
  const shared =
    state.source === 'user' ? `; every project without its own ${STATE_DIR_NAME}/ shares it (${ward} init in a project gives it one)` : '';
  let st;
  try {
    st = statSync(dir);
  } catch {
    return { ...base, status: 'pass', message: `${which} does not exist yet; Ward creates it on first use (or now: ${ward} keys init)${shared}` };
  }
  if (!st.isDirectory()) {
    return { ...base, status: 'fail', message: `${which} is not a directory`, fix_command: `mv ${dir} ${dir}.bak` };
  }
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    return { ...base, status: 'fail', message: `${which} is not writable by this user`, fix_command: `chmod u+rwx ${dir}` };
  }
  if (process.platform !== 'win32' && (st.mode & 0o022) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
    return { ...base, status: 'warn', message: `${which} is writable by group or others (mode ${mode})`, fix_command: `chmod go-w ${dir}` };
  }
  return { ...base, status: 'pass', message: `${which} is writable${shared}` };
}

function keyCheck(dir: string, ward: string): DoctorCheck {
  const base = { name: 'key_permissions', scope: 'universal' as const };
  const paths = defaultKeyPaths(dir);
  if (!existsSync(paths.privateKey)) {
    return { ...base, status: 'pass', message: `no signing key yet; Ward creates ${paths.privateKey} (0600) on first use` };
  }
  try {
    const key = readPrivateKeyFile(paths.privateKey);
    return { ...base, status: 'pass', message: `${paths.privateKey} is private (0600), key_id ${key.keyId.slice(0, 16)}…` };
  } catch (err) {
    if (isWardError(err) && err.code === ERROR_CODES.KEY_PERMISSIONS) {
      return { ...base, status: 'fail', message: err.message.replace(/; run: .*$/, ''), fix_command: `chmod 600 ${paths.privateKey}` };
    }
    return {
      ...base,
      status: 'fail',
      message: `${paths.privateKey} is not a usable key: ${(err as Error).message}`,
      fix_command: `mv ${paths.privateKey} ${paths.privateKey}.broken && ${ward} keys init`,
    };
  }
}

/**
 * Open the store only when nobody owns it: a running owner (daemon, store command) is reported
 * as "in use by pid N", never disturbed. A free store is opened, counted and closed.
 */
async function storeCheck(dir: string, ward: string): Promise<DoctorCheck> {
  const base = { name: 'store', scope: 'universal' as const };
  const { storePaths, openLevelStore } = await import('../../store/index.js');
  const paths = storePaths(dir);
  if (!existsSync(paths.db)) return { ...base, status: 'pass', message: 'no evidence store yet (created by ward store commands)' };
  const holder = readLockHolder(paths.lock);
  if (holder && holderRunning(holder.pid)) {
    return { ...base, status: 'pass', message: `${paths.root} is in use by pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}; not opened` };
  }
  try {
    const store = await openLevelStore(dir);
    try {
      const n = await store.count();
      return { ...base, status: 'pass', message: `${paths.root} opens cleanly (${n} entries)` };
    } finally {
      await store.close();
    }
  } catch (err) {
    if (isWardError(err) && err.code === ERROR_CODES.STORE_LOCKED) {
      const pid = /pid (\d+)/.exec(err.message)?.[1];
      return { ...base, status: 'pass', message: `${paths.root} is in use${pid ? ` by pid ${pid}` : ''}; not opened` };
    }
    return {
      ...base,
      status: 'fail',
      message: `${paths.root} does not open: ${(err as Error).message}`,
      fix_command: `mv ${paths.root} ${paths.root}.broken && ${ward} store ingest`,
    };
  }
}

/**
 * A PostgreSQL store: reachable, and its schema exactly the version this Ward needs. Only the
 * URL without its password (`display`) is ever printed.
 */
async function pgStoreCheck(config: PgConnectionConfig, ward: string): Promise<DoctorCheck> {
  const base = { name: 'store', scope: 'universal' as const };
  const { PgPool, schemaStatus } = await import('../../pg/index.js');
  const db = new PgPool(config, { max: 1, acquireTimeoutMs: 5000, applicationName: 'ward-doctor' });
  try {
    const status = await schemaStatus(db);
    const count = status.version > 0 ? Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM ward_store_entries")).rows[0]?.n ?? 0) : 0;
    const where = `PostgreSQL store ${config.display}`;
    if (status.version === status.latest) return { ...base, status: 'pass', message: `${where}: schema version ${status.version} (${count} entries)` };
    if (status.version > status.latest) {
      return { ...base, status: 'fail', non_fixable: true, message: `${where}: schema version ${status.version} is newer than this Ward knows (${status.latest}); upgrade Ward` };
    }
    return {
      ...base,
      status: 'fail',
      message: `${where}: schema version ${status.version}, this Ward needs ${status.latest}`,
      fix_command: `${ward} store migrate --store ${config.display}`,
    };
  } catch (err) {
    return { ...base, status: 'fail', message: `PostgreSQL store ${config.display} is unreachable: ${(err as Error).message}`, fix_command: `check that PostgreSQL at ${config.display} is running and reachable, and the password (PGPASSWORD, --store-password-file, ~/.pgpass)` };
  } finally {
    await db.close();
  }
}

function readLockHolder(path: string): { pid: number; host: string } | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; host?: unknown };
    return typeof v.pid === 'number' ? { pid: v.pid, host: typeof v.host === 'string' ? v.host : '' } : undefined;
  } catch {
    return undefined;
  }
}

function holderRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A rate-limit lock older than the 15 s staleness bound was left by a crashed process. */
function rateLimitLockCheck(dir: string): DoctorCheck {
  const base = { name: 'gate_rate_limit_lock', scope: 'universal' as const };
  const lock = join(dir, 'gate_rate_limits.json.lock');
  let age: number;
  try {
    age = (Date.now() - statSync(lock).mtimeMs) / 1000;
  } catch {
    return { ...base, status: 'pass', message: 'no rate-limit lock held' };
  }
  if (age > 15) {
    return { ...base, status: 'warn', message: `${lock} is ${Math.round(age)}s old (stale; gate eval breaks it after 15s)`, fix_command: `rm ${lock}` };
  }
  return { ...base, status: 'pass', message: 'rate-limit lock held by a running decision' };
}

function tempDirCheck(): DoctorCheck {
  const base = { name: 'temp_dir', scope: 'universal' as const };
  try {
    rmSync(mkdtempSync(join(tmpdir(), 'ward-doctor-')), { recursive: true, force: true });
    return { ...base, status: 'pass', message: `${tmpdir()} is writable` };
  } catch (err) {
    return { ...base, status: 'fail', message: `${tmpdir()} is not writable: ${(err as Error).message}`, fix_command: 'export TMPDIR=<a writable directory>' };
  }
}

function policyFileCheck(cwd: string, ward: string): DoctorCheck {
  const base = { name: 'policy_file', scope: 'universal' as const };
  const path = join(cwd, POLICY_FILE);
  if (!existsSync(path)) return { ...base, status: 'warn', message: `no ${POLICY_FILE} in ${cwd}`, fix_command: `${ward} init` };
  try {
    const p = loadPolicyFile(path);
    return { ...base, status: 'pass', message: `${POLICY_FILE} is valid (${p.policy.rules.length} rules, default ${p.policy.default_verdict})` };
  } catch (err) {
    return { ...base, status: 'fail', message: `${POLICY_FILE} is invalid: ${(err as Error).message}`, fix_command: `${ward} check` };
  }
}

/** Ward's hook in each coding agent's project settings, for the agents the project has settings for. */
function agentHookChecks(cwd: string, ward: string): DoctorCheck[] {
  return Object.values(AGENT_SETUPS).flatMap((setup) => agentHookCheck(cwd, ward, setup));
}

function agentHookCheck(cwd: string, ward: string, setup: AgentSetup): DoctorCheck[] {
  const base = { name: setup.doctorCheck, scope: 'universal' as const };
  let settings: JsonObject | undefined;
  try {
    settings = readSettings(cwd, setup.settingsPath);
  } catch (err) {
    return [{ ...base, status: 'fail', message: `${setup.settingsPath} cannot be read: ${(err as Error).message}`, non_fixable: true }];
  }
  if (!settings) return [];
  const problems = setup.problems(settings);
  if (problems.length === 0) return [{ ...base, status: 'pass', message: `${setup.settingsPath} runs Ward's hook on every tool call and fails closed` }];
  return [{ ...base, status: 'fail', message: `${setup.settingsPath}: ${problems.join('; ')}`, fix_command: `${ward} init --agent ${setup.agent}` }];
}

/** In a checkout, the CLI runs from dist/: it must exist and be newer than every source file. */
export function buildCheck(root: string): DoctorCheck {
  const base = { name: 'build', scope: 'repo_checkout' as const };
  const entry = join(root, 'dist', 'index.js');
  if (!existsSync(entry)) return { ...base, status: 'fail', message: 'dist/ is not built', fix_command: 'npm run build' };
  const built = statSync(entry).mtimeMs;
  const stale = newestSource(join(root, 'src'));
  if (stale && stale.mtime > built) {
    return { ...base, status: 'warn', message: `dist/ is older than ${relative(root, stale.path)}`, fix_command: 'npm run build' };
  }
  return { ...base, status: 'pass', message: 'dist/ is built and current' };
}

function newestSource(dir: string): { path: string; mtime: number } | undefined {
  let best: { path: string; mtime: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const mtime = statSync(path).mtimeMs;
    if (!best || mtime > best.mtime) best = { path, mtime };
  }
  return best;
}

function renderDoctor(r: DoctorResult): string {
  const mark: Record<CheckStatus, string> = { pass: 'ok  ', warn: 'warn', fail: 'FAIL' };
  const width = Math.max(...r.checks.map((c) => c.name.length));
  const lines = [`ward doctor (${r.onboarding_mode})`];
  for (const c of r.checks) {
    lines.push(`  ${mark[c.status]}  ${c.name.padEnd(width)}  ${c.message}`);
    if (c.fix_command) lines.push(`        ${''.padEnd(width)}  fix: ${c.fix_command}${c.non_fixable ? ' (Ward cannot do this for you)' : ''}`);
  }
  lines.push(r.summary);
  return lines.join('\n') + '\n';
}
