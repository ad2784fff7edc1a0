import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { register as digest } from './digest.js';
import { register as demo } from './demo.js';
import { register as gate } from './gate.js';
import { register as keys } from './keys.js';
import { register as trace } from './trace.js';
import { register as approve } from './approve.js';
import { register as delegate } from './delegate.js';
import { register as policy } from './policy.js';
import { register as run } from './run.js';
import { register as pack } from './pack.js';
import { register as verify } from './verify.js';
import { register as store } from './store.js';

/** A command module adds its commands to the program. One import line per module below. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

export const COMMANDS: RegisterCommand[] = [
  demo,
  gate,
  digest,
  keys,
  trace,
  approve,
  delegate,
  policy,
  run,
  pack,
  verify,
  store,
];
