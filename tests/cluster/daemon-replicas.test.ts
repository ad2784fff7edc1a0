import { dirname, join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fixture, tempDir, ward } from '../cli/run.js';
import { call, clusterFixture, evalBody, type Replica, startReplicas, writeSharedKey } from './replicas.js';

// Two real `ward serve` replicas on one PostgreSQL: every decision is readable and verifiable from
// either replica, and each publishes both replicas' keys.

const cluster = clusterFixture();

describe('ward serve replicas on PostgreSQL', () => {
  it('decisions on both replicas are readable and verify from the other; the JWKS of each lists both keys', async () => {
    const url = await cluster.server.createDatabase();
    cluster.replicas = await startReplicas(2, { storeUrl: url });
    const [a, b] = cluster.replicas as [Replica, Replica];
    expect(a.keyId).not.toBe(b.keyId);
    expect(a.start.store).not.toContain(cluster.server.password);

    const decided: { by: Replica; other: Replica; id: string; traceId: string }[] = [];
    for (const [by, other] of [[a, b], [b, a]] as const) {
      for (const name of ['read-report', 'delete-database'] as const) {
        const r = await call(by.url, '/v1/gate/eval', { body: evalBody(name) });
        expect(r.status, r.text).toBe(200);
        decided.push({ by, other, id: String(r.json.trace_path).replace(/^store:trace\//, ''), traceId: r.json.trace_id });
      }
    }

    for (const d of decided) {
      const got = await call(d.other.url, `/v1/traces/${d.id}`);
      expect(got.status, got.text).toBe(200);
      expect(got.json.trace.trace_id).toBe(d.traceId);
      expect(got.json.trace.signature.key_id).toBe(d.by.keyId);
      const shown = await call(d.other.url, `/v1/store/${d.id}`);
      expect(shown.status, shown.text).toBe(200);
      expect(shown.json.entry.id).toBe(d.id);
      const content = await call(d.other.url, `/v1/store/${d.id}/content`);
      expect(content.status).toBe(200);
      const verified = await call(d.other.url, '/v1/trace/verify', { body: { trace: got.json.trace } });
      expect(verified.json).toMatchObject({ ok: true, signature_status: 'verified', key_id: d.by.keyId });
    }
    for (const r of cluster.replicas) {
      const list = await call(r.url, '/v1/traces?limit=10&order=asc');
      expect(list.json.entries.slice(0, 4).map((e: { id: string }) => e.id)).toEqual(decided.map((d) => d.id));
      const jwks = await call(r.url, '/.well-known/jwks.json');
      const ids = (jwks.json.keys as { key_id: string }[]).map((k) => k.key_id);
      expect(ids).toEqual(expect.arrayContaining([a.keyId, b.keyId]));
      const ready = await call(r.url, '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json).toMatchObject({ ok: true, store: true, replica: r.name });
      const metrics = (await call(r.url, '/metrics')).text;
      expect(metrics).toMatch(/^ward_store_round_trips_total [1-9]/m);
      expect(metrics).toMatch(/^ward_store_up 1$/m);
    }

    // A runpack uploaded to one replica is served by the other.
    const dir = tempDir('ward-runpack-');
    const record = JSON.parse(ward(['run', 'record', '--input', fixture('runs/run_record_demo.json'), '--json'], { cwd: dir }).stdout);
    const zip = readFileSync(join(dir, record.bundle));
    const up = await call(a.url, '/v1/packs', { raw: zip, headers: { 'content-type': 'application/zip' } });
    expect(up.status, up.text).toBe(201);
    const got = await call(b.url, `/v1/packs/${record.run_id}`);
    expect(got.status, got.text).toBe(200);
    const listed = await call(b.url, '/v1/packs?kind=runpack');
    expect(listed.json.entries.map((e: { id: string }) => e.id)).toEqual([record.manifest_digest]);

    // Group commit: decisions that arrive together share one commit (one INSERT round trip). A
    // batch request decides its 32 items in one turn of the event loop, so they form one group.
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await call(a.url, '/metrics')).text)?.[1] ?? NaN);
    const before = { commits: await metric('ward_trace_batch_size_count'), trips: await metric('ward_store_round_trips_total') };
    const batch = await call(a.url, '/v1/gate/eval/batch', { body: { requests: Array.from({ length: 32 }, () => evalBody('read-report')) } });
    expect(batch.status, batch.text).toBe(200);
    expect(batch.json.results.every((r: { verdict?: string }) => r.verdict === 'allow')).toBe(true);
    const commits = (await metric('ward_trace_batch_size_count')) - before.commits;
    const trips = (await metric('ward_store_round_trips_total')) - before.trips;
    expect(commits, `${commits} commits, ${trips} round trips for 32 decisions`).toBeLessThanOrEqual(2);
    expect(trips).toBeLessThan(8); // well under one database round trip per decision

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const keys = await db.query('SELECT key_id, replica FROM ward_signing_keys ORDER BY replica');
      expect(keys.rows.map((row) => row.key_id).sort()).toEqual([a.keyId, b.keyId].sort());
      const migrations = await db.query('SELECT count(*)::int AS n FROM ward_schema_migrations');
      expect(migrations.rows[0].n).toBeGreaterThanOrEqual(4);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('replicas may share one key; a replica that starts later is verified by the others at once (key set re-read on a miss)', async () => {
    const url = await cluster.server.createDatabase();
    cluster.replicas = await startReplicas(2, { storeUrl: url, sharedKey: true });
    const [a, b] = cluster.replicas as [Replica, Replica];
    expect(a.keyId).toBe(b.keyId);
    const r = await call(a.url, '/v1/gate/eval', { body: evalBody('write-config') });
    expect(r.status, r.text).toBe(200);
    const shared = (await call(b.url, `/v1/store/${String(r.json.trace_path).slice('store:trace/'.length)}/content`)).json;
    expect(shared.signature.key_id).toBe(a.keyId);

    // C has its own key and starts after A and B read the key table.
    const [c] = await startReplicas(1, { storeUrl: url });
    cluster.replicas.push(c!);
    const rc = await call(c!.url, '/v1/gate/eval', { body: evalBody('read-report') });
    expect(rc.status, rc.text).toBe(200);
    const traceC = (await call(a.url, `/v1/store/${String(rc.json.trace_path).slice('store:trace/'.length)}/content`)).json;
    const verified = await call(a.url, '/v1/trace/verify', { body: { traces: [traceC, shared] } });
    expect(verified.json.ok, verified.text).toBe(true);
    expect(verified.json.results.map((x: { key_id: string }) => x.key_id)).toEqual([c!.keyId, a.keyId]);
    const jwks = await call(a.url, '/.well-known/jwks.json');
    expect((jwks.json.keys as { key_id: string }[]).map((k) => k.key_id)).toEqual(expect.arrayContaining([a.keyId, c!.keyId]));
  }, 60_000);

  it('a key reloaded on one replica (SIGHUP) is registered before it signs, and verifies on the other at once', async () => {
    const url = await cluster.server.createDatabase();
    const keyFile = writeSharedKey();
    cluster.replicas = [...(await startReplicas(1, { storeUrl: url, sharedKey: keyFile })), ...(await startReplicas(1, { storeUrl: url }))];
    const [a, b] = cluster.replicas as [Replica, Replica];
    const oldKey = a.keyId;
    writeSharedKey(dirname(keyFile)); // the same file, a new key
    a.proc.kill('SIGHUP');
    const newKey = await until(async () => {
      const id = (await call(a.url, '/v1/policy')).json.signing_key.key_id as string;
      return id !== oldKey ? id : undefined;
    });
    // Decisions switch to the new key once it is in the table; until then the old one signs.
    const trace = await until(async () => {
      const r = await call(a.url, '/v1/gate/eval', { body: evalBody('read-report') });
      const t = (await call(b.url, `/v1/store/${String(r.json.trace_path).slice('store:trace/'.length)}/content`)).json;
      return t.signature.key_id === newKey ? t : undefined;
    });
    const verified = await call(b.url, '/v1/trace/verify', { body: { trace } });
    expect(verified.json).toMatchObject({ ok: true, key_id: newKey });
    const jwks = await call(b.url, '/.well-known/jwks.json');
    expect((jwks.json.keys as { key_id: string }[]).map((k) => k.key_id)).toEqual(expect.arrayContaining([oldKey, newKey, b.keyId]));
  }, 60_000);
  it('the decision service (/v1/evaluate) commits its trace to PostgreSQL before answering; a database that is down gets 503 with Retry-After', async () => {
    const url = await cluster.server.createDatabase();
    // No periodic ingestion: the trace file in the replica's state directory is not what reaches the store.
    cluster.replicas = await startReplicas(2, { storeUrl: url, args: ['--ingest-interval-ms', '0'] });
    const [a, b] = cluster.replicas as [Replica, Replica];
    const body = { call: { name: 'read_file', args: { path: '/w/a' }, context: { identity: 'a', workspace: '/w', session_id: 's', risk_class: 'low' } } };
    const r = await call(a.url, '/v1/evaluate', { body });
    expect(r.status, r.text).toBe(200);
    const traceId = String(r.json.trace_id);
    const got = await call(b.url, `/v1/traces/${traceId}`);
    expect(got.status, got.text).toBe(200);
    expect(got.json.trace.signature.key_id).toBe(a.keyId);

    await cluster.server.stop();
    try {
      const down = await call(a.url, '/v1/evaluate', { body });
      expect(down.status, down.text).toBe(503);
      expect(down.headers['retry-after']).toBe('1');
      expect(down.json).toMatchObject({ ok: false });
    } finally {
      await cluster.server.start();
    }
    // Once the database was seen down, decisions are refused at once until the replica's probe
    // (every 500 ms) sees it back (docs/cluster.md): the replica recovers by itself, within seconds.
    let again = await call(a.url, '/v1/evaluate', { body });
    for (const until = Date.now() + 20_000; again.status === 503 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 100));
      again = await call(a.url, '/v1/evaluate', { body });
    }
    expect(again.status, again.text).toBe(200);
  });
  it("a replica's retired keys (its state directory's key ring) are registered, so traces they signed verify on every replica", async () => {
    const url = await cluster.server.createDatabase();
    const cwd = tempDir('ward-ring-');
    const stateDir = join(cwd, '.ward');
    const first = JSON.parse(ward(['keys', 'init', '--state-dir', stateDir, '--json'], { cwd }).stdout);
    ward(['keys', 'rotate', '--state-dir', stateDir, '--json'], { cwd });
    const retired = String(first.key_id);
    cluster.replicas = [...(await startReplicas(1, { storeUrl: url, stateDir })), ...(await startReplicas(1, { storeUrl: url }))];
    const [a, b] = cluster.replicas as [Replica, Replica];
    expect(a.keyId).not.toBe(retired);
    const jwks = await call(b.url, '/.well-known/jwks.json');
    expect((jwks.json.keys as { key_id: string }[]).map((k) => k.key_id)).toEqual(expect.arrayContaining([retired, a.keyId, b.keyId]));
  });
});

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
