import { main } from './main.js';

/**
 * The entry of the `ward --version` bundle, dist/cli/fast-version.cjs (built by
 * scripts/build-cli.js, started by bin/ward.js): the program without any command module.
 */
export function run(): Promise<void> {
  return main([]);
}
