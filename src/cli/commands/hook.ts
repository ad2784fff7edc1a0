import { Command, Option } from 'commander';
import { EXIT } from '../../contract/exit-codes.js';
import { loadServiceConfig, sharedServiceFlags } from '../../decision-service/config.js';
import { evaluateDecision, type DecisionResult } from '../../decision-service/evaluate.js';
import { HOOK_HOSTS, hookHost, type HookHost, type HookReply } from '../../agent-hooks/index.js';
import { STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';

/** `ward hook <host>` flags (every host takes the same). */
export interface HookFlags {
  policy?: string;
  contextEnvelope?: string;
  profile?: string;
  jobRoot?: string;
  killSwitchState?: string;
  exportLogOut?: string;
  exportOtelOut?: string;
  keyMode?: string;
  privateKey?: string;
  privateKeyEnv?: string;
  identity?: string;
  riskClass?: string;
  argSource?: string;
  stateDir?: string;
  /** `--otel` (no value): export the decision over OTLP (docs/observability.md "The command hook"). */
  otel?: string;
}

interface HookOptionSpec {
  flag: string;
  key: keyof HookFlags;
  value: string;
  help: string;
  choices?: readonly string[];
  default?: string;
  /** A switch: takes no value. */
  flagOnly?: true;
}

/** The options of `ward hook <host>`; every one takes a value but the switches (`flagOnly`). */
const HOOK_OPTIONS: readonly HookOptionSpec[] = [
  { flag: '--policy', key: 'policy', value: 'file', help: 'policy YAML (required)' },
  { flag: '--context-envelope', key: 'contextEnvelope', value: 'file', help: 'verified context envelope bound to every call' },
  { flag: '--profile', key: 'profile', value: 'profile', help: 'evaluation profile', choices: ['standard', 'oss-prod'], default: 'standard' },
  { flag: '--identity', key: 'identity', value: 'id', help: "context.identity of the calls (default the host's name: claude-code, gemini-cli, codex, copilot)" },
  { flag: '--risk-class', key: 'riskClass', value: 'class', help: 'context.risk_class of the calls (default high)' },
  {
    flag: '--arg-source',
    key: 'argSource',
    value: 'source',
    help: "provenance of the model's arguments, as the MCP proxy's --arg-source",
    choices: ['tool_output', 'user', 'external', 'system'],
    default: 'tool_output',
  },
  { flag: '--job-root', key: 'jobRoot', value: 'dir', help: 'job runtime consulted for emergency stops (default .ward/jobs)' },
  { flag: '--kill-switch-state', key: 'killSwitchState', value: 'file', help: 'kill-switch state JSON' },
  { flag: '--export-log-out', key: 'exportLogOut', value: 'file', help: 'append one JSON decision event per call (locked JSONL)' },
  { flag: '--export-otel-out', key: 'exportOtelOut', value: 'file', help: 'append one OpenTelemetry-style log record per call (locked JSONL)' },
  {
    flag: '--key-mode',
    key: 'keyMode',
    value: 'mode',
    help: 'signing key: default (.ward/keys), dev (ephemeral) or prod (explicit key)',
    choices: ['default', 'dev', 'prod'],
    default: 'default',
  },
  { flag: '--private-key', key: 'privateKey', value: 'file', help: 'trace signing key file' },
  { flag: '--private-key-env', key: 'privateKeyEnv', value: 'var', help: 'environment variable holding the signing key' },
  { flag: '--state-dir', key: 'stateDir', value: 'dir', help: STATE_DIR_HELP },
  { flag: '--otel', key: 'otel', value: '', help: 'export the decision as an OpenTelemetry span and log record (OTEL_* variables; also WARD_OTEL=1), after the reply', flagOnly: true },
];

const DESCRIPTION =
  'Claude Code hook (PreToolUse; PermissionRequest and PostToolUse too): read the event on stdin, decide, trace, and answer in the ' +
  "event's shape. Never fails open: every error, including a bad command line, is a deny (or exit 2), never another exit code.";

export type ParsedHookArgs = { ok: true; flags: HookFlags } | { ok: false; flags: HookFlags; error: string } | { help: true };

/**
 * Parse the hook's command line without commander's error exits: an unknown option, a bad choice, a
 * missing value, a repeated option or a stray argument (an unquoted path with a space) is returned as
 * an error, which the hook answers with a deny. Values may be given as `--flag value` or
 * `--flag=value`; a value that starts with `-` needs the `=` form.
 */
export function parseHookArgs(args: readonly string[]): ParsedHookArgs {
  const flags: HookFlags = {};
  const seen = new Set<string>();
  const fail = (error: string): ParsedHookArgs => ({ ok: false, flags, error });
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-h' || arg === '--help') return { help: true };
    if (!arg.startsWith('-') || arg === '-' || arg === '--') {
      const rest = args.slice(i).filter((a) => a !== '--');
      return fail(
        `unexpected argument${rest.length > 1 ? 's' : ''} ${rest.map((a) => JSON.stringify(a)).join(' ')} (an unquoted path with a space? quote "$CLAUDE_PROJECT_DIR/...")`,
      );
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const spec = HOOK_OPTIONS.find((o) => o.flag === name);
    if (!spec) return fail(`unknown option ${JSON.stringify(name)} (options: ${HOOK_OPTIONS.map((o) => o.flag).join(', ')})`);
    let value: string;
    if (spec.flagOnly) {
      if (eq >= 0) return fail(`option ${spec.flag} takes no value`);
      value = 'true';
    } else if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = args[i + 1];
      if (next === undefined || (next.startsWith('-') && next.length > 1)) return fail(`option ${spec.flag} <${spec.value}> needs a value`);
      value = next;
      i++;
    }
    if (seen.has(spec.flag)) return fail(`option ${spec.flag} given more than once`);
    seen.add(spec.flag);
    if (value.trim() === '') return fail(`option ${spec.flag} <${spec.value}> needs a value (got an empty string)`);
    if (spec.choices && !spec.choices.includes(value)) {
      return fail(`option ${spec.flag} ${JSON.stringify(value)} is not one of ${spec.choices.join(', ')}`);
    }
    flags[spec.key] = value;
  }
  for (const o of HOOK_OPTIONS) if (o.default !== undefined && flags[o.key] === undefined) flags[o.key] = o.default;
  if (flags.policy === undefined) return fail('--policy <file> is required');
  return { ok: true, flags };
}

