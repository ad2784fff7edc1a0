import { formatRFC3339Nano, isJsonObject, nowUTC, parseJsonText, type JsonObject, type JsonValue } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import {
  KILL_SWITCH_STATE_SCHEMA_ID,
  KILL_SWITCH_STATE_SCHEMA_VERSION,
  killSwitchStateJson,
  parseKillSwitchState,
  type KillSwitchEntry,
  type KillSwitchState,
} from '../gate/kill-switch.js';
import type pg from 'pg';
import type { PgPool } from '../pg/index.js';
import type { PolicyPublication } from './control-policy.js';

/**
 * Reading and writing the control plane's state in PostgreSQL (tables of migration 3). Writers
 * validate with the same strict parsers the replicas use; every write is one statement or one
 * transaction, and the tables' triggers bump the topic's version and NOTIFY on commit. Reads of a
 * topic are one statement, so the version and the rows come from one snapshot.
 */

export const CONTROL_TOPICS = ['kill_switch', 'jobs', 'policy', 'pins'] as const;
export type ControlTopic = (typeof CONTROL_TOPICS)[number];
export type ControlVersions = Record<ControlTopic, number>;

/** The channel of the tables' NOTIFY; the payload is `<topic>:<version>`. */
export const CONTROL_CHANNEL = 'ward_control';

