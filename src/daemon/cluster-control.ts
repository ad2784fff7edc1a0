import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isJsonObject, type JsonObject, type JsonValue } from '../canon/index.js';
import { disableKillSwitchEntry, listPublications, putKillSwitchEntry, readJobControls, reportReplica, setJobControl, checkJobId } from '../cluster/control.js';
import { verifyPublication, type PolicyPublication } from '../cluster/control-policy.js';
import { ControlFollower, type ControlFollowerOptions } from '../cluster/watch.js';
import { EXIT } from '../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { EmergencyStop } from '../decision/steps.js';
import { readBody, requireMediaType } from '../edge/body.js';
import { badRequest } from '../edge/http-error.js';
import { killSwitchStateJson } from '../gate/kill-switch.js';
import { readPublicKeyFile, type VerifyKey } from '../keys/index.js';
import type { PgPool } from '../pg/index.js';
import type { DaemonContext } from './context.js';
import { controlDecisionService } from './decision-service.js';
import { checkFields, parseJsonBody } from './gate-body.js';
import { sendJson } from './http.js';
import type { JsonLog } from './log.js';
import type { Exchange, Handler, Route } from './routes.js';

/**
 * The cluster's control plane inside one replica (docs/kill-switch.md "In a cluster"): the kill
 * switch, emergency stops and published policies, kept in PostgreSQL and followed by every replica
 * (src/cluster/watch.ts). `ward serve --store postgres://…` attaches it after the context exists;
 * `close` detaches it.
 */
export interface AttachedControlPlane {
  /** HTTP routes of the control plane (mounted beside the daemon's own). */
  routes: readonly Route[];
  close(): Promise<void>;
}

export interface ControlPlaneSettings {
  pollIntervalMs?: number;
  staleAfterMs?: number;
  listen?: boolean;
  /**
   * Keys whose publications this replica activates. Undefined: the replica's own current signing
   * key (replicas that share a key trust what that key signed, and nothing else).
   */
  policyPublicKeys?: readonly VerifyKey[];
  /** How this replica names itself in `ward_control_replicas` (default host:pid). */
  replicaId?: string;
  /** How often the replica reports what it enforces (default 5,000 ms). */
  reportIntervalMs?: number;
}

/**
 * Settings from the environment (so `ward serve` needs no flag for them):
 * `WARD_CONTROL_POLL_MS`, `WARD_CONTROL_STALE_MS`, `WARD_CONTROL_LISTEN=0` (polling only, e.g. behind
 * a transaction-mode pooler), `WARD_POLICY_PUBLIC_KEY` (public key files trusted for publications,
 * separated by the platform's path delimiter `:`), `WARD_REPLICA_ID`.
 */
export function controlSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ControlPlaneSettings {
  const out: ControlPlaneSettings = {};
  const ms = (name: string, min: number): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    if (!/^\d+$/.test(raw) || Number(raw) < min) throw badSetting(`${name} must be an integer of at least ${min} (milliseconds)`);
    return Number(raw);
  };
  const poll = ms('WARD_CONTROL_POLL_MS', 10);
  const stale = ms('WARD_CONTROL_STALE_MS', 100);
  if (poll !== undefined) out.pollIntervalMs = poll;
  if (stale !== undefined) out.staleAfterMs = stale;
  if ((out.staleAfterMs ?? 5000) <= (out.pollIntervalMs ?? 1000)) throw badSetting('WARD_CONTROL_STALE_MS must be larger than WARD_CONTROL_POLL_MS');
  if (env['WARD_CONTROL_LISTEN'] === '0') out.listen = false;
  if (env['WARD_POLICY_PUBLIC_KEY']) out.policyPublicKeys = env['WARD_POLICY_PUBLIC_KEY'].split(':').filter(Boolean).map(readPublicKeyFile);
  if (env['WARD_REPLICA_ID']) out.replicaId = env['WARD_REPLICA_ID'];
  return out;
}

function badSetting(message: string): Error {
  return new WardError(ERROR_CODES.USAGE, message);
}

