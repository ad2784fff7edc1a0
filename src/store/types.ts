import type { JsonObject } from '../canon/index.js';
/**
 * The evidence store contract. Ward's local implementation is LevelDB (`level.ts`); the daemon
 * depends only on these interfaces so another backend (e.g. PostgreSQL) can implement them.
 */

export type EntryKind = 'trace' | 'capture' | 'runpack' | 'pack';
export const ENTRY_KINDS: readonly EntryKind[] = ['trace', 'capture', 'runpack', 'pack'];

/** Kinds whose bodies are small JSON documents kept inside the database rather than as object files. */
export function isJsonKind(kind: EntryKind): kind is 'trace' | 'capture' {
  return kind === 'trace' || kind === 'capture';
}

/** What the store knows about one stored artifact (the indexable facts, no body). */
export interface StoreEntry {
  kind: EntryKind;
  /** trace and capture: event_id; runpack: manifest_digest; pack: pack_id. */
  id: string;
  /** sha256 of the stored bytes: the idempotency key of ingestion. */
  digest: string;
  size: number;
  /** When the artifact says it happened (RFC3339Nano UTC); the ingest time when it says nothing useful. */
  time: string;
  ingested_at: string;
  run_id?: string;
  session_id?: string;
  /** Trace ids, pack source refs and similar secondary ids `show` resolves. */
  refs?: string[];
  tool_names?: string[];
  verdict?: string;
  reason_codes?: string[];
  pack_type?: string;
}

/** An artifact to store: its kind and exact bytes (trace JSON, runpack or pack zip). */
export interface StoreInput {
  kind: EntryKind;
  bytes: Buffer;
  /**
   * Trace only: the record `bytes` were serialized from (at least the fields the index reads,
   * `traceIndexFields`), when the writer has it — the daemon — so the store does not parse the bytes
   * again. Never set it for bytes that came from elsewhere.
   */
  fields?: JsonObject;
}

export interface ListFilter {
  kind?: EntryKind | undefined;
  run_id?: string | undefined;
  session_id?: string | undefined;
  tool_name?: string | undefined;
  verdict?: string | undefined;
  reason_code?: string | undefined;
  /** A secondary id: a trace's trace_id, a pack's source_ref, a runpack's run_id. */
  ref?: string | undefined;
  /** Inclusive lower bound on `time` (RFC 3339). */
  since?: string | undefined;
  /** Exclusive upper bound on `time` (RFC 3339). */
  until?: string | undefined;
  limit?: number | undefined;
  /** Newest first unless `asc`. */
  order?: 'asc' | 'desc' | undefined;
}

export interface PutResult {
  stored: StoreEntry[];
  /** Already present with the same bytes: nothing written. */
  duplicates: number;
  /** Same id, different bytes: refused, the stored evidence is kept. */
  conflicts: { kind: EntryKind; id: string }[];
}

export interface IngestReport extends PutResult {
  /** Spool files read in this run. */
  files: number;
  /** Spool files that were not valid artifacts, moved to `spool/rejected/`. */
  rejected: { file: string; error: string }[];
}

export interface RetentionPolicy {
  /** Remove entries whose `time` is older than this many seconds before `now`. */
  maxAgeSeconds?: number | undefined;
  /** Keep at most this many entries per kind (newest kept). */
  maxCount?: number | undefined;
  kind?: EntryKind | undefined;
  now: Date;
}

export interface GcReport {
  removed: number;
  remaining: number;
}

/** Decision records by id, time, run, session, tool, verdict and reason code. */
export interface TraceStore {
  put(inputs: readonly StoreInput[]): Promise<PutResult>;
  get(kind: EntryKind, id: string): Promise<StoreEntry | undefined>;
  /** The stored bytes of an entry. */
  read(entry: StoreEntry): Promise<Buffer>;
  list(filter: ListFilter): Promise<StoreEntry[]>;
  /** Resolve a full id, a unique id prefix (≥ 8 characters) or a secondary ref (trace_id, run_id). */
  resolve(idOrRef: string, kind?: EntryKind): Promise<StoreEntry[]>;
}

/** Runpacks and packs; the same operations over zip artifacts. */
export type PackStore = TraceStore;

/** A store owned by this process: ingestion from the spool, retention, and release of the lock. */
export interface EvidenceStore extends TraceStore {
  ingest(): Promise<IngestReport>;
  gc(policy: RetentionPolicy): Promise<GcReport>;
  count(kind?: EntryKind): Promise<number>;
  close(): Promise<void>;
}
