import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/**
 * The `ward mcp` subcommands, each in its own module, loaded only for the subcommand being run
 * (all of them for help, completion and an unknown word): `ward mcp proxy` spawns its server before
 * the decision service's modules, which it never uses, would have loaded.
 */
const SUBCOMMANDS: readonly { names: readonly string[]; load: () => Promise<(mcp: Command, ctx: CliContext) => void> }[] = [
  { names: ['proxy'], load: async () => (await import('./mcp-proxy.js')).registerProxy },
  { names: ['serve', 'verify'], load: async () => (await import('./mcp-service.js')).registerService },
  { names: ['pins'], load: async () => (await import('./mcp-pins.js')).registerPins },
];

/**
 * `ward mcp`: the MCP proxy (a real protocol proxy, `mcp.md`) and the reference-compatible decision
 * service (`mcp serve`, `mcp verify`, `mcp proxy --call`, `mcp-decision-service.md`).
 */
export async function register(program: Command, ctx: CliContext, args: readonly string[] = []): Promise<void> {
  const mcp = program.command('mcp').description('enforce policy on MCP traffic; the MCP decision service');
  const sub = subcommandOf(args);
  const wanted = SUBCOMMANDS.filter((s) => sub !== undefined && s.names.includes(sub));
  for (const s of wanted.length ? wanted : SUBCOMMANDS) (await s.load())(mcp, ctx);
}

/** The word after `mcp` (`ward mcp proxy …`); none when help is asked of `mcp` itself first. */
function subcommandOf(args: readonly string[]): string | undefined {
  const at = args.indexOf('mcp');
  if (at === -1) return undefined;
  for (const arg of args.slice(at + 1)) {
    if (arg === '-h' || arg === '--help') return undefined;
    if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}