export async function attachControlPlane(ctx: DaemonContext, db: PgPool, log: JsonLog, settings: ControlPlaneSettings = controlSettingsFromEnv()): Promise<AttachedControlPlane> {
  const replicaId = settings.replicaId ?? ctx.cluster?.replica ?? `${hostname()}:${process.pid}`;
  const startedAt = new Date().toISOString();
  const profile = ctx.options.profile ?? 'standard';
  const trusted = (): readonly VerifyKey[] => settings.policyPublicKeys ?? [ctx.keys.current];
  const verdicts = new Map<number, { activated: boolean; error?: string }>();
  ctx.policies.followCluster();

  const activate = (pub: PolicyPublication | undefined): void => {
    if (!pub) return; // nothing published (any more): keep the policy in service
    if (ctx.policies.publication?.seq === pub.seq) return;
    const result = ctx.policies.activate(() => verifyPublication(pub, trusted(), profile), {
      seq: pub.seq,
      digest: pub.digest,
      key_id: pub.key_id,
      published_at: pub.published_at,
      published_by: pub.published_by,
    });
    verdicts.set(pub.seq, result.ok ? { activated: true } : { activated: false, error: result.error ?? 'rejected' });
    log.log({
      level: result.ok ? 'info' : 'error',
      msg: result.ok ? 'published policy activated' : 'published policy rejected',
      seq: pub.seq,
      published_digest: pub.digest,
      policy_digest: result.digest,
      ...(result.error ? { error: result.error } : {}),
    });
  };

  let refreshFailing = false;
  let reportSoon: () => void = () => {};
  const options: ControlFollowerOptions = {
    ...(settings.pollIntervalMs !== undefined ? { pollIntervalMs: settings.pollIntervalMs } : {}),
    ...(settings.staleAfterMs !== undefined ? { staleAfterMs: settings.staleAfterMs } : {}),
    ...(settings.listen !== undefined ? { listen: settings.listen } : {}),
    onPublication: activate,
    onChange: (topic, version) => {
      if (refreshFailing) {
        refreshFailing = false;
        log.log({ level: 'info', msg: 'control plane refresh recovered' });
      }
      log.log({ level: 'info', msg: 'control plane change', topic, version });
      reportSoon();
    },
    onError: (where, err) => {
      // One line per outage, not one per poll.
      if (where === 'refresh' && refreshFailing) return;
      if (where === 'refresh') refreshFailing = true;
      log.log({ level: 'error', msg: `control plane ${where} failed`, error: err.message });
    },
  };
  const follower = new ControlFollower(db, options);
  await follower.start();

  ctx.gate.killSwitchSource = () => follower.killSwitch();
  controlDecisionService(ctx.policies, {
    killSwitch: () => follower.killSwitch(),
    emergencyStop: (jobId, fromFiles) => combineJobState(follower.jobStatus(jobId), () => fromFiles(jobId)),
  });

  // What this replica enforces, for `ward cluster status`; and one log line when freshness flips.
  let wasFresh = true;
  const report = async (): Promise<void> => {
    const fresh = follower.fresh();
    if (fresh !== wasFresh) {
      wasFresh = fresh;
      log.log({ level: fresh ? 'info' : 'error', msg: fresh ? 'control state fresh again' : 'control state stale: kill switch unavailable, decisions block', ...follower.status() });
    }
    const synced = follower.syncedAt;
    await reportReplica(db, {
      replica_id: replicaId,
      policy_digest: ctx.policies.current.digest,
      policy_source: ctx.policies.publication ? `published:${ctx.policies.publication.seq}` : 'file',
      versions: follower.currentVersions,
      started_at: startedAt,
      synced_at: new Date(Date.now() - (synced === undefined ? 0 : performance.now() - synced)).toISOString(),
    }).catch(() => undefined);
  };
  await report();
  reportSoon = () => void report();
  const reporter = setInterval(() => void report(), Math.min(settings.reportIntervalMs ?? 5000, follower.pollIntervalMs * 5));
  reporter.unref();

  const by = `api@${replicaId}`;
  const routes = controlRoutes({ db, follower, verdicts, by });
  log.log({ level: 'info', msg: 'control plane attached', replica_id: replicaId, ...follower.status() });
  return {
    routes,
    close: async () => {
      clearInterval(reporter);
      ctx.gate.killSwitchSource = undefined;
      await follower.close();
    },
  };
}

/**
 * The emergency-stop answer from two job runtimes, the cluster's table and the replica's
 * `<state>/jobs` files: stopped when either says stopped; running when the cluster says running
 * (`ward cluster job resume`) or the files do; unavailable when the cluster state is stale (fail
 * closed) or neither knows the job (as without a cluster). The cluster can stop any job; resuming
 * there does not override a runner's own stop in its file.
 */
export function combineJobState(cluster: ReturnType<ControlFollower['jobStatus']>, fromFiles: () => EmergencyStop): EmergencyStop {
  if (cluster.status === 'unavailable') return { status: 'unavailable', detail: cluster.detail };
  if (cluster.status === 'stopped') return { status: 'stopped' };
  const files = fromFiles();
  if (files.status === 'stopped') return files;
  if (cluster.status === 'running') return { status: 'running' };
  return files;
}

// ---------------------------------------------------------------------------------------------
// Routes

interface RouteDeps {
  db: PgPool;
  follower: ControlFollower;
  verdicts: Map<number, { activated: boolean; error?: string }>;
  by: string;
}

