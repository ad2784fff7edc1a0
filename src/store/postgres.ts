import { hostname } from 'node:os';
import { resolve as resolvePath, join } from 'node:path';
import type pg from 'pg';
import { ERROR_CODES, WardError } from '../errors.js';
import { migrate, requireCurrentSchema, PgPool, type PgConnectionConfig, type PgPoolOptions } from '../pg/index.js';
import { describeArtifact } from './describe.js';
import { checkId } from './ids.js';
import { ingestStateDir, type DescribedInput, type TraceFileMark } from './ingest.js';
import { clean, ENTRY_COLUMNS, entryRow, insertEntriesSql, listQuery, resolveOrder, resolveQuery, type ResolveRow } from './postgres-sql.js';
import { sortableTime } from './level.js';
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

/**
 * The evidence store on PostgreSQL (docs/store.md "PostgreSQL"): the same contract and the same
 * answers as the LevelDB store (`level.ts`), shared by every replica and CLI pointed at the
 * database. Nothing is locked: PostgreSQL serializes writers, the unique keys decide races.
 *
 * `put` is one transaction for the whole batch and resolves after COMMIT: it is the daemon's group
 * commit. A batch that fits one statement is one INSERT (autocommit: one round trip); larger
 * batches are several INSERTs inside BEGIN … COMMIT.
 */

/** Rows and body bytes per INSERT statement (PostgreSQL allows 65,535 parameters). */
const STATEMENT_ROWS = 1_000;
const STATEMENT_BYTES = 16 * 1024 * 1024;

export interface PgStoreOptions {
  /** Where the database is (a pool is created and closed with the store)… */
  config?: PgConnectionConfig;
  /** …or a pool the caller owns (left open by `close`). */
  pool?: PgPool;
  poolOptions?: PgPoolOptions;
  /** The local state directory whose spool and `traces/` `ingest()` reads (default: none: nothing to ingest). */
  stateDir?: string;
  /** Apply pending migrations first (`ward serve`, `ward store migrate`); otherwise refuse a schema that is not current. */
  migrate?: boolean;
}

export async function openPgStore(options: PgStoreOptions): Promise<PgEvidenceStore> {
  if (!options.pool && !options.config) throw new WardError(ERROR_CODES.INTERNAL, 'openPgStore needs a pool or a connection config');
  const owned = !options.pool;
  const pool = options.pool ?? new PgPool(options.config!, options.poolOptions);
  try {
    if (options.migrate) await migrate(pool);
    else await requireCurrentSchema(pool);
  } catch (err) {
    if (owned) await pool.close();
    throw pool.classify(err);
  }
  return new PgEvidenceStore(pool, { owned, ...(options.stateDir !== undefined ? { stateDir: options.stateDir } : {}) });
}

export class PgEvidenceStore implements EvidenceStore {
  private readonly owned: boolean;
  private readonly stateDir: string | undefined;

  constructor(
    readonly db: PgPool,
    options: { owned?: boolean; stateDir?: string } = {},
  ) {
    this.owned = options.owned ?? false;
    this.stateDir = options.stateDir;
  }

  async put(inputs: readonly StoreInput[]): Promise<PutResult> {
    const now = new Date().toISOString();
    return this.putDescribed(inputs.map((input) => ({ input, entry: describeArtifact(input, now) })), []);
  }

  /**
   * LevelDB's rules, row by row in batch order: an item is stored when neither its digest nor its
   * (kind, id) is taken, by the database or by an earlier item of the batch. `ON CONFLICT DO
   * NOTHING` over the rows in order is exactly that; whatever was skipped is then a duplicate when
   * its digest was already there (before the batch, or stored by an earlier item), else a conflict.
   */
  private async putDescribed(items: readonly DescribedInput[], marks: readonly TraceFileMark[]): Promise<PutResult> {
    if (items.length === 0 && marks.length === 0) return { stored: [], duplicates: 0, conflicts: [] };
    // Every way in describes artifacts with checked ids; this is the last line before a key.
    for (const { entry } of items) checkId(`${entry.kind} id`, entry.id, { code: ERROR_CODES.STORE_INVALID, exitCode: 2 });
    const chunks = statementChunks(items);
    const run = async (q: Queryable) => {
      const returned: { kind: string; id: string; digest: string }[] = [];
      for (const chunk of chunks) {
        const res = await q.query<{ kind: string; id: string; digest: string }>(insertEntriesSql(chunk.length), chunk.flatMap((i) => entryRow(i.entry, i.input.bytes)));
        returned.push(...res.rows);
      }
      if (marks.length) await q.query(MARKS_SQL, [this.traceSource(), marks.map((m) => m.name), marks.map((m) => m.mark)]);
      const storedAt = storedPositions(items, returned);
      const skipped = items.filter((_, index) => !storedAt.has(index));
      const present = skipped.length
        ? new Set((await q.query<{ digest: string }>('SELECT digest FROM ward_store_entries WHERE digest = ANY($1::text[])', [skipped.map((i) => i.entry.digest)])).rows.map((r) => r.digest))
        : new Set<string>();
      return classify(items, storedAt, present);
    };
    try {
      if (chunks.length <= 1 && marks.length === 0) return await run(this.db);
      return await this.db.transaction((client) => run({ query: (text, values) => client.query(text, values) }));
    } catch (err) {
      throw this.db.classify(err);
    }
  }

