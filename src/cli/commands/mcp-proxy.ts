import type { Command } from 'commander';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { CliContext } from '../context.js';

/** `ward mcp proxy`. Placeholder; replaced by the module's owner. */
export function registerProxy(mcp: Command, _ctx: CliContext): void {
  mcp
    .command('proxy')
    .description('enforce policy on MCP tools/call traffic')
    .allowUnknownOption()
    .argument('[args...]')
    .action(() => {
      throw new WardError(ERROR_CODES.USAGE, 'ward mcp proxy is not available in this build');
    });
}
