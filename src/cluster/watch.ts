import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { KillSwitchState } from '../gate/kill-switch.js';
import type { PgPool } from '../pg/index.js';
import {
  CONTROL_CHANNEL,
  readActivePublication,
  readJobControls,
  readKillSwitch,
  readPins,
  readVersions,
  type ControlReader,
  type ControlTopic,
  type ControlVersions,
  type JobControl,
} from './control.js';
import type { PolicyPublication } from './control-policy.js';

/**
 * A replica's view of the control plane, kept fresh two ways (docs/kill-switch.md "In a cluster"):
 *
 * - LISTEN on a dedicated connection: the tables' triggers NOTIFY on commit, and the follower
 *   re-reads the topic at once (milliseconds). When that connection breaks it is reopened on its own
 *   with a backoff, and the follower re-reads everything after reconnecting (what was announced
 *   while it was gone is not replayed by PostgreSQL).
 * - Polling the topic versions every `pollIntervalMs` (one small query): a lost notification or a
 *   pooler that does not pass LISTEN through costs at most one interval. The poll goes over the
 *   LISTEN connection while it is up (no pool contention under load) and doubles as its health
 *   check: a read there that does not answer within `listenerTimeoutMs` drops the connection, and
 *   reads go through the pool until a new one is listening.
 *
 * Fail closed: the kill switch is only as good as the last successful refresh. When no refresh has
 * succeeded for `staleAfterMs` (measured from when that refresh *started*, on the monotonic clock),
 * `killSwitch()` answers `{ unavailable: true }` — every decision blocks with
 * `kill_switch_state_unavailable` — and `jobStatus()` answers `unavailable` (the emergency-stop step
 * blocks calls that name a job) until a refresh succeeds again. A kill-switch state in the database
 * that does not parse strictly is `unavailable` too, never a partial state.
 */

export interface ControlFollowerOptions {
  /** Version poll interval (default 1,000 ms). */
  pollIntervalMs?: number;
  /** No successful refresh for this long: the kill switch is unavailable (default 5,000 ms). */
  staleAfterMs?: number;
  /** LISTEN for changes (default true; false: polling only, e.g. behind a transaction pooler). */
  listen?: boolean;
  /** Longest wait before reopening a broken LISTEN connection (default 5,000 ms; starts at 100 ms). */
  maxReconnectDelayMs?: number;
  /**
   * Reads go over the LISTEN connection while it is up; one that takes longer than this marks the
   * connection dead (it is replaced) and the next read goes through the pool (default 2,000 ms).
   */
  listenerTimeoutMs?: number;
  /** What to follow (default kill_switch, jobs and policy; the MCP proxy follows pins). */
  topics?: readonly ControlTopic[];
  /** A new active publication (or none): the host verifies and activates it. */
  onPublication?: (publication: PolicyPublication | undefined) => void;
  /** A topic was re-read (after the new state is in place). */
  onChange?: (topic: ControlTopic, version: number) => void;
  /** Refresh or LISTEN trouble, for the host's log (the follower recovers on its own). */
  onError?: (where: 'refresh' | 'listen', err: Error) => void;
  /** Monotonic milliseconds (tests). */
  now?: () => number;
}

export type KillSwitchView = { state: KillSwitchState } | { unavailable: true };
export type JobView = { status: 'stopped' | 'running' } | { status: 'unknown' } | { status: 'unavailable'; detail: string };

export interface FollowerStatus {
  versions: ControlVersions;
  /** Milliseconds since the last successful refresh started (null: never). */
  age_ms: number | null;
  fresh: boolean;
  stale_after_ms: number;
  poll_interval_ms: number;
  listening: boolean;
  listen_reconnects: number;
  refreshes_ok: number;
  refreshes_failed: number;
  last_error?: string;
  kill_switch_error?: string;
}

