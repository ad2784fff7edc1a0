import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { isJsonObject, parseJsonText, type JsonObject } from '../../canon/index.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { claudeSandboxSettings } from '../../policy/claude-sandbox.js';
import { loadPolicyFile } from '../../policy/load.js';
import { writeFileAtomic } from '../../state/atomic-file.js';
import type { CliContext } from '../context.js';

const AGENTS = ['claude-code'] as const;

/**
 * `ward sandbox --agent claude-code`: write the agent's own sandbox settings from the policy
 * (docs/integrations-claude-code.md "Confinement where the gate cannot see"). The `sandbox` block
 * of the settings file is replaced; every other key is kept; the file is written by rename.
 */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('sandbox')
    .description("write the agent's own sandbox settings (files and network) from the policy: confinement for what the gate cannot see")
    .requiredOption('--agent <agent>', `the agent: ${AGENTS.join(', ')}`)
    .option('--policy <file>', 'policy file', '.ward.yaml')
    .option('--settings <file>', 'settings file to update', '.claude/settings.json')
    .option('--print', 'print the settings block instead of writing the file')
    .option('--json', 'one line of JSON on stdout')
    .addHelpText(
      'after',
      `
Examples:
  ward sandbox --agent claude-code                       # .ward.yaml → .claude/settings.json "sandbox"
  ward sandbox --agent claude-code --print --json        # show what would be written`,
    )
    .action((flags: { agent: string; policy: string; settings: string; print?: boolean; json?: boolean }) => sandbox(ctx, flags));
}

function sandbox(ctx: CliContext, flags: { agent: string; policy: string; settings: string; print?: boolean; json?: boolean }): void {
  if (!(AGENTS as readonly string[]).includes(flags.agent)) {
    throw new WardError(ERROR_CODES.USAGE, `unsupported agent ${JSON.stringify(flags.agent)}`, { hint: `use --agent ${AGENTS.join(' or ')}` });
  }
  const policy = loadPolicyFile(resolve(ctx.cwd, flags.policy));
  const { sandbox: block, notExpressed } = claudeSandboxSettings(policy.policy, ctx.cwd);
  const settingsPath = resolve(ctx.cwd, flags.settings);
  if (!flags.print) {
    const settings = readSettings(settingsPath);
    settings['sandbox'] = block;
    writeFileAtomic(settingsPath, `${JSON.stringify(settings, null, 2)}\n`, 0o644);
  }
  if (flags.json) {
    ctx.stdout(`${JSON.stringify({ ok: true, agent: flags.agent, settings_path: flags.print ? '' : settingsPath, sandbox: block, not_expressed: notExpressed })}\n`);
    return;
  }
  const lines = flags.print ? [JSON.stringify({ sandbox: block }, null, 2)] : [`wrote the sandbox block of ${settingsPath}`];
  if (notExpressed.length) lines.push('not expressed in the sandbox (the hook still decides the tools it sees):', ...notExpressed.map((n) => `  ${n}`));
  ctx.stdout(`${lines.join('\n')}\n`);
}

function readSettings(path: string): JsonObject {
  if (!existsSync(path)) return {};
  let value;
  try {
    value = parseJsonText(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `${path}: ${(err as Error).message}`, { hint: 'fix the settings file (JSON), then run ward sandbox again' });
  }
  if (!isJsonObject(value)) throw new WardError(ERROR_CODES.USAGE, `${path}: expected a JSON object`);
  return value;
}
