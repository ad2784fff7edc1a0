import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createUniqueFile, writeFileAtomic } from '../state/atomic-file.js';
import { parseStrictJson, type JsonObject, type JsonValue } from '../canon/index.js';
import { checkedTracePath, traceFileText } from '../trace/index.js';
import { DELEGATION_AUDIT_SCHEMA_ID } from './audit.js';
import { TokenInvalidError } from './decode.js';
import type { ParsedToken } from './rollup.js';

/**
 * Read a token file for validation. Failures are returned, not thrown: an unreadable, malformed or
 * duplicate-key token is an invalid token (`*_token_invalid`), one entry among the others.
 */
export function readTokenFile(path: string, cwd: string): ParsedToken {
  const full = resolve(cwd, path);
  try {
    return { source: path, value: parseStrictJson(readFileSync(full, 'utf8')) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const error = code === 'ENOENT' ? `no such file (${full})` : code === 'EISDIR' ? `is a directory (${full})` : (err as Error).message;
    return { source: path, error };
  }
}

/** `--x-token F` plus `--x-token-chain a,b`: the paths deduped and sorted, then read. */
export function readTokenFiles(single: string | undefined, chainCsv: string | undefined, cwd: string): ParsedToken[] {
  const paths = new Set<string>();
  for (const path of [single ?? '', ...(chainCsv ?? '').split(',')]) {
    if (path.trim() !== '') paths.add(path.trim());
  }
  return [...paths].sort().map((path) => readTokenFile(path, cwd));
}

/** Write a minted token (0600, atomic) and return its path. */
export function writeTokenFile(token: JsonObject, path: string, cwd: string): string {
  const target = resolve(cwd, path);
  writeFileAtomic(target, traceFileText(token), 0o600);
  return target;
}

export interface WriteAuditOptions {
  /** `--approval-audit-out` / `--delegation-audit-out`. */
  path?: string | undefined;
  dir: string;
  cwd?: string;
  /** The trace's event_id: the fallback name when a same-trace audit already exists. */
  eventId: string;
}

/**
 * Write `approval_audit_<trace_id>.json` / `delegation_audit_<trace_id>.json` atomically. Like
 * traces, default-named audits never overwrite one another across concurrent processes.
 */
export function writeAuditRecord(record: JsonObject, opts: WriteAuditOptions): string {
  const text = traceFileText(record);
  if (opts.path) {
    const target = checkedTracePath(opts.path, opts.cwd ?? process.cwd());
    writeFileAtomic(target, text, 0o600);
    return target;
  }
  const prefix = record['schema_id'] === DELEGATION_AUDIT_SCHEMA_ID ? 'delegation_audit' : 'approval_audit';
  const traceId = String(record['trace_id'] ?? '');
  return createUniqueFile(opts.dir, [`${prefix}_${traceId}.json`, `${prefix}_${traceId}_${opts.eventId}.json`], text, 0o600);
}


/**
 * Read an approved-script registry. A missing file is an empty registry (as in the reference);
 * unreadable or malformed content throws, and the gate decides whether that fails closed.
 */
export function readApprovedScriptRegistry(path: string, cwd: string): JsonValue {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new TokenInvalidError(`read approved script registry: ${(err as Error).message}`);
  }
  try {
    return parseStrictJson(text);
  } catch (err) {
    throw new TokenInvalidError(`parse approved script registry: ${(err as Error).message}`);
  }
}
