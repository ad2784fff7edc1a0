import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { register as digest } from './digest.js';
import { register as gate } from './gate.js';
import { register as keys } from './keys.js';
import { register as trace } from './trace.js';
import { register as approve } from './approve.js';
import { register as delegate } from './delegate.js';

/** A command module adds its commands to the program. One import line per module below. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

export const COMMANDS: RegisterCommand[] = [
  gate,
  digest,
  keys,
  trace,
  approve,
  delegate,
];
