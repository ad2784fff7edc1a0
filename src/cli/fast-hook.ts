import * as hook from './commands/hook.js';
import { HOSTS } from './commands/groups.js';
import { main } from './main.js';

/**
 * The entry of the `ward hook …` bundle, dist/cli/fast-hook.cjs (built by scripts/build-cli.js,
 * started by bin/ward.js): the same CLI with only the hook command module.
 */
export function run(): Promise<void> {
  return main([{ names: ['hook'], group: HOSTS, load: async () => hook }]);
}
