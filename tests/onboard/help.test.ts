import { spawnSync } from 'node:child_process';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { HELP_NOTES, OPTION_GROUPS } from '../../src/cli/help-notes.js';
import type { CliContext } from '../../src/cli/context.js';
import { runCli } from '../../src/cli/program.js';
import { hookHost } from '../../src/agent-hooks/index.js';
import { tempDir, WARD, ward } from '../cli/run.js';

function fakeContext(cwd: string): CliContext & { out: string; err: string } {
  const ctx = {
    argv: ['ward'],
    cwd,
    env: { ...process.env, WARD_STATE_DIR: '' },
    out: '',
    err: '',
    stdout: (t: string) => void (ctx.out += t),
    stderr: (t: string) => void (ctx.err += t),
    readStdin: async () => '',
    isTTY: false,
    exitCode: 0 as CliContext['exitCode'],
  };
  return ctx;
}

/** Every command path in the tree, e.g. ['gate', 'eval'], found by registering every module. */
async function commandPaths(): Promise<string[][]> {
  const program = new Command('ward');
  const ctx = fakeContext(tempDir());
  for (const m of COMMANDS) await (await m.load()).register(program, ctx);
  const walk = (cmd: Command, prefix: string[]): string[][] =>
    cmd.commands.flatMap((c) => {
      const path = [...prefix, c.name()];
      return [path, ...walk(c, path)];
    });
  return walk(program, []);
}

