import { Command, CommanderError } from 'commander';
import { EXIT, type ExitCode } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { WARD_VERSION } from '../version.js';
import { withStateContext, type CliContext } from './context.js';
import { correlationId, describeFailure, goJsonLine } from './output.js';
import type { CommandModule } from './commands/groups.js';
import { addHelpNotes } from './help-notes.js';

/**
 * Go's flag package treats `-policy` like `--policy`; reference users type both. Rewrite
 * single-dash long flags before commander sees them (never after `--`).
 */
export function normalizeGoFlags(args: readonly string[]): string[] {
  const out: string[] = [];
  let passthrough = false;
  for (const arg of args) {
    if (!passthrough && arg === '--') passthrough = true;
    if (!passthrough && /^-[A-Za-z][A-Za-z0-9_-]+(=.*)?$/s.test(arg)) out.push('-' + arg);
    else out.push(arg);
  }
  return out;
}

/**
 * Run the CLI with `args` (without node and script path). Resolves to the exit code. `commands`
 * defaults to every command module (src/cli/commands/index.ts, imported only when a command needs
 * it); the fast entries (src/cli/fast-*.ts) pass just the one they were built for.
 */
export async function runCli(args: readonly string[], ctx: CliContext, commands?: readonly CommandModule[]): Promise<ExitCode> {
  const wantsJson = args.includes('--json') || args.includes('-json');
  if (wantsJson && args.length === 2 && (args.includes('--version') || args.includes('-v'))) {
    ctx.stdout(goJsonLine({ ok: true, version: WARD_VERSION }) + '\n');
    return EXIT.OK;
  }
  const program = await buildProgram(ctx, args, commands);
  if (args.length === 0) {
    program.outputHelp();
    return EXIT.OK;
  }
  try {
    await program.parseAsync(normalizeGoFlags(args), { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) {
        return EXIT.OK;
      }
      const message = err.message.replace(/^error: /, '');
      if (wantsJson) {
        const failure = describeFailure(new UsageError(message));
        ctx.stdout(goJsonLine({ correlation_id: correlationId(ctx.argv), ...failure.json }) + '\n');
      }
      return EXIT.INVALID_INPUT;
    }
    const failure = describeFailure(withStateContext(err, ctx.state));
    if (wantsJson) ctx.stdout(goJsonLine({ correlation_id: correlationId(ctx.argv), ...failure.json }) + '\n');
    else ctx.stderr(failure.text + '\n');
    return failure.exitCode;
  }
}

/** A command line commander refused (unknown command or option, missing argument): exit 6. */
class UsageError extends WardError {
  constructor(message: string) {
    super(ERROR_CODES.USAGE, message);
    this.name = 'UsageError';
  }
}

async function buildProgram(ctx: CliContext, args: readonly string[], commands: readonly CommandModule[] | undefined): Promise<Command> {
  const program = new Command('ward');
  program
    .description('Ward: a policy gate for AI-agent tool calls (Gait v1 contract-compatible).')
    .version(WARD_VERSION, '-v, --version')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout(s),
      writeErr: (s) => ctx.stderr(s),
    })
    .addHelpText(
      'after',
      `
Start here:
  ward demo                       a 20-second tour: decisions, approvals, traces, a pack, a regression
  ward gate eval --policy P --intent I [--json]
  ward trace verify .ward/traces  verify every signed decision record

Exit codes: 0 allow/ok, 1 internal, 2 verification failed, 3 block, 4 approval required,
            5 regression, 6 invalid input, 7 missing dependency, 8 unsafe operation.
State lives in the nearest .ward/ up from the working directory (ward init creates one), else
beside the --policy file, else ~/.local/state/ward; --state-dir or WARD_STATE_DIR overrides.
ward doctor says which one is used.`,
    );
  const first = args.find((a) => !a.startsWith('-'));
  // `ward --version` needs no command module; help and unknown commands need them all.
  const versionOnly = first === undefined && args.some((a) => a === '--version' || a === '-v');
  if (!versionOnly) {
    const all = commands ?? (await import('./commands/index.js')).COMMANDS;
    // `ward completion` lists the whole command tree, so it needs every module, like help.
    const wanted = first === 'completion' ? [] : all.filter((m) => first !== undefined && m.names.includes(first));
    for (const m of wanted.length ? wanted : all) {
      await (await m.load()).register(program, ctx, args);
      for (const cmd of program.commands) if (m.names.includes(cmd.name())) cmd.helpGroup(m.group);
    }
  }
  addHelpNotes(program);
  // Every subcommand inherits the same error handling and output routing.
  for (const cmd of allCommands(program)) {
    cmd.exitOverride().showSuggestionAfterError(true).configureOutput({
      writeOut: (s) => ctx.stdout(s),
      writeErr: (s) => ctx.stderr(s),
    });
    refuseOptionAsValue(cmd);
  }
  return program;
}

/**
 * Commander takes the word after an option that needs a value as that value, even when it is
 * another option: `--policy --intent x.json` read as policy "--intent" and then complained about
 * x.json ("too many arguments"). A value that is one of the command's own options is a missing value.
 */
function refuseOptionAsValue(cmd: Command): void {
  for (const option of cmd.options) {
    if (!option.required) continue;
    cmd.on(`option:${option.name()}`, (value: unknown) => {
      if (typeof value !== 'string' || !value.startsWith('-')) return;
      const flag = value.split('=')[0]!;
      if (cmd.options.some((o) => o.long === flag || o.short === flag) || flag === '--help' || flag === '-h') {
        throw new UsageError(`option '${option.flags}' needs a value, but the next argument is the option '${flag}'`);
      }
    });
  }
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}