function reply(ex: Exchange, status: number, value: unknown): void {
  ex.status = status;
  ex.exitCode = EXIT.OK;
  sendJson(ex.res, status, value, { 'x-ward-exit-code': String(EXIT.OK) });
}

/** A JSON object body; an empty body is `{}` (stop and resume need none). */
async function objectBody(ctx: DaemonContext, ex: Exchange, fields: ReadonlySet<string> | undefined): Promise<JsonObject> {
  const length = ex.req.headers['content-length'];
  if ((length === undefined || length === '0') && ex.req.headers['transfer-encoding'] === undefined) return {};
  requireMediaType(ex.req, ['application/json']);
  const value: JsonValue = parseJsonBody(await readBody(ex.req, ctx.options.maxBodyBytes));
  if (!isJsonObject(value)) throw badRequest('body: must be a JSON object');
  return fields ? checkFields(value, fields, 'body') : value;
}

function reasonOf(body: JsonObject): string {
  const reason = body['reason'] ?? '';
  if (typeof reason !== 'string') throw badRequest('body: reason must be a string');
  return reason;
}

function controlRoutes(d: RouteDeps): Route[] {
  const killSwitchView = (): JsonObject => {
    const view = d.follower.killSwitch();
    return {
      ...('state' in view ? { state: killSwitchStateJson(view.state) } : { unavailable: true }),
      control: d.follower.status() as unknown as JsonObject,
    };
  };
  const killSwitchGet: Handler = async (_ctx, ex) => {
    reply(ex, 200, { ok: true, version: d.follower.currentVersions.kill_switch, ...killSwitchView() });
  };
  const killSwitchPost: Handler = async (ctx, ex) => {
    const body = await objectBody(ctx, ex, undefined);
    const written = await putKillSwitchEntry(d.db, body, d.by);
    await d.follower.refresh(); // this replica enforces it before it answers
    reply(ex, 200, { ok: true, entry: written.entry, version: written.version });
  };
  const killSwitchDisable: Handler = async (ctx, ex, params) => {
    await objectBody(ctx, ex, new Set());
    const written = await disableKillSwitchEntry(d.db, params['id'] ?? '', d.by);
    await d.follower.refresh();
    reply(ex, 200, { ok: true, entry: written.entry, version: written.version });
  };
  const jobsGet: Handler = async (_ctx, ex) => {
    const snap = await readJobControls(d.db);
    reply(ex, 200, { ok: true, version: snap.version, jobs: snap.jobs });
  };
  const jobSet =
    (status: 'emergency_stopped' | 'running'): Handler =>
    async (ctx, ex, params) => {
      const body = await objectBody(ctx, ex, new Set(['reason']));
      let jobId: string;
      try {
        jobId = checkJobId(params['id'] ?? '');
      } catch (err) {
        throw badRequest((err as Error).message);
      }
      const written = await setJobControl(d.db, jobId, status, reasonOf(body), d.by);
      await d.follower.refresh();
      reply(ex, 200, { ok: true, job: written.job, version: written.version });
    };
  const published: Handler = async (ctx, ex) => {
    const list = await listPublications(d.db, 20);
    const active = d.follower.activePublication;
    const verdict = active ? d.verdicts.get(active.seq) : undefined;
    reply(ex, 200, {
      ok: true,
      active: active ? { seq: active.seq, digest: active.digest, key_id: active.key_id, published_at: active.published_at, published_by: active.published_by } : null,
      enforced: { policy_digest: ctx.policies.current.digest, policy_source: ctx.policies.publication ? 'published' : 'file', ...(ctx.policies.publication ? { seq: ctx.policies.publication.seq } : {}) },
      ...(verdict && !verdict.activated ? { active_rejected: verdict.error } : {}),
      publications: list.map((p) => ({ ...p, ...(d.verdicts.has(p.seq) ? { activated_here: d.verdicts.get(p.seq)!.activated } : {}) })),
    });
  };
  return [
    { name: 'kill_switch', segments: ['v1', 'kill-switch'], methods: { GET: killSwitchGet, POST: killSwitchPost } },
    { name: 'kill_switch.disable', segments: ['v1', 'kill-switch', ':id', 'disable'], methods: { POST: killSwitchDisable } },
    { name: 'jobs', segments: ['v1', 'jobs'], methods: { GET: jobsGet } },
    { name: 'jobs.stop', segments: ['v1', 'jobs', ':id', 'stop'], methods: { POST: jobSet('emergency_stopped') } },
    { name: 'jobs.resume', segments: ['v1', 'jobs', ':id', 'resume'], methods: { POST: jobSet('running') } },
    { name: 'policy.published', segments: ['v1', 'policy', 'published'], methods: { GET: published } },
  ];
}