/** What the readers need: the pool, or the follower's own dedicated connection. */
export interface ControlReader {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export async function readVersions(db: ControlReader): Promise<ControlVersions> {
  const rows = (await db.query<{ topic: string; version: string }>('SELECT topic, version FROM ward_control_versions')).rows;
  const out = { kill_switch: 0, jobs: 0, policy: 0, pins: 0 } as ControlVersions;
  for (const r of rows) if ((CONTROL_TOPICS as readonly string[]).includes(r.topic)) out[r.topic as ControlTopic] = Number(r.version);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Kill switch

/**
 * One kill-switch entry, validated by the state parser itself (a state holding just this entry),
 * in the JSON form `ward kill-switch` files use. `created_at` defaults to now.
 */
export function normalizeKillSwitchEntry(value: JsonValue): { entry: KillSwitchEntry; json: JsonObject } {
  if (!isJsonObject(value)) throw new WardError(ERROR_CODES.KILL_SWITCH_INVALID, 'parse kill switch state: a kill-switch entry must be a JSON object');
  const withTime: JsonObject = 'created_at' in value ? value : { ...value, created_at: formatRFC3339Nano(nowUTC()) };
  const state = parseKillSwitchState(JSON.stringify({ entries: [withTime] }));
  return { entry: state.entries[0]!, json: (killSwitchStateJson(state)['entries'] as JsonObject[])[0]! };
}

/** Add an entry, or replace the entry with the same id. */
export async function putKillSwitchEntry(db: PgPool, value: JsonValue, by: string): Promise<{ entry: JsonObject; version: number }> {
  const { entry, json } = normalizeKillSwitchEntry(value);
  await db.query(
    `INSERT INTO ward_kill_switch_entries (id, entry_json, updated_by) VALUES ($1, $2, $3)
     ON CONFLICT (id) DO UPDATE SET entry_json = EXCLUDED.entry_json, updated_by = EXCLUDED.updated_by, updated_at = now()`,
    [entry.id, JSON.stringify(json), by],
  );
  return { entry: json, version: (await readVersions(db)).kill_switch };
}

/** Set `enabled: false` on an entry (kept, so the record of what was stopped stays). */
export async function disableKillSwitchEntry(db: PgPool, id: string, by: string): Promise<{ entry: JsonObject; version: number }> {
  const entry = await db.transaction(async (client) => {
    const row = (await client.query<{ entry_json: string }>('SELECT entry_json FROM ward_kill_switch_entries WHERE id = $1 FOR UPDATE', [id])).rows[0];
    if (!row) throw notFound(`kill-switch entry ${JSON.stringify(id)}`, 'ward cluster kill-switch list shows the entries');
    const { json } = normalizeKillSwitchEntry({ ...(parseJsonText(row.entry_json) as JsonObject), enabled: false });
    await client.query('UPDATE ward_kill_switch_entries SET entry_json = $2, updated_by = $3, updated_at = now() WHERE id = $1', [id, JSON.stringify(json), by]);
    return json;
  });
  return { entry, version: (await readVersions(db)).kill_switch };
}

export interface KillSwitchSnapshot {
  version: number;
  state: KillSwitchState;
  /** Who last changed each entry, and when (by id). */
  meta: Record<string, { updated_at: string; updated_by: string }>;
}

/**
 * The cluster's kill-switch state, parsed strictly as one `gait.gate.kill_switch_state` document.
 * Throws (`ERR_KILL_SWITCH_INVALID`) when any row does not parse or a row's key is not its entry's
 * id: a replica then treats the kill switch as unavailable rather than enforce part of it.
 */
export async function readKillSwitch(db: ControlReader): Promise<KillSwitchSnapshot> {
  const rows = (
    await db.query<{ version: string; id: string | null; entry_json: string | null; updated_at: Date | null; updated_by: string | null }>(
      `SELECT v.version, e.id, e.entry_json, e.updated_at, e.updated_by
         FROM ward_control_versions v LEFT JOIN ward_kill_switch_entries e ON true
        WHERE v.topic = 'kill_switch' ORDER BY e.id`,
    )
  ).rows;
  const present = rows.filter((r) => r.id !== null);
  const text = `{"schema_id":${JSON.stringify(KILL_SWITCH_STATE_SCHEMA_ID)},"schema_version":${JSON.stringify(KILL_SWITCH_STATE_SCHEMA_VERSION)},"entries":[${present.map((r) => r.entry_json).join(',')}]}`;
  const state = parseKillSwitchState(text);
  state.entries.forEach((entry, i) => {
    if (entry.id !== present[i]!.id) {
      throw new WardError(ERROR_CODES.KILL_SWITCH_INVALID, `parse kill switch state: row ${JSON.stringify(present[i]!.id)} holds entry ${JSON.stringify(entry.id)}`);
    }
  });
  const meta: KillSwitchSnapshot['meta'] = {};
  for (const r of present) meta[r.id!] = { updated_at: r.updated_at!.toISOString(), updated_by: r.updated_by ?? '' };
  return { version: Number(rows[0]?.version ?? 0), state, meta };
}

// ---------------------------------------------------------------------------------------------
// Emergency stops

/** The job ids the decision service accepts (src/decision-service/job-state.ts uses the same rule). */
const JOB_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export type JobControlStatus = 'emergency_stopped' | 'running';

export interface JobControl {
  job_id: string;
  status: JobControlStatus;
  reason: string;
  updated_at: string;
  updated_by: string;
}

export function checkJobId(jobId: string): string {
  if (!JOB_ID.test(jobId) || jobId.includes('..')) {
    throw new WardError(ERROR_CODES.USAGE, `invalid job id ${JSON.stringify(jobId)}: 1 to 128 of A-Z a-z 0-9 _ . - (starting with a letter or digit, no "..")`);
  }
  return jobId;
}

/** Stop (`emergency_stopped`) or resume (`running`) a job everywhere. */
export async function setJobControl(db: PgPool, jobId: string, status: JobControlStatus, reason: string, by: string): Promise<{ job: JobControl; version: number }> {
  checkJobId(jobId);
  const row = (
    await db.query<{ updated_at: Date }>(
      `INSERT INTO ward_job_controls (job_id, status, reason, updated_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (job_id) DO UPDATE SET status = EXCLUDED.status, reason = EXCLUDED.reason, updated_by = EXCLUDED.updated_by, updated_at = now()
       RETURNING updated_at`,
      [jobId, status, reason, by],
    )
  ).rows[0]!;
  return { job: { job_id: jobId, status, reason, updated_at: row.updated_at.toISOString(), updated_by: by }, version: (await readVersions(db)).jobs };
}

export async function readJobControls(db: ControlReader): Promise<{ version: number; jobs: JobControl[] }> {
  const rows = (
    await db.query<{ version: string; job_id: string | null; status: string; reason: string; updated_at: Date; updated_by: string }>(
      `SELECT v.version, j.job_id, j.status, j.reason, j.updated_at, j.updated_by
         FROM ward_control_versions v LEFT JOIN ward_job_controls j ON true
        WHERE v.topic = 'jobs' ORDER BY j.job_id`,
    )
  ).rows;
  return {
    version: Number(rows[0]?.version ?? 0),
    jobs: rows
      .filter((r) => r.job_id !== null)
      .map((r) => ({ job_id: r.job_id!, status: r.status as JobControlStatus, reason: r.reason, updated_at: r.updated_at.toISOString(), updated_by: r.updated_by })),
  };
}

// ---------------------------------------------------------------------------------------------
// Published policies

/** Store a signed publication and make it the active one (the previous active one stays, inactive). */
export async function publishPolicy(
  db: PgPool,
  pub: Pick<PolicyPublication, 'digest' | 'policy_yaml' | 'signature' | 'key_id' | 'published_by'>,
): Promise<PolicyPublication> {
  const row = await db.transaction(async (client) => {
    await client.query('UPDATE ward_policy_publications SET active = false WHERE active');
    return (
      await client.query<PublicationRow>(
        `INSERT INTO ward_policy_publications (digest, policy_yaml, signature, key_id, published_by, active)
         VALUES ($1, $2, $3, $4, $5, true) RETURNING *`,
        [pub.digest, pub.policy_yaml, pub.signature, pub.key_id, pub.published_by],
      )
    ).rows[0]!;
  });
  return publication(row);
}

/** Publications, newest first, without their text. */
export async function listPublications(db: PgPool, limit = 50): Promise<Omit<PolicyPublication, 'policy_yaml'>[]> {
  const rows = (
    await db.query<PublicationRow>(
      `SELECT seq, digest, '' AS policy_yaml, signature, key_id, published_at, published_by, active FROM ward_policy_publications ORDER BY seq DESC LIMIT $1`,
      [limit],
    )
  ).rows;
  return rows.map((r) => {
    const { policy_yaml: _text, ...rest } = publication(r);
    return rest;
  });
}

/** The active publication (with its text) and the topic's version, from one snapshot. */
export async function readActivePublication(db: ControlReader): Promise<{ version: number; publication: PolicyPublication | undefined }> {
  const rows = (
    await db.query<PublicationRow & { version: string }>(
      `SELECT v.version, p.* FROM ward_control_versions v LEFT JOIN ward_policy_publications p ON p.active
        WHERE v.topic = 'policy'`,
    )
  ).rows;
  const r = rows[0];
  return { version: Number(r?.version ?? 0), publication: r && r.seq !== null ? publication(r) : undefined };
}

interface PublicationRow {
  seq: string;
  digest: string;
  policy_yaml: string;
  signature: string;
  key_id: string;
  published_at: Date;
  published_by: string;
  active: boolean;
}

function publication(r: PublicationRow): PolicyPublication {
  return {
    seq: Number(r.seq),
    digest: r.digest,
    policy_yaml: r.policy_yaml,
    signature: r.signature,
    key_id: r.key_id,
    published_at: r.published_at.toISOString(),
    published_by: r.published_by,
    active: r.active,
  };
}

// ---------------------------------------------------------------------------------------------
// Replicas and status

export interface ReplicaReport {
  replica_id: string;
  policy_digest: string;
  /** `file` (the replica's --policy) or `published:<seq>`. */
  policy_source: string;
  versions: ControlVersions;
  started_at: string;
  /** When the replica's last successful refresh started. */
  synced_at: string;
  reported_at?: string;
}

export async function reportReplica(db: PgPool, r: ReplicaReport): Promise<void> {
  await db.query(
    `INSERT INTO ward_control_replicas (replica_id, policy_digest, policy_source, versions, started_at, synced_at, reported_at)
     VALUES ($1, $2, $3, $4, $5, $6, now())
     ON CONFLICT (replica_id) DO UPDATE SET policy_digest = EXCLUDED.policy_digest, policy_source = EXCLUDED.policy_source,
       versions = EXCLUDED.versions, synced_at = EXCLUDED.synced_at, reported_at = now()`,
    [r.replica_id, r.policy_digest, r.policy_source, JSON.stringify(r.versions), r.started_at, r.synced_at],
  );
}

/** Replicas that reported within `withinSeconds` (default 60), by id. */
export async function listReplicas(db: PgPool, withinSeconds = 60): Promise<ReplicaReport[]> {
  const rows = (
    await db.query<{ replica_id: string; policy_digest: string; policy_source: string; versions: ControlVersions; started_at: Date; synced_at: Date; reported_at: Date }>(
      `SELECT * FROM ward_control_replicas WHERE reported_at > now() - make_interval(secs => $1) ORDER BY replica_id`,
      [withinSeconds],
    )
  ).rows;
  return rows.map((r) => ({
    replica_id: r.replica_id,
    policy_digest: r.policy_digest,
    policy_source: r.policy_source,
    versions: r.versions,
    started_at: r.started_at.toISOString(),
    synced_at: r.synced_at.toISOString(),
    reported_at: r.reported_at.toISOString(),
  }));
}

/** What the replicas did with a publication: enforce it, refused it (synced past it, kept another policy), not there yet. */
export interface PublicationUptake {
  accepted: string[];
  rejected: { replica_id: string; policy_digest: string; policy_source: string }[];
  pending: string[];
}

/** The replicas reporting in the last 60 s, sorted by what they did with publication `seq` (policy topic `version`). */
export function publicationUptake(replicas: readonly ReplicaReport[], seq: number, version: number): PublicationUptake {
  const out: PublicationUptake = { accepted: [], rejected: [], pending: [] };
  for (const r of replicas) {
    if (r.policy_source === `published:${seq}`) out.accepted.push(r.replica_id);
    else if (r.versions.policy >= version) out.rejected.push({ replica_id: r.replica_id, policy_digest: r.policy_digest, policy_source: r.policy_source });
    else out.pending.push(r.replica_id);
  }
  return out;
}

/**
 * Wait (polling every `pollMs`) until every reporting replica has synced past publication `seq`,
 * or `timeoutMs` passed; what each did with it. A replica activates a publication only if it
 * trusts the signing key and the policy is valid for its profile; one that refused it keeps its
 * policy and reports it.
 */
export async function awaitPublicationUptake(db: PgPool, seq: number, version: number, timeoutMs: number, pollMs = 250): Promise<PublicationUptake> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const uptake = publicationUptake(await listReplicas(db), seq, version);
    if ((uptake.pending.length === 0 && uptake.accepted.length + uptake.rejected.length > 0) || Date.now() >= end) return uptake;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, end - Date.now()))));
  }
}

