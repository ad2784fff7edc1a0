import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatRFC3339Nano, nowUTC, parseGoDuration } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { withFileLock } from '../state/file-lock.js';
import type { DecisionResult } from './evaluate.js';

/**
 * `mcp serve` session journaling (`mcp-decision-service.md` §6.5): when a request carries a
 * session id (`session_id`, else `call.context.session_id`), each decision is appended to
 * `<session-dir>/<sanitized>.journal.jsonl` — or `<sanitized>_<run_id>.journal.jsonl` when that
 * journal belongs to another run — under a cross-process lock, and numbered.
 */
export const SESSION_JOURNAL_SCHEMA_ID = 'ward.mcp.session_event';

export function sanitizeSessionId(id: string): string {
  return id.trim().replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'session';
}

export interface JournalEntry {
  path: string;
  sequence: number;
}

export function appendSessionJournal(sessionDir: string, explicitPath: string | undefined, result: DecisionResult): JournalEntry {
  const dir = resolve(sessionDir);
  let path: string;
  if (explicitPath) path = explicitPath;
  else {
    const base = sanitizeSessionId(result.sessionId);
    path = join(dir, `${base}.journal.jsonl`);
    const owner = firstRunId(path);
    if (owner !== undefined && owner !== result.runId) path = join(dir, `${base}_${result.runId}.journal.jsonl`);
  }
  mkdirSync(resolve(path, '..'), { recursive: true, mode: 0o750 });
  return withFileLock(`${path}.lock`, { timeoutMs: 3000, staleMs: 15000 }, () => {
    const sequence = countLines(path) + 1;
    const o = result.output;
    const event = {
      schema_id: SESSION_JOURNAL_SCHEMA_ID,
      schema_version: '1.0.0',
      sequence,
      created_at: formatRFC3339Nano(nowUTC()),
      session_id: result.sessionId,
      run_id: result.runId,
      tool_name: result.intent.tool_name,
      intent_digest: result.intentDigest,
      policy_digest: result.policyDigest,
      policy_id: o['policy_id'],
      policy_version: o['policy_version'],
      trace_id: o['trace_id'],
      trace_path: result.tracePath,
      verdict: result.verdict,
      reason_codes: result.reasonCodes,
      violations: o['violations'] ?? [],
    };
    const fd = openSync(path, 'a', 0o600);
    try {
      writeSync(fd, JSON.stringify(event) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return { path, sequence };
  });
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  } catch {
    return [];
  }
}

function countLines(path: string): number {
  return readLines(path).length;
}

function firstRunId(path: string): string | undefined {
  const first = readLines(path)[0];
  if (first === undefined) return undefined;
  try {
    const run = (JSON.parse(first) as { run_id?: unknown }).run_id;
    return typeof run === 'string' ? run : undefined;
  } catch {
    return undefined;
  }
}

// --- retention ---------------------------------------------------------------------------------------

export type RetentionClass = 'trace' | 'runpack' | 'pack' | 'session';

export interface RetentionRule {
  cls: RetentionClass;
  dir: string;
  /** Milliseconds; 0 disables. */
  maxAgeMs: number;
  /** 0 disables. */
  maxCount: number;
}

const CLASS_MATCH: Record<RetentionClass, (name: string) => boolean> = {
  trace: (n) => n.endsWith('.json') && n.includes('trace'),
  runpack: (n) => (n.startsWith('runpack_') && n.endsWith('.zip')) || n.includes('_cp_'),
  pack: (n) => n.startsWith('pack_') && n.endsWith('.zip'),
  session: (n) => n.endsWith('.json') || n.endsWith('.jsonl') || n.endsWith('.state'),
};

/** Parse a `--…-max-age` Go duration (`0` disables). */
export function parseMaxAge(flag: string, value: string | undefined): number {
  const text = (value ?? '0').trim();
  if (text === '' || text === '0') return 0;
  let nanos: bigint;
  try {
    nanos = parseGoDuration(text);
  } catch (err) {
    throw new WardError(ERROR_CODES.USAGE, `invalid ${flag}: ${(err as Error).message}`, { hint: 'use a Go duration such as 168h or 30m; 0 disables' });
  }
  if (nanos < 0n) throw new WardError(ERROR_CODES.USAGE, `invalid ${flag}: must be >= 0`);
  return Number(nanos / 1_000_000n);
}

/**
 * Remove files of one class: older than max-age, then all but the newest max-count (by mtime).
 * Returns the reference warning `retention_<class>_removed_age=N removed_count=M`, or undefined.
 */
export function sweepRetention(rule: RetentionRule, nowMs = Date.now()): string | undefined {
  if (rule.maxAgeMs <= 0 && rule.maxCount <= 0) return undefined;
  let names: string[];
  try {
    names = readdirSync(rule.dir);
  } catch {
    return undefined;
  }
  const files = names
    .filter(CLASS_MATCH[rule.cls])
    .filter((n) => !n.endsWith('.lock'))
    .flatMap((name) => {
      try {
        const st = statSync(join(rule.dir, name));
        return st.isFile() ? [{ name, mtime: st.mtimeMs }] : [];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.mtime - a.mtime || (a.name < b.name ? -1 : 1));
  let byAge = 0;
  let byCount = 0;
  const keep: typeof files = [];
  for (const f of files) {
    if (rule.maxAgeMs > 0 && nowMs - f.mtime > rule.maxAgeMs) {
      if (remove(join(rule.dir, f.name))) byAge++;
    } else keep.push(f);
  }
  if (rule.maxCount > 0) {
    for (const f of keep.slice(rule.maxCount)) if (remove(join(rule.dir, f.name))) byCount++;
  }
  if (byAge === 0 && byCount === 0) return undefined;
  return `retention_${rule.cls}_removed_age=${byAge} removed_count=${byCount}`;
}

function remove(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
