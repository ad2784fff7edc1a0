import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listSpool, openLevelStore, spoolBytes, spoolTrace, storePaths, type LevelStore } from '../../src/store/index.js';
import { demoPack, record, TEST_KEY } from '../pack/helpers.js';
import { trace } from './traces.js';

const open: LevelStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'ward-store-'));
}

async function openStore(dir: string): Promise<LevelStore> {
  const store = await openLevelStore(dir);
  open.push(store);
  return store;
}

const bytesOf = (value: unknown) => Buffer.from(JSON.stringify(value, null, 2) + '\n');

describe('pack store', () => {
  it('stores traces and finds them by id, run, session, tool, verdict and reason code', async () => {
    const store = await openStore(stateDir());
    const result = await store.put(Array.from({ length: 30 }, (_, n) => ({ kind: 'trace' as const, bytes: bytesOf(trace(n)) })));
    expect(result.stored).toHaveLength(30);
    expect(await store.get('trace', trace(7)['event_id'] as string)).toMatchObject({ run_id: 'run_3', session_id: 'sess_2', verdict: 'allow' });
    expect((await store.list({ kind: 'trace', run_id: 'run_1' })).map((e) => e.run_id)).toEqual(Array(8).fill('run_1'));
    expect(await store.list({ verdict: 'block' })).toHaveLength(10);
    expect(await store.list({ reason_code: 'destructive_apply_requires_approval', tool_name: 'fs.write' })).toHaveLength(5);
    expect(await store.list({ session_id: 'sess_0', verdict: 'block' })).toHaveLength(2);
    const newest = await store.list({ kind: 'trace', limit: 3 });
    expect(newest.map((e) => e.id)).toEqual([29, 28, 27].map((n) => trace(n)['event_id']));
    const oldest = await store.list({ kind: 'trace', limit: 2, order: 'asc' });
    expect(oldest.map((e) => e.id)).toEqual([0, 1].map((n) => trace(n)['event_id']));
    const window = await store.list({ since: '2026-02-18T00:00:10Z', until: '2026-02-18T00:00:12Z' });
    expect(window.map((e) => e.id).sort()).toEqual([10, 11].map((n) => trace(n)['event_id']));
    expect((await store.resolve(trace(4)['trace_id'] as string)).map((e) => e.id)).toEqual([trace(4)['event_id']]);
  });

  it('returns stored bytes exactly and never overwrites evidence with different bytes', async () => {
    const store = await openStore(stateDir());
    const original = bytesOf(trace(1));
    await store.put([{ kind: 'trace', bytes: original }]);
    const again = await store.put([{ kind: 'trace', bytes: original }]);
    expect(again).toMatchObject({ duplicates: 1, stored: [] });
    const forged = await store.put([{ kind: 'trace', bytes: bytesOf(trace(1, { verdict: 'allow', tool_name: 'x' })) }]);
    expect(forged.conflicts).toEqual([{ kind: 'trace', id: trace(1)['event_id'] }]);
    const entry = (await store.get('trace', trace(1)['event_id'] as string))!;
    expect((await store.read(entry)).equals(original)).toBe(true);
  });

  it('stores runpacks and packs as objects, resolvable by id prefix, run id and pack id', async () => {
    const store = await openStore(stateDir());
    const runpack = record({ signingKey: TEST_KEY });
    const pack = demoPack();
    await store.put([{ kind: 'runpack', bytes: runpack.bytes }, { kind: 'pack', bytes: pack.bytes }]);
    const [byPrefix] = await store.resolve(pack.manifest.pack_id.slice(0, 12));
    expect(byPrefix).toMatchObject({ kind: 'pack', id: pack.manifest.pack_id, pack_type: 'run', run_id: 'run_demo' });
    expect((await store.read(byPrefix!)).equals(pack.bytes)).toBe(true);
    expect((await store.resolve('run_demo', 'runpack')).map((e) => e.id)).toEqual([runpack.manifest.manifest_digest]);
    expect((await store.list({ tool_name: 'tool.fetch' })).map((e) => e.kind).sort()).toEqual(['pack', 'runpack']);
  });

  it('refuses artifacts that fail their integrity checks', async () => {
    const store = await openStore(stateDir());
    const broken = Buffer.from(demoPack().bytes);
    broken[broken.length - 40] ^= 0xff;
    await expect(store.put([{ kind: 'pack', bytes: broken }])).rejects.toThrow();
    await expect(store.put([{ kind: 'trace', bytes: Buffer.from('{"schema_id":"other"}') }])).rejects.toThrow(/not a gait.gate.trace/);
  });

  it('ingests the spool idempotently and sets bad files aside', async () => {
    const dir = stateDir();
    spoolTrace(dir, trace(1));
    spoolTrace(dir, trace(1)); // same content, same spool file
    spoolTrace(dir, trace(2));
    spoolBytes(dir, 'runpack', record().bytes);
    spoolBytes(dir, 'trace', Buffer.from('not json'));
    expect(listSpool(dir)).toHaveLength(4);
    const store = await openStore(dir);
    const report = await store.ingest();
    expect(report.stored.map((e) => e.kind).sort()).toEqual(['runpack', 'trace', 'trace']);
    expect(report.rejected).toHaveLength(1);
    expect(listSpool(dir)).toHaveLength(0);
    expect(readdirSync(join(dir, 'spool', 'rejected'))).toHaveLength(1);
    spoolTrace(dir, trace(1)); // spooled again after ingestion (e.g. a crash before removal)
    const again = await store.ingest();
    expect(again).toMatchObject({ files: 1, duplicates: 1, stored: [] });
    expect(await store.count('trace')).toBe(2);
  });

  it('ingests trace files gate eval wrote to <state>/traces once each', async () => {
    const dir = stateDir();
    mkdirSync(join(dir, 'traces'));
    for (let n = 0; n < 3; n++) writeFileSync(join(dir, 'traces', `trace_${n}.json`), bytesOf(trace(n)));
    writeFileSync(join(dir, 'traces', 'approval_audit_x.json'), '{"schema_id":"gait.gate.approval_audit_record"}');
    const store = await openStore(dir);
    const first = await store.ingest();
    expect(first.stored).toHaveLength(3);
    expect(first.rejected.map((r) => r.file)).toEqual(['traces/approval_audit_x.json']);
    const second = await store.ingest();
    expect(second).toMatchObject({ files: 0, stored: [], rejected: [] });
    writeFileSync(join(dir, 'traces', 'trace_9.json'), bytesOf(trace(9)));
    expect((await store.ingest()).stored.map((e) => e.id)).toEqual([trace(9)['event_id']]);
  });

  it('applies retention by age and by count', async () => {
    const store = await openStore(stateDir());
    await store.put(Array.from({ length: 10 }, (_, n) => ({ kind: 'trace' as const, bytes: bytesOf(trace(n)) })));
    const byAge = await store.gc({ maxAgeSeconds: 5, now: new Date('2026-02-18T00:00:10Z') });
    expect(byAge).toEqual({ removed: 5, remaining: 5 });
    const byCount = await store.gc({ maxCount: 2, now: new Date('2026-02-18T00:00:10Z') });
    expect(byCount).toEqual({ removed: 3, remaining: 2 });
    expect((await store.list({})).map((e) => e.id)).toEqual([9, 8].map((n) => trace(n)['event_id']));
    expect(await store.list({ verdict: 'block' })).toHaveLength(1); // index entries removed too
  });

  it('removes pack objects on retention', async () => {
    const store = await openStore(stateDir());
    const pack = demoPack();
    const [entry] = (await store.put([{ kind: 'pack', bytes: pack.bytes }])).stored;
    expect(existsSync(store.objectPath(entry!))).toBe(true);
    await store.gc({ maxCount: 0, kind: 'pack', now: new Date() });
    expect(existsSync(store.objectPath(entry!))).toBe(false);
  });
});

