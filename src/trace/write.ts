import { isAbsolute, resolve } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';
import type { JsonObject } from '../canon/index.js';
import { createUniqueFile, writeFileAtomic } from '../state/atomic-file.js';

export interface WriteTraceOptions {
  /** `--trace-out`: written exactly there (replacing an existing file), as the reference does. */
  path?: string | undefined;
  /** Directory for the default name (`<state>/traces`). */
  dir: string;
  /** Base for a relative `path` (default: the process working directory). */
  cwd?: string;
}

/** The on-disk form: 2-space indented JSON and a newline (`gate.md` §6.5). */
export function traceFileText(record: JsonObject): string {
  return JSON.stringify(record, null, 2) + '\n';
}

/**
 * Write a signed trace atomically with mode 0600 and return its path.
 *
 * `trace_id` is deterministic (same policy, intent and verdict give the same id), so concurrent
 * decisions on the same intent would all want `trace_<trace_id>.json`. Default-named traces are
 * therefore never overwritten: the first writer gets `trace_<trace_id>.json`, later ones
 * `trace_<trace_id>_<event_id>.json` (event_id is unique per emission), with a random suffix as
 * a last resort. Every returned decision has its own durable trace (README decision 6).
 */
export function writeTrace(record: JsonObject, opts: WriteTraceOptions): string {
  const text = traceFileText(record);
  if (opts.path !== undefined && opts.path !== '') {
    const target = checkedTracePath(opts.path, opts.cwd ?? process.cwd());
    writeFileAtomic(target, text, 0o600);
    return target;
  }
  const traceId = String(record['trace_id'] ?? '');
  const eventId = String(record['event_id'] ?? '');
  if (!/^[0-9a-f]{24}$/.test(traceId) || !/^[0-9a-f]{24}$/.test(eventId)) {
    throw new WardError(ERROR_CODES.INTERNAL, 'writeTrace: record has no valid trace_id/event_id');
  }
  return createUniqueFile(opts.dir, [`trace_${traceId}.json`, `trace_${traceId}_${eventId}.json`], text, 0o600);
}

/** `relative trace path must not traverse parent directories` (`gate.md` §6.5). */
export function checkedTracePath(path: string, cwd: string): string {
  if (!isAbsolute(path) && path.split(/[\\/]+/).includes('..')) {
    throw new WardError(ERROR_CODES.USAGE, 'relative trace path must not traverse parent directories');
  }
  return resolve(cwd, path);
}
