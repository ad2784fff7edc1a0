import { STORE_SCHEMA } from './001-store.js';
import { SHARED_STATE_SCHEMA } from './002-shared-state.js';
import { CONTROL_SCHEMA } from './003-control.js';
import { SIGNING_KEYS_SCHEMA } from './004-signing-keys.js';

/** One schema change: applied once, in version order, never edited after it shipped. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'evidence store', sql: STORE_SCHEMA },
  { version: 2, name: 'one-use tokens and limit counters', sql: SHARED_STATE_SCHEMA },
  { version: 3, name: 'kill switch, emergency stops, tool pins, published policies', sql: CONTROL_SCHEMA },
  { version: 4, name: 'signing keys', sql: SIGNING_KEYS_SCHEMA },
];
