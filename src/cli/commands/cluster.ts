import { hostname, userInfo } from 'node:os';
import type { Command } from 'commander';
import { addDuration, formatRFC3339Nano, isZeroTime, nowUTC, parseGoDuration, type JsonObject } from '../../canon/index.js';
import {
  disableKillSwitchEntry,
  listPublications,
  listReplicas,
  publicationUptake,
  putKillSwitchEntry,
  readJobControls,
  readKillSwitch,
  readVersions,
  setJobControl,
  type JobControlStatus,
} from '../../cluster/control.js';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { killSwitchStateJson } from '../../gate/kill-switch.js';
import { schemaStatus, type PgPool } from '../../pg/index.js';
import { openCheckedPool, storeLocationOf } from '../store-access.js';
import type { CliContext } from '../context.js';
import { collect } from '../input.js';
import { correlationId, goJsonLine } from '../output.js';

/**
 * `ward cluster`: the control plane every `ward serve --store postgres://…` replica follows
 * (docs/kill-switch.md "In a cluster"). Each command writes or reads PostgreSQL directly; replicas
 * pick a change up through LISTEN/NOTIFY within milliseconds, or by polling within a second, and a
 * replica that cannot refresh for 5 s blocks every decision instead of deciding on old state.
 */

export interface StoreFlags {
  store?: string;
  storePasswordFile?: string;
  json?: boolean;
}

const STORE_HELP = 'PostgreSQL store URL, postgres://user@host:5432/db (default: $WARD_STORE_URL; no password in argv)';

/** `--store`, `--store-password-file` and `--json` on a control-plane command. */
export function withStoreFlags(cmd: Command): Command {
  return cmd
    .option('--store <url>', STORE_HELP)
    .option('--store-password-file <file>', 'file holding the store password (default: $WARD_STORE_PASSWORD_FILE, PGPASSWORD, ~/.pgpass)')
    .option('--json', 'one line of JSON on stdout');
}

/** The cluster database, migrated to exactly this Ward's schema; the caller closes it. */
export async function openControlStore(ctx: CliContext, flags: StoreFlags): Promise<PgPool> {
  const location = storeLocationOf(ctx, flags);
  if (location.kind !== 'postgres') {
    throw new WardError(ERROR_CODES.USAGE, 'the cluster control plane lives in a PostgreSQL store', {
      exitCode: EXIT.INVALID_INPUT,
      hint: 'pass --store postgres://user@host:5432/db or set WARD_STORE_URL (the URL the ward serve replicas use)',
    });
  }
  return openCheckedPool(location.config, 'ward-cli');
}

/** Who made a change, as recorded beside it. */
export function operatorName(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (containers): keep "unknown"
  }
  return `${user}@${hostname()}`;
}

async function withStore<T>(ctx: CliContext, flags: StoreFlags, fn: (db: PgPool) => Promise<T>): Promise<T> {
  const db = await openControlStore(ctx, flags);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

function print(ctx: CliContext, flags: StoreFlags, json: JsonObject, text: string): void {
  ctx.stdout(flags.json ? goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), ...json }) + '\n' : text.endsWith('\n') ? text : text + '\n');
  ctx.exitCode = EXIT.OK;
}

interface AddFlags extends StoreFlags {
  id: string;
  reason?: string;
  agentId?: string;
  identity?: string;
  toolName?: string;
  environment?: string;
  targetKind?: string;
  targetValue?: string;
  pathPrefix: string[];
  workspacePrefix: string[];
  expiresAt?: string;
  ttl?: string;
  disabled?: boolean;
}

interface JobFlags extends StoreFlags {
  reason?: string;
}

