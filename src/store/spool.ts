import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex, type JsonObject } from '../canon/index.js';
import { writeFileAtomic } from '../state/atomic-file.js';
import type { EntryKind } from './types.js';

/**
 * The spool: how short-lived commands hand records to the store without opening it (Ward
 * decision 6). Each record is one file, written durably (fsync, rename, directory fsync) before
 * the call returns, named by the sha256 of its bytes so that writing it twice is harmless. The
 * store owner ingests and removes the files; ingestion is keyed by content, so a crash between
 * ingesting and removing a file never duplicates anything.
 */
export function spoolDir(stateDir: string): string {
  return join(stateDir, 'spool');
}

const EXTENSIONS: Record<EntryKind, string> = { trace: 'json', capture: 'json', runpack: 'zip', pack: 'zip' };

/** Enqueue a signed trace record for the store. Returns the spool file path. */
export function spoolTrace(stateDir: string, record: JsonObject | string | Buffer): string {
  const bytes = Buffer.isBuffer(record) ? record : Buffer.from(typeof record === 'string' ? record : JSON.stringify(record, null, 2) + '\n');
  return spoolBytes(stateDir, 'trace', bytes);
}

/** Enqueue any artifact (trace JSON, runpack or pack zip) for the store. */
export function spoolBytes(stateDir: string, kind: EntryKind, bytes: Buffer): string {
  const path = join(spoolDir(stateDir), `${kind}_${sha256Hex(bytes)}.${EXTENSIONS[kind]}`);
  writeFileAtomic(path, bytes);
  return path;
}

export interface SpoolFile {
  name: string;
  path: string;
  kind: EntryKind;
}

const SPOOL_NAME = /^(trace|capture|runpack|pack)_[0-9a-f]{64}\.(json|zip)$/;

/** Spool files waiting for ingestion, oldest name order (temp files and strays ignored). */
export function listSpool(stateDir: string): SpoolFile[] {
  let names: string[];
  try {
    names = readdirSync(spoolDir(stateDir));
  } catch {
    return [];
  }
  return names
    .filter((name) => SPOOL_NAME.test(name))
    .sort()
    .map((name) => ({ name, path: join(spoolDir(stateDir), name), kind: name.slice(0, name.indexOf('_')) as EntryKind }));
}
