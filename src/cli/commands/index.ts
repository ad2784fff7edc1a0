import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** A command module adds its commands to the program. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

interface CommandModule {
  /** The top-level command names the module registers. */
  names: readonly string[];
  load: () => Promise<{ register: RegisterCommand }>;
}

/**
 * Every command module, loaded on demand: `ward gate eval` imports only the gate module, so a
 * short-lived decision does not pay for the pack store, zip or JOSE code. Help and unknown
 * commands load them all. Order here is the order in `ward --help`.
 */
export const COMMANDS: readonly CommandModule[] = [
  { names: ['demo'], load: () => import('./demo.js') },
  { names: ['gate'], load: () => import('./gate.js') },
  { names: ['policy'], load: () => import('./policy.js') },
  { names: ['policy'], load: () => import('./policy-test.js') },
  { names: ['digest'], load: () => import('./digest.js') },
  { names: ['keys'], load: () => import('./keys.js') },
  { names: ['trace'], load: () => import('./trace.js') },
  { names: ['approve'], load: () => import('./approve.js') },
  { names: ['approve-script', 'list-scripts'], load: () => import('./approve-script.js') },
  { names: ['delegate'], load: () => import('./delegate.js') },
  { names: ['run'], load: () => import('./run.js') },
  { names: ['pack'], load: () => import('./pack.js') },
  { names: ['verify'], load: () => import('./verify.js') },
  { names: ['store'], load: () => import('./store.js') },
  { names: ['regress'], load: () => import('./regress.js') },
  { names: ['mcp'], load: () => import('./mcp.js') },
  { names: ['hook'], load: () => import('./hook.js') },
  { names: ['serve'], load: () => import('./serve.js') },
  { names: ['init', 'check', 'doctor'], load: () => import('./onboard.js') },
];