  async get(kind: EntryKind, id: string): Promise<StoreEntry | undefined> {
    if (id.includes('\0')) return undefined;
    const res = await this.db.query<{ entry: string }>('SELECT entry FROM ward_store_entries WHERE kind = $1 AND id = $2', [kind, id]);
    return res.rows[0] ? (JSON.parse(res.rows[0].entry) as StoreEntry) : undefined;
  }

  /**
   * Reads asked for in the same tick (export reads hundreds ahead) are fetched together, a chunk per
   * query, so an export costs a round trip per chunk rather than per entry, and never queues more
   * queries than the pool has connections.
   */
  read(entry: StoreEntry): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.reads.push({ entry, resolve, reject });
      if (this.reads.length === 1) queueMicrotask(() => void this.flushReads());
    });
  }

  private reads: PendingRead[] = [];

  private async flushReads(): Promise<void> {
    const pending = this.reads;
    this.reads = [];
    for (const chunk of readChunks(pending)) {
      const wanted = chunk.filter((r) => !r.entry.id.includes('\0'));
      let bodies: Map<string, Buffer>;
      try {
        // One body (a `show`, a GET) by its key; several with one join.
        const res =
          wanted.length === 0
            ? { rows: [] }
            : wanted.length === 1
              ? await this.db.query<{ kind: string; id: string; body: Buffer }>('SELECT kind, id, body FROM ward_store_entries WHERE kind = $1 AND id = $2', [wanted[0]!.entry.kind, wanted[0]!.entry.id])
              : await this.db.query<{ kind: string; id: string; body: Buffer }>(
                  'SELECT e.kind, e.id, e.body FROM ward_store_entries e JOIN unnest($1::text[], $2::text[]) AS w(kind, id) ON e.kind = w.kind AND e.id = w.id',
                  [wanted.map((r) => r.entry.kind), wanted.map((r) => r.entry.id)],
                );
        bodies = new Map(res.rows.map((r) => [`${r.kind}\0${r.id}`, r.body]));
      } catch (err) {
        for (const r of chunk) r.reject(err);
        continue;
      }
      for (const r of chunk) {
        const body = bodies.get(`${r.entry.kind}\0${r.entry.id}`);
        if (body) r.resolve(body);
        else r.reject(this.missingBody(r.entry));
      }
    }
  }

  private missingBody(entry: StoreEntry): WardError {
    if (isJsonKind(entry.kind)) return new WardError(ERROR_CODES.STORE_NOT_FOUND, `${entry.kind} ${entry.id} has no stored body`);
    return new WardError(ERROR_CODES.STORE_INVALID, `${entry.kind} ${entry.id}: stored object unreadable: not in ${this.db.display}`);
  }

  async list(filter: ListFilter): Promise<StoreEntry[]> {
    const q = listQuery(filter);
    const res = await this.db.query<{ entry: string }>(q.text, q.values);
    return res.rows.map((r) => JSON.parse(r.entry) as StoreEntry);
  }

  /** Full id, else every id with the prefix (≥ 8 characters) per kind, else refs, then run ids: LevelDB's rules and order, one query. */
  async resolve(idOrRef: string, kind?: EntryKind): Promise<StoreEntry[]> {
    const kinds = kind ? [kind] : ENTRY_KINDS;
    // An empty lookup (after NUL, which no id holds, is dropped) filters nothing in LevelDB's
    // fallback lists: every entry. Rare enough to answer with those lists.
    if (idOrRef.includes('\0') || idOrRef === '') {
      const found = new Map<string, StoreEntry>();
      for (const filter of [{ kind, ref: idOrRef }, { kind, run_id: idOrRef }] satisfies ListFilter[]) {
        for (const entry of await this.list(filter)) if (!found.has(`${entry.kind}\0${entry.id}`)) found.set(`${entry.kind}\0${entry.id}`, entry);
      }
      return [...found.values()];
    }
    const q = resolveQuery(idOrRef, kinds);
    return resolveOrder(idOrRef, (await this.db.query<ResolveRow>(q.text, q.values)).rows);
  }

  async count(kind?: EntryKind): Promise<number> {
    const res = kind
      ? await this.db.query<{ n: string }>('SELECT count(*) AS n FROM ward_store_entries WHERE kind = $1', [kind])
      : await this.db.query<{ n: string }>('SELECT count(*) AS n FROM ward_store_entries');
    return Number(res.rows[0]!.n);
  }

  /** Ingest this host's spool and `<state>/traces` (`ingest.ts`); without a state directory there is nothing to ingest. */
  async ingest(): Promise<IngestReport> {
    if (this.stateDir === undefined) return { files: 0, stored: [], duplicates: 0, conflicts: [], rejected: [] };
    return ingestStateDir(this.stateDir, {
      putDescribed: (items, marks) => this.putDescribed(items, marks),
      traceFileMarks: async (names) => {
        if (names.length === 0) return [];
        const res = await this.db.query<{ name: string; mark: string }>('SELECT name, mark FROM ward_store_ingested_files WHERE source = $1 AND name = ANY($2::text[])', [
          this.traceSource(),
          names.map(clean),
        ]);
        const marks = new Map(res.rows.map((r) => [r.name, r.mark]));
        return names.map((n) => marks.get(clean(n)));
      },
    });
  }

  /** LevelDB's retention: per kind, newest first, entries older than the cutoff or beyond `maxCount` go. */
  async gc(policy: RetentionPolicy): Promise<GcReport> {
    const cutoff = policy.maxAgeSeconds === undefined ? null : sortableTime(new Date(policy.now.getTime() - policy.maxAgeSeconds * 1000).toISOString());
    const maxCount = policy.maxCount === undefined ? null : Math.max(0, Math.floor(policy.maxCount));
    let removed = 0;
    if (cutoff !== null || maxCount !== null) {
      for (const kind of policy.kind ? [policy.kind] : ENTRY_KINDS) {
        const res = await this.db.query(GC_SQL, [kind, cutoff, maxCount]);
        removed += res.rowCount ?? 0;
      }
    }
    return { removed, remaining: await this.count(policy.kind) };
  }

  async close(): Promise<void> {
    if (this.owned) await this.db.close();
  }

  /** Which `<state>/traces` a remembered trace file belongs to: several hosts share the database. */
  private traceSource(): string {
    return `${hostname()}:${resolvePath(join(this.stateDir ?? '.', 'traces'))}`;
  }
}