const GEMINI_DESCRIPTION =
  'Gemini CLI hook (BeforeTool): read the event on stdin, decide, trace, and answer {} (allow) or {"decision":"deny","reason":...}; ' +
  'require_approval is a deny (BeforeTool cannot ask). Other events get {} with exit 0, never an exit that erases the prompt. ' +
  'Every failure on BeforeTool is a deny.';

const CODEX_DESCRIPTION =
  'Codex hook (PreToolUse): read the event on stdin, decide, trace, and answer with no output (allow) or a ' +
  'hookSpecificOutput permissionDecision "deny" with the reason; require_approval is a deny (Codex fails open on "ask"). ' +
  'Other events get no output with exit 0. Every failure on PreToolUse is a deny.';

const COPILOT_DESCRIPTION =
  'GitHub Copilot hook (preToolUse, CLI and coding agent): read the event on stdin, decide, trace, and answer with no output ' +
  '(allow) or {"permissionDecision":"deny","permissionDecisionReason":...}; require_approval is a deny (the coding agent ' +
  'ignores "ask"). Copilot never blocks on an exit code, so every failure is a deny on stdout with exit 0.';

const DESCRIPTIONS: Readonly<Record<string, string>> = {
  'claude-code': DESCRIPTION,
  'gemini-cli': GEMINI_DESCRIPTION,
  codex: CODEX_DESCRIPTION,
  copilot: COPILOT_DESCRIPTION,
};

const EXAMPLES: Readonly<Record<string, string>> = {
  'claude-code': `Example (register it with an absolute path, and turn a failure to start into a block):
  node /abs/path/to/ward/bin/ward.js hook claude-code --policy "$CLAUDE_PROJECT_DIR/.ward.yaml" \\
    --state-dir "$CLAUDE_PROJECT_DIR/.ward" || exit 2
See docs/integrations-claude-code.md.
`,
  'gemini-cli': `Example (.gemini/settings.json, hooks.BeforeTool[].hooks[].command; a failure to start blocks with exit 2):
  node /abs/path/to/ward/bin/ward.js hook gemini-cli --policy /abs/project/.ward.yaml \\
    --state-dir /abs/project/.ward || exit 2
See docs/integrations-gemini-cli.md.
`,
  codex: `Example (.codex/hooks.json, hooks.PreToolUse[].hooks[].command; a failure to start blocks with exit 2 and a reason):
  node /abs/path/to/ward/bin/ward.js hook codex --policy /abs/project/.ward.yaml \\
    --state-dir /abs/project/.ward || { echo 'Ward hook failed to start (fail closed)' >&2; exit 2; }
See docs/integrations-codex.md.
`,
  copilot: `Example (.github/hooks/ward.json, hooks.preToolUse[].bash, "cwd": "."; a failure to start prints a deny):
  node /abs/path/to/ward/bin/ward.js hook copilot --policy .ward.yaml --state-dir .ward || \\
    echo '{"permissionDecision":"deny","permissionDecisionReason":"Ward hook failed to start (fail closed)"}'
See docs/integrations-copilot.md.
`,
};