describe('store lock', () => {
  it('refuses a second open in the same process without touching LevelDB', async () => {
    const dir = stateDir();
    await openStore(dir);
    const err = await openLevelStore(dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_STORE_LOCKED', message: expect.stringContaining(`pid ${process.pid}`) });
  });

  it('treats a lock whose pid was recycled (other process start time) as stale', async () => {
    const dir = stateDir();
    const paths = storePaths(dir);
    mkdirSync(paths.root, { recursive: true });
    writeFileSync(paths.lock, JSON.stringify({ pid: process.pid, host: hostname(), proc_start: 'not-this-process', since: 'x', token: 't' }));
    const store = await openStore(dir);
    expect(await store.count()).toBe(0);
  });

  it('never breaks a lock held from another host', async () => {
    const dir = stateDir();
    const paths = storePaths(dir);
    mkdirSync(paths.root, { recursive: true });
    writeFileSync(paths.lock, JSON.stringify({ pid: 999999, host: 'elsewhere.example', proc_start: '', since: '2026-01-01', token: 't' }));
    const err = await openLevelStore(dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_STORE_LOCKED', message: expect.stringContaining('held by pid 999999 on elsewhere.example') });
  });

  it('takes over a lock left by a dead process', async () => {
    const dir = stateDir();
    const paths = storePaths(dir);
    await openStore(dir);
    await open.pop()!.close();
    writeFileSync(paths.lock, JSON.stringify({ pid: 999999, host: hostname(), proc_start: '', since: 'x', token: 't' }));
    const store = await openStore(dir);
    expect(await store.count()).toBe(0);
  });
});
