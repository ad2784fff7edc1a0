import { type EntryKind, type ListFilter, type StoreEntry } from './types.js';
import { sortableTime } from './level.js';

/**
 * The SQL of the PostgreSQL store that is worth reading on its own: entry rows and the list query.
 * Pure (no I/O). Order is LevelDB's exactly: `time_key` (fixed-width time), then `id`, both in the
 * "C" collation (bytewise, as LevelDB keys compare), then `kind_rank` (the kind in `ENTRY_KINDS`
 * order, a generated column: see migration 001), where LevelDB's per-kind merge leaves same-time,
 * same-id entries of several kinds.
 */

export const ENTRY_COLUMNS = [
  'kind', 'id', 'digest', 'size', 'time', 'time_key', 'ingested_at', 'run_id', 'session_id', 'verdict',
  'pack_type', 'refs', 'tool_names', 'reason_codes', 'entry', 'body',
] as const;


/**
 * PostgreSQL text cannot hold NUL. LevelDB strips it from index keys (`clean`); the indexed columns
 * do the same. The entry itself is JSON text, where NUL is escaped, so it is kept exactly.
 */
export function clean(value: string): string {
  return value.replaceAll('\0', '');
}

function optional(value: string | undefined): string | null {
  return value ? clean(value) : null;
}

/** One row's values, in `ENTRY_COLUMNS` order. */
export function entryRow(entry: StoreEntry, body: Buffer): unknown[] {
  return [
    entry.kind,
    entry.id,
    entry.digest,
    entry.size,
    entry.time,
    sortableTime(entry.time),
    entry.ingested_at,
    optional(entry.run_id),
    optional(entry.session_id),
    optional(entry.verdict),
    optional(entry.pack_type),
    (entry.refs ?? []).map(clean),
    (entry.tool_names ?? []).map(clean),
    (entry.reason_codes ?? []).map(clean),
    JSON.stringify(entry),
    body,
  ];
}

/** A multi-row INSERT that skips rows whose (kind, id) or digest is taken, in row order. */
export function insertEntriesSql(rows: number): string {
  const width = ENTRY_COLUMNS.length;
  const tuples = Array.from({ length: rows }, (_, r) => `(${ENTRY_COLUMNS.map((_, c) => `$${r * width + c + 1}`).join(', ')})`);
  return `INSERT INTO ward_store_entries (${ENTRY_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING RETURNING kind, id, digest`;
}

export interface SqlQuery {
  text: string;
  values: unknown[];
}

/** `list` as one query: every filter LevelDB applies, its order and its limit. */
export function listQuery(filter: ListFilter): SqlQuery {
  const values: unknown[] = [];
  const where: string[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (filter.kind) where.push(`kind = ${param(filter.kind)}`);
  if (filter.run_id) where.push(`run_id = ${param(clean(filter.run_id))}`);
  if (filter.session_id) where.push(`session_id = ${param(clean(filter.session_id))}`);
  if (filter.reason_code) where.push(`reason_codes @> ARRAY[${param(clean(filter.reason_code))}]::text[]`);
  if (filter.tool_name) where.push(`tool_names @> ARRAY[${param(clean(filter.tool_name))}]::text[]`);
  if (filter.ref) where.push(`refs @> ARRAY[${param(clean(filter.ref))}]::text[]`);
  if (filter.verdict) where.push(`verdict = ${param(clean(filter.verdict))}`);
  if (filter.since) where.push(`time_key >= ${param(sortableTime(filter.since))}`);
  if (filter.until) where.push(`time_key < ${param(sortableTime(filter.until))}`);
  const dir = filter.order === 'asc' ? 'ASC' : 'DESC';
  let text = `SELECT entry FROM ward_store_entries${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY time_key ${dir}, id ${dir}, kind_rank ${dir}`;
  if (filter.limit !== undefined && Number.isFinite(filter.limit)) text += ` LIMIT ${param(Math.max(0, Math.floor(filter.limit)))}`;
  return { text, values };
}

/** A row of `resolveQuery`: which rule matched it (0 id or id prefix, 1 ref, 2 run id) and its order keys. */
export interface ResolveRow {
  tier: number;
  kind: EntryKind;
  id: string;
  kind_rank: number;
  time_key: string;
  entry: string;
}

/**
 * Every rule of `resolve` in one round trip (the daemon answers `GET /v1/traces/{id}` with it):
 * entries of `kinds` whose id is `idOrRef` or, for 8 or more characters, starts with it (LIKE on
 * the "C"-collated key is a btree range), whose refs hold it, and whose run id is it. The caller
 * applies LevelDB's precedence and order (`resolveOrder`). `idOrRef` must hold no NUL and must not
 * be empty.
 */
export function resolveQuery(idOrRef: string, kinds: readonly EntryKind[]): SqlQuery {
  const prefix = idOrRef.length >= 8 ? `${idOrRef.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const cols = 'kind, id, kind_rank, time_key, entry';
  return {
    text: [
      `SELECT 0 AS tier, ${cols} FROM ward_store_entries WHERE kind = ANY($1::text[]) AND (id = $2${prefix ? ` OR id LIKE $3 ESCAPE '\\'` : ''})`,
      `SELECT 1, ${cols} FROM ward_store_entries WHERE kind = ANY($1::text[]) AND refs @> ARRAY[$2]::text[]`,
      `SELECT 2, ${cols} FROM ward_store_entries WHERE kind = ANY($1::text[]) AND run_id = $2`,
    ].join(' UNION ALL '),
    values: prefix ? [kinds, idOrRef, prefix] : [kinds, idOrRef],
  };
}

/**
 * LevelDB's `resolve` over `resolveQuery` rows: per kind the exact id, else every id with the
 * prefix, by kind then id; only when no id matched, the ref matches then the run-id matches, each
 * newest first (list order), each entry once.
 */
export function resolveOrder(idOrRef: string, rows: readonly ResolveRow[]): StoreEntry[] {
  const byId = rows.filter((r) => r.tier === 0);
  let chosen: ResolveRow[];
  if (byId.length > 0) {
    const exactKinds = new Set(byId.filter((r) => r.id === idOrRef).map((r) => r.kind));
    chosen = byId.filter((r) => !exactKinds.has(r.kind) || r.id === idOrRef).sort((a, b) => a.kind_rank - b.kind_rank || compare(a.id, b.id));
  } else {
    chosen = rows.filter((r) => r.tier !== 0).sort((a, b) => a.tier - b.tier || compare(b.time_key, a.time_key) || compare(b.id, a.id) || b.kind_rank - a.kind_rank);
  }
  const found = new Map<string, string>();
  for (const r of chosen) {
    const key = `${r.kind}\0${r.id}`;
    if (!found.has(key)) found.set(key, r.entry);
  }
  return [...found.values()].map((e) => JSON.parse(e) as StoreEntry);
}

/** Bytewise order of ASCII keys (ids and `time_key` are ASCII: `ids.ts`, `sortableTime`). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