/** Help text, rendered by commander from the same option list. */
function helpText(host: HookHost = HOOK_HOSTS[0]!): string {
  const c = new Command(`ward hook ${host.name}`).description(DESCRIPTIONS[host.name] ?? host.label).helpOption('-h, --help', 'show this help');
  for (const o of HOOK_OPTIONS) {
    const opt = new Option(o.flagOnly ? o.flag : `${o.flag} <${o.value}>`, o.help);
    if (o.choices) opt.choices(o.choices);
    if (o.default !== undefined) opt.default(o.default);
    c.addOption(opt);
  }
  // helpInformation() leaves out addHelpText blocks: the example is appended here.
  return `${c.helpInformation()}
${EXAMPLES[host.name] ?? ''}`;
}

/** `ward hook claude-code`: a Claude Code hook (docs/integrations-claude-code.md). */
export function register(program: Command, ctx: CliContext): void {
  // Program-level options (`--version`, `-v`) must not be read from the hook's arguments: they would
  // print a version and exit 0, which Claude Code takes as "no objection".
  program.enablePositionalOptions();
  const hook = program
    .command('hook')
    .description(`agent hook integrations (${HOOK_HOSTS.map((h) => h.label).join(', ')})`)
    .usage(`${HOOK_HOSTS.map((h) => h.name).join('|')} --policy <file> [options]`)
    .enablePositionalOptions()
    // A misspelt hook (`ward hook claude_code …`) or an option before the hook's name would be a
    // commander error (exit 6: the tool runs). Answer it like any other bad hook command line.
    .allowUnknownOption()
    .argument('[args...]')
    .action(async (args: string[]) => {
      if (args.length === 0) {
        ctx.stdout(hook.helpInformation());
        if (!process.stdin.isTTY) ctx.exitCode = 2;
        return;
      }
      const what = args[0]!.startsWith('-') ? `option ${JSON.stringify(args[0])} before the hook name` : `unknown hook ${JSON.stringify(args[0])}`;
      await runHostHook(ctx, hookHost('claude-code')!, {}, `${what} (use: ward hook claude-code --policy <file> ...)`);
    });
  for (const host of HOOK_HOSTS) {
    hook
      .command(host.name)
      .description(DESCRIPTIONS[host.name] ?? host.label)
      .usage(`--policy <file> [options]   (ward hook ${host.name} --help lists them)`)
      // Commander must not parse (or reject) anything here: its errors exit 6, which the host
      // ignores. parseHookArgs reports every problem, and the hook turns it into a deny.
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .argument('[args...]')
      .action(async (args: string[]) => {
        const parsed = parseHookArgs(args);
        if ('help' in parsed) {
          // A host that never blocks on an exit code (Copilot) would read help text as no
          // objection: as a hook, it gets its deny on stdout, and the help goes to stderr.
          const misuse = `--help in a hook command blocks the call; remove it from the hook command`;
          const denied = host.fail(undefined, misuse);
          if (!process.stdin.isTTY && denied.exitCode === 0) {
            ctx.stderr(helpText(host));
            return emitHookReply(ctx, denied);
          }
          ctx.stdout(helpText(host));
          // A person asking for help gets exit 0; a hook command line with --help must not let the
          // tool run (plain text on exit 0 is "no objection" to the host).
          if (!process.stdin.isTTY) {
            ctx.stderr(`ward hook ${host.name}: ${misuse}\n`);
            ctx.exitCode = 2;
          }
          return;
        }
        await runHostHook(ctx, host, parsed.flags, parsed.ok ? undefined : parsed.error);
      });
  }
}

