import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/**
 * A command module adds its commands to the program. `args` is the command line: a module may
 * register only the subcommand it names (`ward mcp`), and may load it first (hence a promise).
 */
export type RegisterCommand = (program: Command, ctx: CliContext, args?: readonly string[]) => void | Promise<void>;

export interface CommandModule {
  /** The top-level command names the module registers. */
  names: readonly string[];
  /** The heading the commands are listed under in `ward --help`. */
  group: string;
  load: () => Promise<{ register: RegisterCommand }>;
}

export const START = 'Start here:';
export const DECIDE = 'Decide:';
export const EVIDENCE = 'Evidence:';
export const CI = 'CI:';
export const HOSTS = 'MCP and agent hosts:';
export const DAEMON = 'Daemon:';
export const KEYS = 'Keys and tokens:';
