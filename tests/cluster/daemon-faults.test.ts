import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, clusterFixture, evalBody, type Replica, startReplicas } from './replicas.js';

// Faults of a cluster of real replicas on a real PostgreSQL: kill -9 of a replica under load, the
// database stopped mid-load, the pool exhausted. The invariant throughout: every HTTP 200 decision
// has its signed trace committed in PostgreSQL, and it verifies.

const cluster = clusterFixture();

interface Outcome {
  status: number | 'error';
  /** From sending the request to its answer. */
  ms?: number;
  eventId?: string;
  retryAfter?: string;
  error?: string;
  retryable?: boolean;
}

/** `total` decisions from `concurrency` loops, round-robin over the replicas still running. */
async function load(targets: () => Replica[], total: number, concurrency: number, onEach?: (done: number) => Promise<void> | void): Promise<Outcome[]> {
  const out: Outcome[] = [];
  let next = 0;
  const names = ['read-report', 'write-config', 'delete-database'] as const;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const live = targets();
        const r = live[i % live.length]!;
        const sent = Date.now();
        try {
          const res = await call(r.url, '/v1/gate/eval', { body: evalBody(names[i % 3]!) });
          out.push({
            status: res.status,
            ms: Date.now() - sent,
            ...(res.status === 200 ? { eventId: String(res.json.trace_path).slice('store:trace/'.length) } : {}),
            ...(typeof res.headers['retry-after'] === 'string' ? { retryAfter: res.headers['retry-after'] } : {}),
            ...(res.json?.error ? { error: res.json.error, retryable: res.json.retryable } : {}),
          });
        } catch {
          out.push({ status: 'error' }); // the replica died with the request in flight: no answer
        }
        await onEach?.(out.length);
      }
    }),
  );
  return out;
}

/** Every acknowledged decision's trace is in PostgreSQL and verifies on `verifier`. */
async function expectAllStoredAndVerified(url: string, outcomes: Outcome[], verifier: Replica): Promise<void> {
  const ids = outcomes.filter((o) => o.status === 200).map((o) => o.eventId!);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  let rows: { id: string; body: Buffer }[];
  try {
    rows = (await db.query<{ id: string; body: Buffer }>("SELECT id, body FROM ward_store_entries WHERE kind = 'trace' AND id = ANY($1::text[])", [ids])).rows;
  } finally {
    await db.end();
  }
  expect(new Set(rows.map((r) => r.id))).toEqual(new Set(ids));
  for (let i = 0; i < rows.length; i += 200) {
    const traces = rows.slice(i, i + 200).map((r) => JSON.parse(r.body.toString('utf8')));
    const v = await call(verifier.url, '/v1/trace/verify', { body: { traces } });
    expect(v.json.summary, v.text).toMatchObject({ failed: 0 });
  }
}

/** Some decisions were refused, each with 503, Retry-After and retryable (never another answer). */
function expectRefusedRetryable(outcomes: Outcome[], error: RegExp): void {
  const refused = outcomes.filter((o) => o.status !== 200);
  expect(refused.length).toBeGreaterThan(0);
  for (const o of refused) {
    expect(o.status).toBe(503);
    expect(o.retryAfter).toBe('1');
    expect(o.retryable).toBe(true);
    expect(o.error).toMatch(error);
  }
}

