import type { Command } from 'commander';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { CliContext } from '../context.js';

/** Placeholder registration; replaced by the module's owner. */
export function register(program: Command, _ctx: CliContext): void {
  for (const name of ['serve']) {
    program
      .command(name)
      .description('run the governance daemon (HTTP)')
      .allowUnknownOption()
      .argument('[args...]')
      .action(() => {
        throw new WardError(ERROR_CODES.USAGE, `ward ${name} is not available in this build`);
      });
  }
}