export class ControlFollower {
  readonly pollIntervalMs: number;
  readonly staleAfterMs: number;
  private readonly listenerTimeoutMs: number;
  private readonly opts: ControlFollowerOptions;
  private readonly now: () => number;
  private versions: ControlVersions = { kill_switch: -1, jobs: -1, policy: -1, pins: -1 };
  private killState: KillSwitchState | undefined;
  private killError: string | undefined;
  private jobs = new Map<string, JobControl>();
  private publication: PolicyPublication | undefined;
  private pins = new Map<string, string>();
  private readonly topics: ReadonlySet<ControlTopic>;
  private lastOkStart: number | undefined;
  private okCount = 0;
  private failedCount = 0;
  private lastError: string | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private poller: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  private listenerPid: number | undefined;
  private reconnects = 0;
  private reconnectDelay = 100;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Told after the pin documents changed (the MCP proxy's pin store re-reads them). */
  onPins: (() => void) | undefined;

  constructor(
    private readonly db: PgPool,
    opts: ControlFollowerOptions = {},
  ) {
    this.opts = opts;
    this.pollIntervalMs = opts.pollIntervalMs ?? 1000;
    this.staleAfterMs = opts.staleAfterMs ?? 5000;
    this.listenerTimeoutMs = opts.listenerTimeoutMs ?? 2000;
    this.topics = new Set(opts.topics ?? ['kill_switch', 'jobs', 'policy']);
    this.now = opts.now ?? (() => performance.now());
  }

  /** The first refresh (its error is thrown: a replica does not start blind), then LISTEN and polling. */
  async start(): Promise<void> {
    await this.refresh();
    if (this.opts.listen !== false) await this.connectListener();
    this.poller = setInterval(() => void this.refresh().catch(() => undefined), this.pollIntervalMs);
    this.poller.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const l = this.listener;
    this.listener = undefined;
    if (l) await l.end().catch(() => undefined);
    await this.running?.catch(() => undefined);
  }

  /** The kill switch to decide with, now. */
  killSwitch(): KillSwitchView {
    if (!this.fresh()) {
      // Ask again now rather than at the next tick: recovery after an outage is one read away.
      if (!this.closed) this.refresh().catch(() => undefined);
      return { unavailable: true };
    }
    if (!this.killState) return { unavailable: true };
    return { state: this.killState };
  }

  /** The cluster's word on a job: stopped, running (resumed), unknown here, or unavailable (stale). */
  jobStatus(jobId: string): JobView {
    if (!this.fresh()) {
      if (!this.closed) this.refresh().catch(() => undefined);
      return { status: 'unavailable', detail: `cluster control state not refreshed for ${Math.round(this.age() ?? 0)} ms (limit ${this.staleAfterMs} ms)` };
    }
    const job = this.jobs.get(jobId);
    if (!job) return { status: 'unknown' };
    return { status: job.status === 'emergency_stopped' ? 'stopped' : 'running' };
  }

  get activePublication(): PolicyPublication | undefined {
    return this.publication;
  }

  /** The pin documents by server key (JSON text), or undefined when stale (fail closed). */
  pinDocuments(): ReadonlyMap<string, string> | undefined {
    if (!this.fresh()) {
      if (!this.closed) this.refresh().catch(() => undefined);
      return undefined;
    }
    return this.pins;
  }

  get jobList(): JobControl[] {
    return [...this.jobs.values()];
  }

  /** The backend pid of the LISTEN connection (tests kill it to prove recovery). */
  get listenPid(): number | undefined {
    return this.listenerPid;
  }

  get currentVersions(): ControlVersions {
    return { ...this.versions };
  }

  fresh(): boolean {
    const age = this.age();
    return age !== undefined && age <= this.staleAfterMs;
  }

  /** Monotonic time of the last successful refresh's start (undefined: never). */
  get syncedAt(): number | undefined {
    return this.lastOkStart;
  }

  status(): FollowerStatus {
    const age = this.age();
    return {
      versions: { ...this.versions },
      age_ms: age === undefined ? null : Math.round(age),
      fresh: this.fresh(),
      stale_after_ms: this.staleAfterMs,
      poll_interval_ms: this.pollIntervalMs,
      listening: this.listener !== undefined,
      listen_reconnects: this.reconnects,
      refreshes_ok: this.okCount,
      refreshes_failed: this.failedCount,
      ...(this.lastError ? { last_error: this.lastError } : {}),
      ...(this.killError ? { kill_switch_error: this.killError } : {}),
    };
  }

  /**
   * Re-read what changed. Calls coalesce: while one refresh runs, any number of further requests
   * make exactly one more run after it, so a notification that arrives mid-read is never lost.
   */
  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = (async () => {
      try {
        do {
          this.again = false;
          await this.refreshOnce();
        } while (this.again && !this.closed);
      } finally {
        this.running = undefined;
      }
    })();
    this.running = run;
    return run;
  }