/** No restart: each replica is ready and deciding again by itself; every 200 before and after has its trace. */
async function expectRecovered(url: string, replicas: [Replica, Replica], before: Outcome[]): Promise<void> {
  for (const r of replicas) {
    await until(`${r.name} ready`, async () => ((await call(r.url, '/readyz')).status === 200 ? true : undefined));
    await until(`${r.name} deciding`, async () => ((await call(r.url, '/v1/gate/eval', { body: evalBody('read-report') })).status === 200 ? true : undefined));
  }
  const after = await load(() => replicas, 40, 4);
  expect(after.every((o) => o.status === 200)).toBe(true);
  await expectAllStoredAndVerified(url, [...before, ...after], replicas[1]);
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('cluster faults', () => {
  it('kill -9 of one replica under load: every acknowledged decision has a verifying trace in PostgreSQL', async () => {
    const url = await cluster.server.createDatabase();
    cluster.replicas = await startReplicas(2, { storeUrl: url });
    const [a, b] = cluster.replicas as [Replica, Replica];
    let killed = false;
    const outcomes = await load(
      () => (killed ? [b] : [a, b]),
      300,
      8,
      async (done) => {
        if (!killed && done >= 100) {
          killed = true;
          await a.kill();
        }
      },
    );
    expect(await a.exited).toBe('SIGKILL');
    const ok = outcomes.filter((o) => o.status === 200);
    expect(ok.length).toBeGreaterThan(250);
    expect(outcomes.every((o) => o.status === 200 || o.status === 'error')).toBe(true);
    await expectAllStoredAndVerified(url, outcomes, b);
  }, 120_000);

  it('PostgreSQL stopped mid-load: 503 with Retry-After (never an unrecorded 200), /readyz 503, recovery on its own once it returns', async () => {
    const url = await cluster.server.createDatabase();
    cluster.replicas = await startReplicas(2, { storeUrl: url });
    const [a, b] = cluster.replicas as [Replica, Replica];
    let stopped = false;
    const first = await load(
      () => [a, b],
      200,
      8,
      async (done) => {
        if (!stopped && done >= 60) {
          stopped = true;
          await cluster.server.stop();
        }
      },
    );
    try {
      expectRefusedRetryable(first, /unavailable|commit failed/);
      for (const r of [a, b]) {
        const ready = await call(r.url, '/readyz');
        expect(ready.status).toBe(503);
        expect(ready.json).toMatchObject({ ok: false, store: false });
        expect(ready.headers['retry-after']).toBe('1');
      }
    } finally {
      await cluster.server.start();
    }
    await expectRecovered(url, [a, b], first);
    expect(a.running && b.running).toBe(true);
  }, 120_000);

  it('PostgreSQL frozen (SIGSTOP) mid-load: every request answered within 5 s, 503 with Retry-After, no 200 without a committed trace; recovery on its own after SIGCONT', async () => {
    const url = await cluster.server.createDatabase();
    cluster.replicas = await startReplicas(2, { storeUrl: url });
    const [a, b] = cluster.replicas as [Replica, Replica];
    let frozen = false;
    let first: Outcome[];
    try {
      first = await load(
        () => [a, b],
        160,
        8,
        (done) => {
          if (!frozen && done >= 60) {
            frozen = true;
            cluster.server.freeze();
          }
        },
      );
      expectRefusedRetryable(first, /unavailable/);
      // Nothing waited for the database: the decision deadline is 4.5 s (commit 3 s, statement 4 s).
      const slowest = Math.max(...first.map((o) => o.ms ?? 0));
      expect(slowest).toBeLessThanOrEqual(5000);
      for (const r of [a, b]) {
        const sent = Date.now();
        const ready = await call(r.url, '/readyz');
        expect(ready.status).toBe(503);
        expect(Date.now() - sent).toBeLessThan(3000);
      }
    } finally {
      cluster.server.thaw();
    }
    await expectRecovered(url, [a, b], first);
  }, 120_000);

  it('pool exhausted: 503 with Retry-After within the acquire timeout, no hang; served again once it frees up', async () => {
    const url = await cluster.server.createDatabase();
    cluster.replicas = await startReplicas(1, { storeUrl: url, args: ['--store-pool', '1', '--store-acquire-timeout-ms', '300', '--store-statement-timeout-ms', '4000'] });
    const [a] = cluster.replicas as [Replica];
    expect((await call(a.url, '/v1/gate/eval', { body: evalBody('read-report') })).status).toBe(200);

    // Another session holds the evidence table: the replica's one connection blocks in its commit.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE ward_store_entries IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const stuck = call(a.url, '/v1/gate/eval', { body: evalBody('write-config') }); // takes the connection
      await new Promise((r) => setTimeout(r, 100));
      const [second, listing] = await Promise.all([call(a.url, '/v1/gate/eval', { body: evalBody('read-report') }), call(a.url, '/v1/traces?limit=1')]);
      const quick = Date.now() - started;
      for (const r of [second, listing]) {
        expect(r.status, r.text).toBe(503);
        expect(r.headers['retry-after']).toBe('1');
        expect(r.json).toMatchObject({ ok: false, retryable: true, error: expect.stringMatching(/connections are busy/) });
      }
      expect(quick).toBeLessThan(3000); // well within the statement timeout: not queued behind the stuck commit
      const first = await stuck; // bounded by the statement timeout, refused, never answered as decided
      expect(first.status).toBe(503);
      expect(first.headers['retry-after']).toBe('1');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    await until('served again', async () => ((await call(a.url, '/v1/gate/eval', { body: evalBody('read-report') })).status === 200 ? true : undefined));
  }, 60_000);
});
