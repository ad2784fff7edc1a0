import { Option, type Command } from 'commander';
import type { CliContext } from '../context.js';
import { runClaudeCodeHook, type ClaudeCodeHookFlags } from '../../mcp/compat/hook.js';

/** `ward hook claude-code`: a Claude Code PreToolUse hook (docs/integrations-claude-code.md). */
export function register(program: Command, ctx: CliContext): void {
  const hook = program.command('hook').description('agent hook integrations (Claude Code PreToolUse)');
  hook
    .command('claude-code')
    .description(
      'read a Claude Code PreToolUse hook event on stdin, decide, trace, and print hookSpecificOutput (allow, deny or ask); always exits 0, empty or malformed input denies',
    )
    .option('--policy <file>', 'policy YAML (required)')
    .option('--context-envelope <file>', 'verified context envelope bound to every call')
    .addOption(new Option('--profile <profile>', 'evaluation profile').choices(['standard', 'oss-prod']).default('standard'))
    .option('--identity <id>', 'context.identity of the calls (default claude-code)')
    .option('--risk-class <class>', 'context.risk_class of the calls (default high)')
    .option('--job-root <dir>', 'job runtime consulted for emergency stops (default .ward/jobs)')
    .option('--kill-switch-state <file>', 'kill-switch state JSON')
    .option('--export-log-out <file>', 'append one JSON decision event per call (locked JSONL)')
    .option('--export-otel-out <file>', 'append one OpenTelemetry-style log record per call (locked JSONL)')
    .addOption(
      new Option('--key-mode <mode>', 'signing key: default (.ward/keys), dev (ephemeral) or prod (explicit key)')
        .choices(['default', 'dev', 'prod'])
        .default('default'),
    )
    .option('--private-key <file>', 'trace signing key file')
    .option('--private-key-env <var>', 'environment variable holding the signing key')
    .option('--state-dir <dir>', 'Ward state directory (default .ward or $WARD_STATE_DIR)')
    .action(async (flags: ClaudeCodeHookFlags) => {
      await runClaudeCodeHook(ctx, flags);
    });
}
