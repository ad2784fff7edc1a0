import { CI, DAEMON, DECIDE, EVIDENCE, HOSTS, KEYS, START, type CommandModule } from './groups.js';

export type { CommandModule, RegisterCommand } from './groups.js';

/**
 * Every command module, loaded on demand: `ward gate eval` imports only the gate module, so a
 * short-lived decision does not pay for the pack store, zip or JOSE code. Help and unknown
 * commands load them all. Order here is the order in `ward --help`, grouped by `group`.
 */
export const COMMANDS: readonly CommandModule[] = [
  { names: ['init', 'check', 'doctor'], group: START, load: () => import('./onboard.js') },
  { names: ['demo'], group: START, load: () => import('./demo.js') },
  { names: ['gate'], group: DECIDE, load: () => import('./gate.js') },
  { names: ['policy'], group: DECIDE, load: () => import('./policy.js') },
  { names: ['policy'], group: DECIDE, load: () => import('./policy-test.js') },
  { names: ['digest'], group: DECIDE, load: () => import('./digest.js') },
  { names: ['trace'], group: EVIDENCE, load: () => import('./trace.js') },
  { names: ['run'], group: EVIDENCE, load: () => import('./run.js') },
  { names: ['pack'], group: EVIDENCE, load: () => import('./pack.js') },
  { names: ['verify'], group: EVIDENCE, load: () => import('./verify.js') },
  { names: ['store'], group: EVIDENCE, load: () => import('./store.js') },
  { names: ['regress'], group: CI, load: () => import('./regress.js') },
  { names: ['mcp'], group: HOSTS, load: () => import('./mcp.js') },
  { names: ['hook'], group: HOSTS, load: () => import('./hook.js') },
  { names: ['sandbox'], group: HOSTS, load: () => import('./sandbox.js') },
  { names: ['serve'], group: DAEMON, load: () => import('./serve.js') },
  { names: ['cluster'], group: DAEMON, load: () => import('./cluster.js') },
  { names: ['keys'], group: KEYS, load: () => import('./keys.js') },
  { names: ['approve'], group: KEYS, load: () => import('./approve.js') },
  { names: ['approve-script', 'list-scripts'], group: KEYS, load: () => import('./approve-script.js') },
  { names: ['delegate'], group: KEYS, load: () => import('./delegate.js') },
  { names: ['completion'], group: START, load: () => import('./completion.js') },
];