export function register(program: Command, ctx: CliContext): void {
  const cluster = program
    .command('cluster')
    .description('the cluster control plane in PostgreSQL: kill switch, emergency stops, status (every ward serve --store replica enforces it)');

  const ks = cluster.command('kill-switch').description('kill-switch entries every replica enforces (docs/kill-switch.md)');
  withStoreFlags(
    ks
      .command('add')
      .description('add an entry, or replace the entry with the same id; an entry without selectors stops every call')
      .requiredOption('--id <id>', 'entry id (unique)')
      .option('--reason <text>', 'why (shown to people, not matched)')
      .option('--agent-id <id>', 'selector: context.agent_id')
      .option('--identity <id>', 'selector: context.identity')
      .option('--tool-name <name>', 'selector: the tool name (or any script step\'s)')
      .option('--environment <env>', 'selector: context.environment')
      .option('--target-kind <kind>', 'selector: a target of this kind')
      .option('--target-value <value>', 'selector: a target with this value')
      .option('--path-prefix <path>', 'selector: a path target under this prefix (repeatable)', collect, [])
      .option('--workspace-prefix <path>', 'selector: context.workspace under this prefix (repeatable)', collect, [])
      .option('--expires-at <time>', 'RFC 3339 time the entry stops applying')
      .option('--ttl <duration>', 'or: lifetime from now as a Go duration, e.g. 30m or 4h')
      .option('--disabled', 'store the entry disabled'),
  ).action(async (flags: AddFlags) => {
    const entry = entryFromFlags(flags);
    const out = await withStore(ctx, flags, (db) => putKillSwitchEntry(db, entry, operatorName()));
    print(ctx, flags, { entry: out.entry, version: out.version }, `kill-switch entry ${flags.id} set (version ${out.version})`);
  });

  withStoreFlags(ks.command('disable').description('disable an entry (it is kept, disabled)').requiredOption('--id <id>', 'entry id')).action(
    async (flags: StoreFlags & { id: string }) => {
      const out = await withStore(ctx, flags, (db) => disableKillSwitchEntry(db, flags.id, operatorName()));
      print(ctx, flags, { entry: out.entry, version: out.version }, `kill-switch entry ${flags.id} disabled (version ${out.version})`);
    },
  );

  withStoreFlags(ks.command('list').description('the kill-switch state the replicas enforce, with who changed each entry')).action(async (flags: StoreFlags) => {
    const snap = await withStore(ctx, flags, readKillSwitch);
    const lines = snap.state.entries.map((e) => {
      const selectors = (['agent_id', 'identity', 'tool_name', 'environment', 'target_kind', 'target_value'] as const).filter((k) => e[k]).map((k) => `${k}=${e[k]}`);
      if (e.path_prefixes.length) selectors.push(`path_prefixes=${e.path_prefixes.join(',')}`);
      if (e.workspace_prefixes.length) selectors.push(`workspace_prefixes=${e.workspace_prefixes.join(',')}`);
      const meta = snap.meta[e.id];
      const expires = isZeroTime(e.expires_at) ? '' : `  expires ${formatRFC3339Nano(e.expires_at)}`;
      return `${e.enabled ? 'enabled ' : 'disabled'}  ${e.id}  ${selectors.join(' ') || '(every call)'}${e.reason ? `  "${e.reason}"` : ''}${expires}${meta ? `  by ${meta.updated_by} at ${meta.updated_at}` : ''}`;
    });
    print(
      ctx,
      flags,
      { version: snap.version, state: killSwitchStateJson(snap.state), changes: snap.meta },
      `kill switch version ${snap.version}: ${snap.state.entries.length} entr${snap.state.entries.length === 1 ? 'y' : 'ies'}\n${lines.join('\n')}`,
    );
  });

  const job = cluster.command('job').description('emergency stops of jobs (the decision service\'s emergency_stop step, context.job_id)');
  const jobCommand = (name: string, status: JobControlStatus, description: string) =>
    withStoreFlags(job.command(name).description(description).argument('<job-id>', 'the job id agents send as context.job_id').option('--reason <text>', 'why')).action(
      async (jobId: string, flags: JobFlags) => {
        const out = await withStore(ctx, flags, (db) => setJobControl(db, jobId, status, flags.reason ?? '', operatorName()));
        print(ctx, flags, { job: out.job as unknown as JsonObject, version: out.version }, `job ${jobId} ${status === 'emergency_stopped' ? 'emergency-stopped' : 'resumed'} (version ${out.version})`);
      },
    );
  jobCommand('stop', 'emergency_stopped', 'emergency-stop a job on every replica: its calls block with emergency_stop_preempted');
  jobCommand('resume', 'running', 'lift the cluster\'s stop of a job (a stop in the job runner\'s own state file still applies)');
  withStoreFlags(job.command('list').description('jobs with a cluster control, stopped or resumed')).action(async (flags: StoreFlags) => {
    const snap = await withStore(ctx, flags, readJobControls);
    const lines = snap.jobs.map((j) => `${j.status === 'emergency_stopped' ? 'stopped' : 'running'}  ${j.job_id}${j.reason ? `  "${j.reason}"` : ''}  by ${j.updated_by} at ${j.updated_at}`);
    print(ctx, flags, { version: snap.version, jobs: snap.jobs as unknown as JsonObject[] }, `jobs version ${snap.version}: ${snap.jobs.length} job${snap.jobs.length === 1 ? '' : 's'}\n${lines.join('\n')}`);
  });

  withStoreFlags(cluster.command('status').description('schema version, active policy, control-state versions, and what each replica enforces')).action(async (flags: StoreFlags) => {
    const status = await withStore(ctx, flags, async (db) => {
      const schema = await schemaStatus(db); // current: openControlStore checked it
      const [versions, publications, replicas] = await Promise.all([readVersions(db), listPublications(db, 1), listReplicas(db)]);
      const active = publications.find((p) => p.active);
      return { schema, versions, active, replicas };
    });
    // The latest publication is only what was published: each replica enforces it only if it
    // trusted its key (and its profile accepts it). The headline says what the replicas enforce.
    const uptake = status.active ? publicationUptake(status.replicas, status.active.seq, status.versions.policy) : undefined;
    const enforced = new Map<string, string[]>();
    for (const r of status.replicas) enforced.set(`${r.policy_digest} (${r.policy_source})`, [...(enforced.get(`${r.policy_digest} (${r.policy_source})`) ?? []), r.replica_id]);
    const json: JsonObject = {
      schema_version: status.schema.version,
      active_policy: status.active
        ? { seq: status.active.seq, digest: status.active.digest, key_id: status.active.key_id, published_at: status.active.published_at, published_by: status.active.published_by, enforced_by: uptake!.accepted, refused_by: uptake!.rejected.map((r) => r.replica_id), pending: uptake!.pending }
        : null,
      enforced_policies: status.replicas.map((r) => ({ replica_id: r.replica_id, policy_digest: r.policy_digest, policy_source: r.policy_source })),
      kill_switch_version: status.versions.kill_switch,
      versions: status.versions as unknown as JsonObject,
      replicas: status.replicas as unknown as JsonObject[],
    };
    const n = status.replicas.length;
    const lines = [
      `schema version ${status.schema.version}`,
      n === 0 ? 'enforced: no replica reporting in the last 60 s' : `enforced: ${[...enforced].map(([policy, ids]) => `${policy} by ${ids.length} of ${n}`).join('; ')}`,
      status.active
        ? `latest publication ${status.active.seq} ${status.active.digest} (by ${status.active.published_by} at ${status.active.published_at}): enforced by ${uptake!.accepted.length} of ${n}${uptake!.rejected.length ? `, REFUSED by ${uptake!.rejected.map((r) => r.replica_id).join(', ')}` : ''}${uptake!.pending.length ? `, not yet synced by ${uptake!.pending.join(', ')}` : ''}`
        : 'latest publication: none (replicas enforce their --policy file)',
      `kill switch version ${status.versions.kill_switch}, jobs version ${status.versions.jobs}, policy version ${status.versions.policy}`,
      `${n} replica${n === 1 ? '' : 's'} reporting in the last 60 s`,
      ...status.replicas.map((r) => `  ${r.replica_id}  policy ${r.policy_digest} (${r.policy_source})  kill switch v${r.versions.kill_switch}  synced ${r.synced_at}`),
    ];
    print(ctx, flags, json, lines.join('\n'));
  });
}

