/**
 * The evidence store (src/store/postgres.ts, docs/store.md "PostgreSQL"). One row per entry: the
 * entry exactly as `describeArtifact` produced it (`entry`, JSON text, so `list`/`show` print the
 * same bytes as the LevelDB store), its body (`body`, the exact stored bytes of every kind: traces
 * and captures as well as runpack and pack zips), and the fields the list filters read as columns.
 *
 * - `(kind, id)` is the key and `digest` is unique across kinds: the same two rules as LevelDB's
 *   `e\0<kind>\0<id>` and `d\0<sha256>` keys, so a second put of the same bytes is a duplicate and
 *   other bytes under a stored id are a conflict, whichever replica writes first.
 * - List order is LevelDB's: `time_key` (`sortableTime(time)`, fixed width, nanoseconds: string
 *   order is time order), then `id`, both in the "C" collation (bytewise, whatever the database's
 *   default collation; a btree on it also answers id-prefix lookups), then `kind_rank` (the kind in
 *   ENTRY_KINDS order, where LevelDB's per-kind merge leaves equal times and ids). Every ordered
 *   index ends in exactly those three columns, so a newest-first page is an index scan, not a sort.
 * - Multi-valued fields (refs, tool names, reason codes) are arrays with GIN indexes: one row per
 *   trace keeps the daemon's group commit to one insert per trace (a side table would be ~5).
 *   `refs` (nearly unique values, searched by every `resolve`, i.e. every GET /v1/traces/{id}) is
 *   indexed without GIN's pending list, which every search would otherwise scan until a vacuum.
 * - `ward_store_ingested_files` remembers trace files read from a host's `<state>/traces`
 *   (`source` names the host and directory), like LevelDB's `f\0traces\0<name>` keys.
 */
export const STORE_SCHEMA = `
CREATE TABLE ward_store_entries (
  kind         text NOT NULL CHECK (kind IN ('trace', 'capture', 'runpack', 'pack')),
  id           text COLLATE "C" NOT NULL,
  digest       text NOT NULL,
  size         bigint NOT NULL,
  time         text NOT NULL,
  time_key     text COLLATE "C" NOT NULL,
  ingested_at  text NOT NULL,
  run_id       text,
  session_id   text,
  verdict      text,
  pack_type    text,
  refs         text[] NOT NULL DEFAULT '{}',
  tool_names   text[] NOT NULL DEFAULT '{}',
  reason_codes text[] NOT NULL DEFAULT '{}',
  entry        text NOT NULL,
  body         bytea NOT NULL,
  kind_rank    smallint NOT NULL GENERATED ALWAYS AS (CASE kind WHEN 'trace' THEN 0 WHEN 'capture' THEN 1 WHEN 'runpack' THEN 2 ELSE 3 END) STORED,
  CONSTRAINT ward_store_entries_pkey PRIMARY KEY (kind, id),
  CONSTRAINT ward_store_entries_digest_key UNIQUE (digest)
);
CREATE INDEX ward_store_entries_order ON ward_store_entries (time_key, id, kind_rank);
CREATE INDEX ward_store_entries_kind_order ON ward_store_entries (kind, time_key, id, kind_rank);
CREATE INDEX ward_store_entries_run ON ward_store_entries (run_id, time_key, id, kind_rank) WHERE run_id IS NOT NULL;
CREATE INDEX ward_store_entries_session ON ward_store_entries (session_id, time_key, id, kind_rank) WHERE session_id IS NOT NULL;
CREATE INDEX ward_store_entries_verdict ON ward_store_entries (verdict, time_key, id, kind_rank) WHERE verdict IS NOT NULL;
CREATE INDEX ward_store_entries_refs ON ward_store_entries USING gin (refs) WITH (fastupdate = off);
CREATE INDEX ward_store_entries_tools ON ward_store_entries USING gin (tool_names);
CREATE INDEX ward_store_entries_reasons ON ward_store_entries USING gin (reason_codes);
CREATE TABLE ward_store_ingested_files (
  source text NOT NULL,
  name   text NOT NULL,
  mark   text NOT NULL,
  PRIMARY KEY (source, name)
);
`;
