import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/output.js';
import { runMcpCall, type McpCallFlags } from '../../src/cli/commands/mcp-call.js';
import { REPO, tempDir } from '../cli/run.js';
import { inProcess } from './helpers.js';

/**
 * The copy-paste examples of this area's pages run literally, in order, in one fresh directory.
 * `ward mcp proxy --call` lines go through `runMcpCall` with the flag set the proxy command
 * registers (the interface contract), so they are checked whatever `mcp proxy` itself wires up.
 */
const PAGES = ['docs/mcp-decision-service.md', 'docs/integrations-claude-code.md'];
const LINKED = ['bin', 'dist', 'policies', 'examples', 'fixtures', 'package.json', 'node_modules'];

function commands(markdown: string): { command: string; exit: number }[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
    .flatMap((m) => m[1]!.split('\n'))
    .filter((line) => line.startsWith('node bin/ward.js'))
    .map((line) => ({ command: line.replace(/\s+#.*$/, ''), exit: Number(/#\s*exit (\d+)\s*$/.exec(line)?.[1] ?? 0) }));
}

/** The options `ward mcp proxy` registers for `--call` (McpCallFlags). */
function proxyProgram(onAction: (flags: McpCallFlags) => void): Command {
  const program = new Command('proxy').exitOverride();
  for (const flag of [
    'call', 'adapter', 'profile', 'job-root', 'kill-switch-state', 'trace-out', 'run-id', 'runpack-out', 'pack-out',
    'export-log-out', 'export-otel-out', 'key-mode', 'private-key', 'private-key-env', 'policy', 'context-envelope', 'state-dir',
  ]) {
    program.option(`--${flag} <value>`);
  }
  program.option('--json');
  program.action((flags: McpCallFlags) => onAction(flags));
  return program;
}

async function runProxyLine(cwd: string, command: string): Promise<number> {
  const args = command.split(/\s+/).slice(4); // node bin/ward.js mcp proxy ...
  let flags: McpCallFlags | undefined;
  proxyProgram((f) => (flags = f)).parse(args, { from: 'user' });
  const p = inProcess(cwd);
  try {
    await runMcpCall(p.ctx, flags!);
    return p.ctx.exitCode;
  } catch (err) {
    return describeFailure(err).exitCode;
  }
}

describe.each(PAGES)('%s', (page) => {
  it('every example command runs literally with the exit code it states', async () => {
    const list = commands(readFileSync(join(REPO, page), 'utf8'));
    expect(list.length).toBeGreaterThan(3);
    const cwd = tempDir('ward-docs-mcp-');
    for (const entry of LINKED) symlinkSync(join(REPO, entry), join(cwd, entry));
    for (const { command, exit } of list) {
      if (command.startsWith('node bin/ward.js mcp proxy ')) {
        expect(await runProxyLine(cwd, command), command).toBe(exit);
        continue;
      }
      const r = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } });
      expect(r.status, `${command}\n${r.stdout}\n${r.stderr}`).toBe(exit);
    }
  });
});

describe('docs/integrations-claude-code.md', () => {
  const page = () => readFileSync(join(REPO, 'docs/integrations-claude-code.md'), 'utf8');

  it('its examples answer allow, deny, ask, a PermissionRequest deny, a PostToolUse block, a deny for a bad option and exit 2 for no input', () => {
    const cwd = tempDir('ward-docs-hook-');
    for (const entry of LINKED) symlinkSync(join(REPO, entry), join(cwd, entry));
    const hookLines = commands(page()).filter((c) => c.command.includes('hook claude-code'));
    const answers = hookLines.map(({ command }) => {
      const r = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8' });
      if (r.status !== 0) return `exit ${String(r.status)}`;
      const out = JSON.parse(r.stdout) as { decision?: string; hookSpecificOutput?: { permissionDecision?: string; decision?: { behavior: string } } };
      return out.hookSpecificOutput?.permissionDecision ?? out.hookSpecificOutput?.decision?.behavior ?? out.decision ?? 'none';
    });
    expect(answers).toEqual(['allow', 'deny', 'ask', 'deny', 'block', 'deny', 'exit 2']);
  });

  it('the documented hook command runs only an installed Ward, quotes the project path and turns a failure to start into exit 2', () => {
    const text = page();
    const cmd = /"command": "(.*)",/.exec(text)![1]!.replace(/\\"/g, '"');
    expect(cmd).toMatch(/^node \/\S+\/bin\/ward\.js hook claude-code /);
    expect(cmd).toContain('--policy "$CLAUDE_PROJECT_DIR/.ward.yaml"');
    expect(cmd.endsWith(' || exit 2')).toBe(true);
    expect(text).not.toMatch(/"command": "npx/);
    // `|| exit 2` really does turn a command that cannot start into a blocking exit 2.
    const broken = spawnSync('sh', ['-c', `node /nonexistent/ward/bin/ward.js hook claude-code --policy p.yaml || exit 2`], { encoding: 'utf8' });
    expect(broken.status).toBe(2);
    expect(broken.stderr).toContain('Cannot find module');
  });
});
