import { ClassicLevel } from 'classic-level';
import { mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';
import { describeArtifact } from './describe.js';
import { checkId } from './ids.js';
import { writeFileAtomic } from '../state/atomic-file.js';
import { ingestStateDir, INGEST_CHUNK } from './ingest.js';
import { acquireStoreLock, type StoreLock } from './lock.js';
import {
  ENTRY_KINDS,
  isJsonKind,
  type EntryKind,
  type EvidenceStore,
  type GcReport,
  type IngestReport,
  type ListFilter,
  type PutResult,
  type RetentionPolicy,
  type StoreEntry,
  type StoreInput,
} from './types.js';

/*
 * Key layout (keys sort bytewise; `\0` separates parts, values never contain it):
 *   e\0<kind>\0<id>                         → entry JSON
 *   b\0trace\0<id>                           → trace bytes (zips live in objects/<kind>/<id>.zip)
 *   d\0<sha256>                              → <kind>\0<id>   (ingestion idempotency)
 *   f\0traces\0<file name>                   → <size>:<mtime>  (trace files already ingested)
 *   t\0<kind>\0<time>\0<id>                  → ""             (time index)
 *   x\0<field>\0<value>\0<kind>\0<time>\0<id> → ""             (run, session, tool, verdict, reason, ref)
 * Times in keys are fixed-width UTC (`sortableTime`), so bytewise order is time order.
 */
const SEP = '\0';
const INDEXED_FIELDS = ['run', 'session', 'tool', 'verdict', 'reason', 'ref'] as const;
type IndexField = (typeof INDEXED_FIELDS)[number];

export interface StorePaths {
  root: string;
  db: string;
  objects: string;
  lock: string;
}

export function storePaths(stateDir: string): StorePaths {
  const root = join(stateDir, 'store');
  return { root, db: join(root, 'db'), objects: join(root, 'objects'), lock: join(root, 'ward.lock') };
}

/**
 * Open the store for exclusive use by this process: Ward's lock first (fails fast naming the
 * holder), then LevelDB. Close it to release both.
 */
export async function openLevelStore(stateDir: string): Promise<LevelStore> {
  const paths = storePaths(stateDir);
  mkdirSync(paths.root, { recursive: true, mode: 0o750 });
  const lock = acquireStoreLock(paths.lock);
  const db = new ClassicLevel<string, string>(paths.db, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  try {
    await db.open();
  } catch (err) {
    lock.release();
    throw new WardError(ERROR_CODES.STORE_INVALID, `open store ${paths.db}: ${(err as Error).message}`, { cause: err });
  }
  return new LevelStore(db, lock, paths, stateDir);
}

export class LevelStore implements EvidenceStore {
  constructor(
    private readonly db: ClassicLevel<string, string>,
    private readonly lock: StoreLock,
    readonly paths: StorePaths,
    private readonly stateDir: string,
  ) {}

  /**
   * Store artifacts. Zip bodies are written durably to objects/ first; then one LevelDB batch with
   * `sync: true` adds entries and indexes, so a put that returned survives a crash, and a crash
   * before it leaves no index entry (at most an orphan object that a re-put overwrites).
   */
  async put(inputs: readonly StoreInput[]): Promise<PutResult> {
    const now = new Date().toISOString();
    return this.putDescribed(inputs.map((input) => ({ input, entry: describeArtifact(input, now) })));
  }

  private async putDescribed(items: readonly { input: StoreInput; entry: StoreEntry }[], extra: readonly [string, string][] = []): Promise<PutResult> {
    const result: PutResult = { stored: [], duplicates: 0, conflicts: [] };
    if (items.length === 0 && extra.length === 0) return result;
    const digests = await this.db.getMany(items.map((i) => key('d', i.entry.digest)));
    const existing = await this.db.getMany(items.map((i) => key('e', i.entry.kind, i.entry.id)));
    const batch = this.db.batch();
    const seen = new Set<string>();
    // Every way in describes artifacts with checked ids; this is the last line before a key or file name.
    for (const { entry } of items) checkId(`${entry.kind} id`, entry.id, { code: ERROR_CODES.STORE_INVALID, exitCode: 2 });
    items.forEach(({ input, entry }, index) => {
      const id = entry.kind + SEP + entry.id;
      if (digests[index] !== undefined || seen.has(entry.digest)) {
        result.duplicates++;
        return;
      }
      if (existing[index] !== undefined || seen.has(id)) {
        result.conflicts.push({ kind: entry.kind, id: entry.id });
        return;
      }
      seen.add(entry.digest);
      seen.add(id);
      if (isJsonKind(entry.kind)) batch.put(key('b', entry.kind, entry.id), input.bytes.toString('utf8'));
      else writeFileAtomic(this.objectPath(entry), input.bytes);
      batch.put(key('e', entry.kind, entry.id), JSON.stringify(entry));
      batch.put(key('d', entry.digest), id);
      for (const k of indexKeys(entry)) batch.put(k, '');
      result.stored.push(entry);
    });
    for (const [k, v] of extra) batch.put(k, v);
    await batch.write({ sync: true });
    return result;
  }

  async get(kind: EntryKind, id: string): Promise<StoreEntry | undefined> {
    const value = await this.db.get(key('e', kind, id));
    return value === undefined ? undefined : (JSON.parse(value) as StoreEntry);
  }

  async read(entry: StoreEntry): Promise<Buffer> {
    if (isJsonKind(entry.kind)) {
      const body = await this.db.get(key('b', entry.kind, entry.id));
      if (body === undefined) throw new WardError(ERROR_CODES.STORE_NOT_FOUND, `${entry.kind} ${entry.id} has no stored body`);
      return Buffer.from(body, 'utf8');
    }
    try {
      return readFileSync(this.objectPath(entry));
    } catch (err) {
      throw new WardError(ERROR_CODES.STORE_INVALID, `${entry.kind} ${entry.id}: stored object unreadable: ${(err as Error).message}`, { cause: err });
    }
  }

  async resolve(idOrRef: string, kind?: EntryKind): Promise<StoreEntry[]> {
    const kinds = kind ? [kind] : ENTRY_KINDS;
    const found = new Map<string, StoreEntry>();
    for (const k of kinds) {
      const exact = await this.get(k, idOrRef);
      if (exact) found.set(k + SEP + exact.id, exact);
      if (!exact && idOrRef.length >= 8 && !idOrRef.includes(SEP)) {
        for await (const [, value] of this.db.iterator(prefixRange(key('e', k, idOrRef), false))) {
          const entry = JSON.parse(value) as StoreEntry;
          found.set(k + SEP + entry.id, entry);
        }
      }
    }
    if (found.size === 0) {
      for (const field of ['ref', 'run'] as const) {
        const filter: ListFilter = field === 'run' ? { kind, run_id: idOrRef } : { kind, ref: idOrRef };
        for (const entry of await this.list(filter)) {
          found.set(entry.kind + SEP + entry.id, entry);
        }
      }
    }
    return [...found.values()];
  }

  /** Entries matching every filter, newest first by default, using the most selective index. */
  async list(filter: ListFilter): Promise<StoreEntry[]> {
    const kinds = filter.kind ? [filter.kind] : ENTRY_KINDS;
    const limit = filter.limit ?? Number.POSITIVE_INFINITY;
    const desc = filter.order !== 'asc';
    const perKind: StoreEntry[][] = [];
    for (const kind of kinds) perKind.push(await this.listKind(kind, filter, limit, desc));
    const merged = perKind.flat().sort(byTime);
    if (desc) merged.reverse();
    return merged.slice(0, limit);
  }

  private async listKind(kind: EntryKind, filter: ListFilter, limit: number, desc: boolean): Promise<StoreEntry[]> {
    const conditions = conditionsOf(filter);
    const [driver, ...rest] = conditions;
    const prefix = driver ? key('x', driver.field, clean(driver.value), kind, '') : key('t', kind, '');
    const range = timeRange(prefix, filter, desc);
    const out: StoreEntry[] = [];
    const iterator = this.db.keys(range);
    try {
      let pending: string[] = [];
      const flush = async (): Promise<boolean> => {
        const values = await this.db.getMany(pending.map((k) => key('e', kind, idAfterTime(k, prefix))));
        pending = [];
        for (const value of values) {
          if (value === undefined) continue;
          const entry = JSON.parse(value) as StoreEntry;
          if (rest.every((c) => matches(entry, c.field, c.value))) out.push(entry);
          if (out.length >= limit) return true;
        }
        return false;
      };
      for await (const k of iterator) {
        pending.push(k);
        if (pending.length >= 64 && (await flush())) return out;
      }
      if (pending.length > 0) await flush();
      return out;
    } finally {
      await iterator.close();
    }
  }

  async count(kind?: EntryKind): Promise<number> {
    let n = 0;
    for (const k of kind ? [kind] : ENTRY_KINDS) {
      for await (const _ of this.db.keys(prefixRange(key('e', k, ''), false))) n++;
    }
    return n;
  }

  /** Ingest the spool and `<state>/traces` (`ingest.ts`): one synced batch per chunk, trace-file marks in the same batch. */
  async ingest(): Promise<IngestReport> {
    return ingestStateDir(this.stateDir, {
      putDescribed: (items, marks) => this.putDescribed(items, marks.map((m): [string, string] => [key('f', 'traces', m.name), m.mark])),
      traceFileMarks: (names) => this.db.getMany(names.map((name) => key('f', 'traces', name))),
    });
  }

  /** Retention: drop entries older than the age limit, then all but the newest `maxCount` per kind. */
  async gc(policy: RetentionPolicy): Promise<GcReport> {
    const cutoff = policy.maxAgeSeconds === undefined ? undefined : new Date(policy.now.getTime() - policy.maxAgeSeconds * 1000).toISOString();
    let removed = 0;
    for (const kind of policy.kind ? [policy.kind] : ENTRY_KINDS) {
      const doomed: StoreEntry[] = [];
      let kept = 0;
      for await (const [k] of this.db.iterator({ ...prefixRange(key('t', kind, ''), true), values: false })) {
        const timePrefix = key('t', kind, '');
        const id = idAfterTime(k, timePrefix);
        const time = k.slice(timePrefix.length, timePrefix.length + SORTABLE_TIME_LENGTH);
        const tooOld = cutoff !== undefined && time < sortableTime(cutoff);
        const tooMany = policy.maxCount !== undefined && kept >= policy.maxCount;
        if (tooOld || tooMany) {
          const entry = await this.get(kind, id);
          if (entry) doomed.push(entry);
        } else kept++;
      }
      for (let i = 0; i < doomed.length; i += INGEST_CHUNK) {
        const batch = this.db.batch();
        const chunk = doomed.slice(i, i + INGEST_CHUNK);
        for (const entry of chunk) {
          batch.del(key('e', entry.kind, entry.id));
          batch.del(key('b', entry.kind, entry.id));
          batch.del(key('d', entry.digest));
          for (const k of indexKeys(entry)) batch.del(k);
        }
        await batch.write({ sync: true });
        for (const entry of chunk) if (!isJsonKind(entry.kind)) removeQuietly(this.objectPath(entry));
        removed += chunk.length;
      }
    }
    return { removed, remaining: await this.count(policy.kind) };
  }

  async close(): Promise<void> {
    try {
      await this.db.close();
    } finally {
      this.lock.release();
    }
  }

  objectPath(entry: Pick<StoreEntry, 'kind' | 'id'>): string {
    return join(this.paths.objects, entry.kind, `${entry.id}.zip`);
  }
}

function key(...parts: string[]): string {
  return parts.join(SEP);
}

/** Keys under a prefix that ends with the separator: (prefix, prefix with its last byte + 1). */
function prefixRange(prefix: string, reverse: boolean): { gt: string; lt: string; reverse: boolean } {
  return { gt: prefix, lt: prefix.endsWith(SEP) ? prefix.slice(0, -1) + '\x01' : prefix + '\uffff', reverse };
}

function timeRange(prefix: string, filter: ListFilter, desc: boolean): { gte?: string; gt?: string; lt: string; reverse: boolean } {
  const upper = filter.until ? prefix + sortableTime(filter.until) : prefix.slice(0, -1) + '\x01';
  return filter.since ? { gte: prefix + sortableTime(filter.since), lt: upper, reverse: desc } : { gt: prefix, lt: upper, reverse: desc };
}

/** `sortableTime` output is always this long: `2026-02-18T00:00:00.000000000Z`. */
const SORTABLE_TIME_LENGTH = 30;

/**
 * The id at the end of an index key `<prefix><time>\0<id>`, by position: ids are checked now, but a
 * store written before may hold one with a NUL, which splitting at the last separator would cut
 * (the entry was then never listed, so never exported or collected).
 */
function idAfterTime(indexKey: string, prefix: string): string {
  return indexKey.slice(prefix.length + SORTABLE_TIME_LENGTH + 1);
}

/** Fixed-width UTC time (nanoseconds, 4-digit year) so that string order is time order. */
export function sortableTime(rfc3339: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(rfc3339);
  if (m) return `${m[1]}.${(m[2] ?? '').padEnd(9, '0').slice(0, 9)}Z`;
  const date = new Date(rfc3339);
  if (Number.isNaN(date.getTime())) throw new WardError(ERROR_CODES.USAGE, `invalid time ${JSON.stringify(rfc3339)}`);
  return sortableTime(date.toISOString());
}

function byTime(a: StoreEntry, b: StoreEntry): number {
  const ta = sortableTime(a.time);
  const tb = sortableTime(b.time);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function clean(value: string): string {
  return value.replaceAll(SEP, '');
}

function indexKeys(entry: StoreEntry): string[] {
  const time = sortableTime(entry.time);
  const keys = [key('t', entry.kind, time, entry.id)];
  const add = (field: IndexField, value: string | undefined) => {
    if (value) keys.push(key('x', field, clean(value), entry.kind, time, entry.id));
  };
  add('run', entry.run_id);
  add('session', entry.session_id);
  add('verdict', entry.verdict);
  for (const tool of entry.tool_names ?? []) add('tool', tool);
  for (const reason of entry.reason_codes ?? []) add('reason', reason);
  for (const ref of entry.refs ?? []) add('ref', ref);
  return keys;
}

interface Condition {
  field: IndexField;
  value: string;
}

function conditionsOf(filter: ListFilter): Condition[] {
  const out: Condition[] = [];
  if (filter.run_id) out.push({ field: 'run', value: filter.run_id });
  if (filter.session_id) out.push({ field: 'session', value: filter.session_id });
  if (filter.reason_code) out.push({ field: 'reason', value: filter.reason_code });
  if (filter.tool_name) out.push({ field: 'tool', value: filter.tool_name });
  if (filter.ref) out.push({ field: 'ref', value: filter.ref });
  if (filter.verdict) out.push({ field: 'verdict', value: filter.verdict });
  return out;
}

function matches(entry: StoreEntry, field: IndexField, value: string): boolean {
  switch (field) {
    case 'run':
      return entry.run_id === value;
    case 'session':
      return entry.session_id === value;
    case 'verdict':
      return entry.verdict === value;
    case 'tool':
      return (entry.tool_names ?? []).includes(value);
    case 'reason':
      return (entry.reason_codes ?? []).includes(value);
    case 'ref':
      return (entry.refs ?? []).includes(value);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
