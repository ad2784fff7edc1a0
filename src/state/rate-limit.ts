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
/** Buckets older than this can no longer be hit and are dropped (file rewrite, cluster prune). */
export const RATE_LIMIT_RETAIN_SECONDS = 2 * 3600;

/** Where a counter for one call lives: the key (`window|scope|bucketStart|scopeKey`) and its bucket. */
export interface RateLimitBucket {
  key: string;
  /** Start of the window bucket (epoch seconds, UTC). */
  bucketSec: number;
}

/**
 * Counts calls against limits. The file counter answers at once; a counter shared through the
 * cluster database (src/cluster/limits.ts) answers with a promise. Both use `rateLimitBucket`'s keys
 * and refuse, without counting, a call that finds the counter at its limit.
 */
export interface LimitCounter {
  consume(limit: RateLimitConfig, subject: RateLimitSubject, wallNow: GoTime): RateLimitUse | Promise<RateLimitUse>;
}

export interface RateLimitSubject {
  toolName: string;
  identity: string;
}

/** The counter of the JSON file at `statePath` (`consumeRateLimit`). */
export function fileLimitCounter(statePath: string): LimitCounter {
  return { consume: (limit, subject, wallNow) => consumeRateLimit(statePath, limit, subject, wallNow) };
}

/** The counter key and window bucket of a call at `wallNow` (minute or hour buckets, UTC). */
export function rateLimitBucket(limit: RateLimitConfig, subject: RateLimitSubject, wallNow: GoTime): RateLimitBucket {
  const bucketSec = wallNow.sec - mod(wallNow.sec, limit.window === 'hour' ? 3600 : 60);
  const scopeKey =
    limit.scope === 'tool' ? subject.toolName : limit.scope === 'identity' ? subject.identity : `${subject.toolName}|${subject.identity}`;
  const key = `${limit.window}|${limit.scope}|${formatRFC3339Seconds({ sec: bucketSec, nsec: 0, offset: 0 })}|${scopeKey}`;
  return { key, bucketSec };
}

/** What a counter reports for a call that found `count` already used. */
export function rateLimitUse(limit: RateLimitConfig, key: string, count: number, counted: boolean): RateLimitUse {
  return counted
    ? { key, scope: limit.scope, used: count, remaining: limit.requests - count, exceeded: false }
    : { key, scope: limit.scope, used: count, remaining: 0, exceeded: true };
}

/**
 * Count one call against a limit in the JSON counter file at `statePath` (§3.6 steps 4–5, Ward
 * decision 9): the directory is created, and a lock file serializes concurrent processes. A call
 * that finds the counter at the limit is refused and not counted.
 */
export function consumeRateLimit(statePath: string, limit: RateLimitConfig, subject: RateLimitSubject, wallNow: GoTime): RateLimitUse {
  const { key } = rateLimitBucket(limit, subject, wallNow);
  mkdirSync(dirname(statePath), { recursive: true });
  return withFileLock(`${statePath}.lock`, LOCK, () => {
    const counters = readCounters(statePath);
    const current = counters.get(key) ?? 0;
    if (current >= limit.requests) return rateLimitUse(limit, key, current, false);
    counters.set(key, current + 1);
    writeCounters(statePath, counters, wallNow.sec - RATE_LIMIT_RETAIN_SECONDS);
    return rateLimitUse(limit, key, current + 1, true);
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
