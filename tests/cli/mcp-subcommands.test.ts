import { describe, expect, it } from 'vitest';
import { tempDir, ward } from './run.js';

// `ward mcp` loads only the subcommand's module (so `ward mcp proxy` spawns its server before the
// decision service would have loaded); help, an unknown word and completion still see them all.

const run = (args: string[]) => ward(args, { cwd: tempDir('ward-mcp-sub-') });

const ALL = ['proxy', 'serve', 'verify', 'pins'];
const listed = (help: string) => ALL.filter((name) => new RegExp(`^  ${name}\\b`, 'm').test(help));

describe('ward mcp subcommands', () => {
  it('`ward mcp --help` and `ward mcp --help proxy` list every subcommand', () => {
    for (const args of [['mcp', '--help'], ['mcp', '--help', 'proxy'], ['mcp', '-h']]) {
      const r = run(args);
      expect(r.code).toBe(0);
      expect(listed(r.stdout)).toEqual(ALL);
    }
  });

  it('each subcommand runs with only its own module: its help, its flags, its usage errors', () => {
    const proxy = run(['mcp', 'proxy', '--help']);
    expect(proxy.code).toBe(0);
    expect(proxy.stdout).toMatch(/Usage: ward mcp proxy --policy <file>/);
    const serve = run(['mcp', 'serve', '--help']);
    expect(serve.stdout).toMatch(/--http-verdict-status/);
    const pins = run(['mcp', 'pins', '--help']);
    expect(pins.stdout).toMatch(/Usage: ward mcp pins/);
    // A flag of another subcommand is not one of this one's.
    const wrong = run(['mcp', 'proxy', '--http-verdict-status', 'strict', '--policy', 'p.yaml', '--', 'true']);
    expect(wrong.code).toBe(6);
    expect(wrong.stderr).toMatch(/unknown option '--http-verdict-status'/);
  });

  it('an unknown subcommand is refused with a suggestion from all of them (exit 6)', () => {
    const r = run(['mcp', 'proxx']);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/unknown command 'proxx'/);
    expect(r.stderr).toMatch(/Did you mean proxy\?/);
  });
});