describe('ward with no arguments', () => {
  it('prints an overview of the commands and where to start, exit 0', () => {
    const r = ward([], { cwd: tempDir() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: ward');
    expect(r.stdout).toContain('Start here:');
    for (const name of ['demo', 'gate', 'init', 'check', 'doctor']) expect(r.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  });
});

describe('typos', () => {
  it('an unknown command suggests the closest one (exit 6)', () => {
    const r = ward(['doctr'], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("unknown command 'doctr'");
    expect(r.stderr).toContain('(Did you mean doctor?)');
  });

  it('an unknown subcommand suggests the closest one', () => {
    const r = ward(['gate', 'evl'], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('(Did you mean eval?)');
  });

  it('an unknown option suggests the closest one', () => {
    const r = ward(['check', '--polcy', 'x'], { cwd: tempDir() });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('(Did you mean --policy?)');
  });
});

/** A hook whose host never blocks on an exit code: its failures are a deny on stdout with exit 0. */
const denyingHost = (path: string[]) => path[0] === 'hook' && path.length === 2 && hookHost(path[1]!)?.fail(undefined, 'help').exitCode === 0;

describe('--help', () => {
  it('every registered command answers --help with exit 0 and its own usage line', async () => {
    const paths = await commandPaths();
    expect(paths.length).toBeGreaterThan(20);
    expect(paths).toContainEqual(['gate', 'eval']);
    expect(paths).toContainEqual(['doctor']);
    const cwd = tempDir();
    for (const path of paths) {
      const ctx = fakeContext(cwd);
      const code = await runCli([...path, '--help'], ctx);
      // A hook command line is run by the agent host with stdin piped: `--help` there must block
      // (exit 2), never let the tool run; it still prints the help. A host that never blocks on an
      // exit code (Copilot) gets its deny on stdout, and the help on stderr.
      const denyOnStdout = denyingHost(path);
      const expected = path[0] === 'hook' && path.length === 2 && !denyOnStdout ? 2 : 0;
      expect(code, `ward ${path.join(' ')} --help\n${ctx.err}`).toBe(expected);
      expect(denyOnStdout ? ctx.err : ctx.out, path.join(' ')).toContain(`Usage: ward ${path.join(' ')}`);
      if (denyOnStdout) expect(ctx.out, path.join(' ')).toMatch(/"deny"/);
    }
  });

  it('works the same from the built CLI', () => {
    for (const path of [['init'], ['check'], ['doctor'], ['gate', 'eval']]) {
      const r = ward([...path, '--help'], { cwd: tempDir() });
      expect(r.code, path.join(' ')).toBe(0);
      expect(r.stdout).toContain(`Usage: ward ${path.join(' ')}`);
    }
  });
});

describe('help that teaches (issue 15)', () => {
  it('ward --help groups the commands, starting with init, check and doctor', () => {
    const r = ward(['--help'], { cwd: tempDir() });
    const headings = ['Start here:', 'Decide:', 'Evidence:', 'CI:', 'MCP and agent hosts:', 'Daemon:', 'Keys and tokens:'];
    const at = headings.map((h) => r.stdout.indexOf(`\n${h}\n`));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    const start = r.stdout.slice(at[0]!, at[1]!);
    expect(start.indexOf('  init')).toBeLessThan(start.indexOf('  check'));
    expect(start.indexOf('  check')).toBeLessThan(start.indexOf('  doctor'));
  });

  it('every command without subcommands shows at least one example', async () => {
    const paths = await commandPaths();
    const parents = new Set(paths.map((p) => p.slice(0, -1).join(' ')));
    const leaves = paths.filter((p) => !parents.has(p.join(' ')));
    const cwd = tempDir();
    for (const path of leaves) {
      const ctx = fakeContext(cwd);
      await runCli([...path, '--help'], ctx);
      expect(denyingHost(path) ? ctx.err : ctx.out, `ward ${path.join(' ')} --help`).toMatch(/\nExamples?( \(.*\))?:\n/);
    }
  });

  it('each example runs the command it documents, with options that command declares', async () => {
    const program = new Command('ward');
    const ctx = fakeContext(tempDir());
    for (const m of COMMANDS) await (await m.load()).register(program, ctx);
    const find = (path: string[]) => path.reduce<Command | undefined>((cmd, name) => cmd?.commands.find((c) => c.name() === name), program);
    for (const [path, note] of Object.entries(HELP_NOTES)) {
      const cmd = find(path.split(' '));
      expect(cmd, path).toBeDefined();
      const longs = new Set(cmd!.options.map((o) => o.long));
      for (const example of note.examples) {
        const words = example.replace(/^.*?\bward /, 'ward ').split(/\s+/);
        expect(words.slice(1, 1 + path.split(' ').length).join(' '), example).toBe(path);
        for (const flag of words.filter((w) => w.startsWith('--') && w !== '--')) {
          if (example.includes(' -- ') && words.indexOf(flag) > words.indexOf('--')) continue;
          expect(longs.has(flag), `${example}: ${flag}`).toBe(true);
        }
      }
    }
  });

  it('gate eval and mcp proxy list every flag under a heading, and the tables name only real flags', async () => {
    const program = new Command('ward');
    const ctx = fakeContext(tempDir());
    for (const m of COMMANDS) await (await m.load()).register(program, ctx);
    for (const [path, groups] of Object.entries(OPTION_GROUPS)) {
      const cmd = path.split(' ').reduce<Command | undefined>((c, name) => c?.commands.find((x) => x.name() === name), program)!;
      const declared = cmd.options.map((o) => o.long!);
      const grouped = Object.values(groups).flat();
      expect(grouped.filter((flag) => !declared.includes(flag)), path).toEqual([]);
      expect(declared.filter((flag) => !grouped.includes(flag)), path).toEqual([]);
    }
  });

  it('serve, mcp serve and mcp proxy say when to use which; so do the verify commands', async () => {
    const cwd = tempDir();
    const helpOf = async (path: string[]) => {
      const ctx = fakeContext(cwd);
      await runCli([...path, '--help'], ctx);
      return ctx.out;
    };
    for (const path of [['serve'], ['mcp', 'serve'], ['mcp', 'proxy']]) expect(await helpOf(path), path.join(' ')).toContain('Which server?');
    for (const path of [['verify'], ['trace', 'verify'], ['pack', 'verify'], ['mcp', 'verify'], ['keys', 'verify'], ['delegate', 'verify']]) {
      expect(await helpOf(path), path.join(' ')).toContain('Which verify?');
    }
  });
});

describe('--version', () => {
  it('prints the version, and {ok, version} with --json', () => {
    const cwd = tempDir();
    const plain = ward(['--version'], { cwd });
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const json = ward(['-v', '--json'], { cwd });
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, version: plain.stdout.trim() });
  });
});

describe('a reader that closes the pipe early', () => {
  it('is not an error (ward --help | head -1)', () => {
    const r = spawnSync('sh', ['-c', `node ${JSON.stringify(WARD)} --help | head -1`], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('Usage: ward [options] [command]\n');
  });
});