/** Write a reply: JSON on stdout (exit 0) or the reason on stderr (exit 2). */
export function emitHookReply(ctx: CliContext, reply: HookReply): void {
  if (reply.stdout !== undefined) ctx.stdout(JSON.stringify(reply.stdout) + '\n');
  if (reply.stderr !== undefined) ctx.stderr(reply.stderr);
  ctx.exitCode = reply.exitCode === 2 ? EXIT.VERIFY_FAILED : EXIT.OK;
}

/**
 * `ward hook <host> --policy P`: read the host's hook event on stdin, decide it through the host's
 * decoder (src/agent-hooks), write a signed trace, and answer in the host's shape. Every
 * failure is a deny (the host's `fail`): hosts run the tool on any exit other than 0 and 2, so the
 * hook never lets a failure become another exit code. `argError` is a command-line problem found
 * before the call was read: the input is still read, so the deny has the event's shape.
 */
export async function runHostHook(ctx: CliContext, host: HookHost, flags: HookFlags, argError?: string): Promise<void> {
  // process.uptime(), not the global `performance`: loading perf_hooks would cost every hook call
  // about 1 ms (bench/README.md "Whole-process start-up"); telemetry makes them epoch times.
  const started = process.uptime();
  let reply: HookReply;
  let decided: DecisionResult | undefined;
  try {
    reply = await decideHook(ctx, host, flags, argError, (result) => (decided = result));
  } catch (err) {
    reply = host.fail(undefined, `internal error: ${(err as Error)?.message ?? String(err)}`);
  }
  const decidedAt = process.uptime();
  emitHookReply(ctx, reply);
  // Telemetry only after the reply is out, and its module (and the OpenTelemetry SDK) loaded only when asked for.
  if (decided && hookWantsTelemetry(flags, ctx.env)) {
    const { exportHookDecision } = await import('../hook-telemetry.js');
    const epochMs = uptimeToEpochMs();
    await exportHookDecision(ctx, flags, `hook.${host.name}`, decided, { startedAt: epochMs(started), decidedAt: epochMs(decidedAt) }, ctx.exitCode);
  }
}

/** A `process.uptime()` reading as epoch milliseconds, sub-millisecond precise (both clocks are monotonic from process start). */
function uptimeToEpochMs(): (uptime: number) => number {
  const offset = performance.timeOrigin + performance.now() - process.uptime() * 1000;
  return (uptime) => uptime * 1000 + offset;
}

/** Whether the flags or environment may ask for telemetry (`telemetryConfig`, in hook-telemetry.ts, decides). Cheap: nothing loads. */
function hookWantsTelemetry(flags: HookFlags, env: NodeJS.ProcessEnv): boolean {
  return flags.otel !== undefined || Boolean(env['WARD_OTEL']) || Boolean(env['WARD_DECISION_LOG']);
}

async function readHostInput(ctx: CliContext, host: HookHost) {
  let text: string;
  try {
    text = await ctx.readStdin();
  } catch (err) {
    return { kind: 'fail' as const, event: undefined, message: `read stdin: ${(err as Error).message}` };
  }
  return host.parseInput(text);
}

async function decideHook(ctx: CliContext, host: HookHost, flags: HookFlags, argError: string | undefined, onDecided: (result: DecisionResult) => void): Promise<HookReply> {
  const input = await readHostInput(ctx, host);
  const fix = `fix the hook command in your ${host.label} settings`;
  if (input.kind === 'pass') return host.pass(input.event, argError === undefined ? undefined : `${argError}; ${fix}`);
  if (argError !== undefined) return host.fail(input.event, `${argError}; ${fix}`);
  if (input.kind === 'fail') return host.fail(input.event, input.message);
  const { payload, event } = input;
  if (!flags.policy || flags.policy.trim() === '') return host.fail(event, '--policy is required');
  try {
    const cfg = loadServiceConfig({
      ...sharedServiceFlags(flags),
      adapter: 'claude_code',
      stateDir: stateDir(ctx, flags.stateDir),
      cwd: ctx.cwd,
      env: ctx.env,
      serve: false,
    });
    const result = await evaluateDecision(cfg, host.request(payload, { identity: flags.identity, riskClass: flags.riskClass, argSource: flags.argSource, defaultWorkspace: ctx.cwd }));
    onDecided(result);
    return host.reply(event, result);
  } catch (err) {
    return host.fail(event, (err as Error).message);
  }
}