/** The entry object the flags describe (validated by the strict parser when stored). */
function entryFromFlags(flags: AddFlags): JsonObject {
  if (flags.expiresAt && flags.ttl) throw new WardError(ERROR_CODES.USAGE, 'give --expires-at or --ttl, not both');
  const entry: JsonObject = { id: flags.id, enabled: !flags.disabled };
  if (flags.reason) entry['reason'] = flags.reason;
  const selectors: [keyof AddFlags, string][] = [
    ['agentId', 'agent_id'],
    ['identity', 'identity'],
    ['toolName', 'tool_name'],
    ['environment', 'environment'],
    ['targetKind', 'target_kind'],
    ['targetValue', 'target_value'],
  ];
  for (const [flag, key] of selectors) {
    const value = flags[flag];
    if (typeof value === 'string' && value !== '') entry[key] = value;
  }
  if (flags.pathPrefix.length) entry['path_prefixes'] = flags.pathPrefix;
  if (flags.workspacePrefix.length) entry['workspace_prefixes'] = flags.workspacePrefix;
  if (flags.expiresAt) entry['expires_at'] = flags.expiresAt;
  if (flags.ttl) {
    const ns = parseGoDuration(flags.ttl);
    if (ns <= 0n) throw new WardError(ERROR_CODES.USAGE, '--ttl must be positive');
    entry['expires_at'] = formatRFC3339Nano(addDuration(nowUTC(), ns));
  }
  return entry;
}
