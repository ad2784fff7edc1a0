import * as gate from './commands/gate.js';
import { DECIDE } from './commands/groups.js';
import { main } from './main.js';

/**
 * The entry of the `ward gate …` (and `ward --version`) bundle, dist/cli/fast-gate.cjs (built by
 * scripts/build-cli.js, started by bin/ward.js): the same CLI with only the gate command module,
 * so that a decision loads one file instead of every command and its dependencies.
 */
export function run(): Promise<void> {
  return main([{ names: ['gate'], group: DECIDE, load: async () => gate }]);
}
