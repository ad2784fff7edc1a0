import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { formatRFC3339Seconds, type GoTime } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { RateLimitConfig } from '../policy/types.js';
import { writeFileAtomic } from './atomic-file.js';
import { withFileLock } from './file-lock.js';

export const RATE_LIMIT_STATE_SCHEMA_ID = 'gait.gate.rate_limit_state';

interface Counter {
  key: string;
  count: number;
}

export interface RateLimitUse {
  /** The counter key: `window|scope|bucketStart|scopeKey`. */
  key: string;
  scope: string;
  used: number;
  remaining: number;
  exceeded: boolean;
}

const LOCK = { timeoutMs: 3000, staleMs: 15000 };
/** Buckets older than this can no longer be hit and are dropped when the file is rewritten. */
const RETAIN_SECONDS = 2 * 3600;

/**
 * Count one call against a limit in the JSON counter file at `statePath` (§3.6 steps 4–5, Ward
 * decision 9): the directory is created, and a lock file serializes concurrent processes. A call
 * that finds the counter at the limit is refused and not counted.
 */
export function consumeRateLimit(
  statePath: string,
  limit: RateLimitConfig,
  subject: { toolName: string; identity: string },
  wallNow: GoTime,
): RateLimitUse {
  const bucketSec = wallNow.sec - mod(wallNow.sec, limit.window === 'hour' ? 3600 : 60);
  const scopeKey =
    limit.scope === 'tool' ? subject.toolName : limit.scope === 'identity' ? subject.identity : `${subject.toolName}|${subject.identity}`;
  const key = `${limit.window}|${limit.scope}|${formatRFC3339Seconds({ sec: bucketSec, nsec: 0, offset: 0 })}|${scopeKey}`;
  mkdirSync(dirname(statePath), { recursive: true });
  return withFileLock(`${statePath}.lock`, LOCK, () => {
    const counters = readCounters(statePath);
    const current = counters.get(key) ?? 0;
    if (current >= limit.requests) {
      return { key, scope: limit.scope, used: current, remaining: 0, exceeded: true };
    }
    counters.set(key, current + 1);
    writeCounters(statePath, counters, wallNow.sec - RETAIN_SECONDS);
    return { key, scope: limit.scope, used: current + 1, remaining: limit.requests - current - 1, exceeded: false };
  });
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

function readCounters(path: string): Map<string, number> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new WardError(ERROR_CODES.IO, `read rate limit state ${path}: ${(err as Error).message}`);
  }
  let parsed: { counters?: Counter[] };
  try {
    parsed = JSON.parse(text) as { counters?: Counter[] };
  } catch {
    // A corrupt counter file must not reset limits silently to zero: refuse and name the file.
    throw new WardError(ERROR_CODES.STATE_INVALID, `rate limit state ${path} is not valid JSON; inspect or delete it`, {
      exitCode: 1,
    });
  }
  const out = new Map<string, number>();
  for (const c of parsed.counters ?? []) {
    if (typeof c?.key === 'string' && Number.isSafeInteger(c.count)) out.set(c.key, c.count);
  }
  return out;
}

function writeCounters(path: string, counters: Map<string, number>, oldestBucketSec: number): void {
  const kept: Counter[] = [];
  for (const [key, count] of counters) {
    const bucket = Date.parse(key.split('|')[2] ?? '') / 1000;
    if (!(bucket < oldestBucketSec)) kept.push({ key, count });
  }
  kept.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const state = { schema_id: RATE_LIMIT_STATE_SCHEMA_ID, schema_version: '1.0.0', counters: kept };
  writeFileAtomic(path, JSON.stringify(state, null, 2) + '\n');
}
