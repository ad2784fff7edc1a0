import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerPins } from './mcp-pins.js';
import { registerProxy } from './mcp-proxy.js';
import { registerService } from './mcp-service.js';

/**
 * `ward mcp`: the MCP proxy (a real protocol proxy, `mcp.md`) and the reference-compatible decision
 * service (`mcp serve`, `mcp verify`, `mcp proxy --call`, `mcp-decision-service.md`).
 */
export function register(program: Command, ctx: CliContext): void {
  const mcp = program.command('mcp').description('enforce policy on MCP traffic; the MCP decision service');
  registerProxy(mcp, ctx);
  registerService(mcp, ctx);
  registerPins(mcp, ctx);
}