interface Queryable {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

const MARKS_SQL = `INSERT INTO ward_store_ingested_files (source, name, mark)
  SELECT $1, name, mark FROM unnest($2::text[], $3::text[]) AS m(name, mark)
  ON CONFLICT (source, name) DO UPDATE SET mark = EXCLUDED.mark`;

const GC_SQL = `DELETE FROM ward_store_entries e USING (
    SELECT id, time_key, row_number() OVER (ORDER BY time_key DESC, id DESC) AS rn
    FROM ward_store_entries WHERE kind = $1
  ) r
  WHERE e.kind = $1 AND e.id = r.id
    AND (($2::text IS NOT NULL AND r.time_key < $2::text) OR ($3::bigint IS NOT NULL AND r.rn > $3::bigint))`;

interface PendingRead {
  entry: StoreEntry;
  resolve: (body: Buffer) => void;
  reject: (err: unknown) => void;
}

/** Bodies per read query: a count, and a byte budget from the entries' sizes (packs can be large). */
const READ_ROWS = 256;
const READ_BYTES = 32 * 1024 * 1024;

function readChunks(reads: readonly PendingRead[]): PendingRead[][] {
  const chunks: PendingRead[][] = [];
  let current: PendingRead[] = [];
  let bytes = 0;
  for (const r of reads) {
    if (current.length > 0 && (current.length >= READ_ROWS || bytes + r.entry.size > READ_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(r);
    bytes += r.entry.size ?? 0;
  }
  if (current.length) chunks.push(current);
  return chunks;
}

function statementChunks(items: readonly DescribedInput[]): DescribedInput[][] {
  const chunks: DescribedInput[][] = [];
  let current: DescribedInput[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && (current.length >= STATEMENT_ROWS || bytes + item.input.bytes.length > STATEMENT_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.input.bytes.length;
  }
  if (current.length) chunks.push(current);
  return chunks;
}

/** Batch positions of the rows the INSERTs returned (a stored digest is unique, so it names its item). */
function storedPositions(items: readonly DescribedInput[], returned: readonly { kind: string; id: string; digest: string }[]): Map<number, StoreEntry> {
  const byDigest = new Map(returned.map((r) => [r.digest, r]));
  const out = new Map<number, StoreEntry>();
  items.forEach(({ entry }, index) => {
    const row = byDigest.get(entry.digest);
    if (row && row.kind === entry.kind && row.id === entry.id) {
      out.set(index, entry);
      byDigest.delete(entry.digest);
    }
  });
  return out;
}

function classify(items: readonly DescribedInput[], storedAt: Map<number, StoreEntry>, present: Set<string>): PutResult {
  const result: PutResult = { stored: [], duplicates: 0, conflicts: [] };
  const storedDigestAt = new Map<string, number>();
  for (const [index, entry] of storedAt) storedDigestAt.set(entry.digest, index);
  items.forEach(({ entry }, index) => {
    const stored = storedAt.get(index);
    if (stored) {
      result.stored.push(stored);
      return;
    }
    const by = storedDigestAt.get(entry.digest);
    // Present and not stored by this batch: it was there before (or another writer won the race).
    const duplicate = by === undefined ? present.has(entry.digest) : by < index;
    if (duplicate) result.duplicates++;
    else result.conflicts.push({ kind: entry.kind, id: entry.id });
  });
  return result;
}

export { ENTRY_COLUMNS };
