import type { Command } from 'commander';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { CliContext } from '../context.js';

/** `ward mcp serve` and `ward mcp verify`. Placeholder; replaced by the module's owner. */
export function registerService(mcp: Command, _ctx: CliContext): void {
  for (const name of ['serve', 'verify']) {
    mcp
      .command(name)
      .allowUnknownOption()
      .argument('[args...]')
      .action(() => {
        throw new WardError(ERROR_CODES.USAGE, `ward mcp ${name} is not available in this build`);
      });
  }
}