  private async refreshOnce(): Promise<void> {
    const started = this.now();
    // Over the LISTEN connection when there is one (no pool contention under load, and a read that
    // does not come back in time proves the connection dead); over the pool otherwise.
    const listener = this.listener;
    const reader: ControlReader = listener ?? this.db;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const read = this.readChanges(reader);
      const patch = listener
        ? await Promise.race([
            read,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                timedOut = true;
                const err = new Error(`control state read on the LISTEN connection took over ${this.listenerTimeoutMs} ms`);
                this.listenerLost(listener, err);
                reject(err);
              }, this.listenerTimeoutMs);
              timer.unref();
            }),
          ])
        : await read;
      if (timedOut) return;
      this.lastOkStart = started;
      this.apply(patch);
      this.okCount++;
      this.lastError = undefined;
    } catch (err) {
      this.failedCount++;
      this.lastError = (err as Error).message;
      this.opts.onError?.('refresh', err as Error);
      throw err;
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** Read every topic whose version moved; nothing is applied here (a read that timed out must not land later). */
  private async readChanges(reader: ControlReader): Promise<Patch> {
    const versions = await readVersions(reader);
    const patch: Patch = {};
    const moved = (t: ControlTopic) => this.topics.has(t) && versions[t] !== this.versions[t];
    if (moved('kill_switch')) {
      try {
        const snap = await readKillSwitch(reader);
        patch.kill = { version: snap.version, state: snap.state };
      } catch (err) {
        if ((err as { code?: string }).code !== 'ERR_KILL_SWITCH_INVALID') throw err;
        // The database holds a state this replica cannot fully read: unavailable, not partial.
        patch.kill = { version: versions.kill_switch, error: (err as Error).message };
      }
    }
    if (moved('jobs')) patch.jobs = await readJobControls(reader);
    if (moved('policy')) patch.policy = await readActivePublication(reader);
    if (moved('pins')) patch.pins = await readPins(reader);
    return patch;
  }

  private apply(patch: Patch): void {
    if (patch.pins) {
      this.pins = patch.pins.docs;
      this.versions.pins = patch.pins.version;
      this.onPins?.();
      this.opts.onChange?.('pins', patch.pins.version);
    }
    if (patch.kill) {
      this.killState = patch.kill.state;
      this.killError = patch.kill.error;
      this.versions.kill_switch = patch.kill.version;
      if (patch.kill.error) this.opts.onError?.('refresh', new Error(patch.kill.error));
      this.opts.onChange?.('kill_switch', patch.kill.version);
    }
    if (patch.jobs) {
      this.jobs = new Map(patch.jobs.jobs.map((j) => [j.job_id, j]));
      this.versions.jobs = patch.jobs.version;
      this.opts.onChange?.('jobs', patch.jobs.version);
    }
    if (patch.policy) {
      const first = this.versions.policy === -1;
      const changed = first || patch.policy.publication?.seq !== this.publication?.seq;
      this.publication = patch.policy.publication;
      this.versions.policy = patch.policy.version;
      if (changed) this.opts.onPublication?.(patch.policy.publication);
      this.opts.onChange?.('policy', patch.policy.version);
    }
  }

  private age(): number | undefined {
    return this.lastOkStart === undefined ? undefined : this.now() - this.lastOkStart;
  }

  // -------------------------------------------------------------------------------------------
  // LISTEN

  private async connectListener(): Promise<void> {
    if (this.closed) return;
    let client: pg.Client | undefined;
    try {
      client = await this.db.connectDedicated();
      const c = client;
      c.on('notification', (msg) => {
        if (msg.channel === CONTROL_CHANNEL) this.refresh().catch(() => undefined);
      });
      c.on('error', (err) => this.listenerLost(c, err));
      c.on('end', () => this.listenerLost(c, new Error('LISTEN connection closed')));
      await c.query(`LISTEN ${CONTROL_CHANNEL}`);
      this.listenerPid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      if (this.closed) {
        await c.end().catch(() => undefined);
        return;
      }
      this.listener = c;
      this.reconnectDelay = 100;
      // Whatever was announced while no connection listened is read now.
      this.refresh().catch(() => undefined);
    } catch (err) {
      if (client) await client.end().catch(() => undefined);
      this.opts.onError?.('listen', err as Error);
      this.scheduleReconnect();
    }
  }

  private listenerLost(client: pg.Client, err: Error): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    this.listenerPid = undefined;
    this.opts.onError?.('listen', err);
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, this.opts.maxReconnectDelayMs ?? 5000);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.reconnects++;
      void this.connectListener();
    }, delay);
    this.reconnectTimer.unref();
  }
}

interface Patch {
  pins?: { version: number; docs: Map<string, string> };
  kill?: { version: number; state?: KillSwitchState; error?: string };
  jobs?: { version: number; jobs: JobControl[] };
  policy?: { version: number; publication: PolicyPublication | undefined };
}