function notFound(what: string, hint: string): WardError {
  return new WardError(ERROR_CODES.STORE_NOT_FOUND, `${what} not found`, { hint });
}

// ---------------------------------------------------------------------------------------------
// MCP tool pins (the documents of src/mcp/proxy/pins.ts, one per server key)

export async function readPins(reader: ControlReader): Promise<{ version: number; docs: Map<string, string> }> {
  const rows = (
    await reader.query<{ version: string; server_key: string | null; document: string | null }>(
      `SELECT v.version, p.server_key, p.document FROM ward_control_versions v LEFT JOIN ward_mcp_pins p ON true
        WHERE v.topic = 'pins' ORDER BY p.server_key`,
    )
  ).rows;
  return { version: Number(rows[0]?.version ?? 0), docs: new Map(rows.filter((r) => r.server_key !== null).map((r) => [r.server_key!, r.document!])) };
}

/**
 * Read-modify-write of the pin documents in one transaction. Pin writers are serialized by a table
 * lock (they are rare: a first sight of a tool, an operator's accept or forget), so two proxies that
 * pin the same server at once cannot lose each other's pins. `fn` returns the documents to write
 * (null: delete).
 */
export async function updatePins<T>(db: PgPool, fn: (docs: Map<string, string>) => { writes: Map<string, string | null>; result: T }): Promise<T> {
  return db.transaction(async (client) => {
    await client.query('LOCK TABLE ward_mcp_pins IN SHARE ROW EXCLUSIVE MODE');
    const rows = (await client.query<{ server_key: string; document: string }>('SELECT server_key, document FROM ward_mcp_pins')).rows;
    const { writes, result } = fn(new Map(rows.map((r) => [r.server_key, r.document])));
    for (const [key, text] of writes) {
      if (text === null) await client.query('DELETE FROM ward_mcp_pins WHERE server_key = $1', [key]);
      else {
        await client.query(
          `INSERT INTO ward_mcp_pins (server_key, document) VALUES ($1, $2)
           ON CONFLICT (server_key) DO UPDATE SET document = EXCLUDED.document, updated_at = now()`,
          [key, text],
        );
      }
    }
    return result;
  });
}
