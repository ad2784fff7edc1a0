import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listSpool, openLevelStore, spoolTrace } from '../../src/store/index.js';
import { startChild } from './spawn.js';
import { trace } from './traces.js';

function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'ward-crash-'));
}

describe('store ownership across processes', () => {
  it('fails fast with the holder pid while another process owns the store, and recovers after kill -9', async () => {
    const dir = stateDir();
    const holder = await startChild('hold', dir);
    await holder.waitFor((l) => l === 'READY');
    const err = await openLevelStore(dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_STORE_LOCKED', message: expect.stringContaining(`held by pid ${holder.process.pid}`) });
    holder.process.kill('SIGKILL');
    await holder.exited;
    const store = await openLevelStore(dir);
    expect(await store.count()).toBe(0);
    await store.close();
  });

  it('loses no acknowledged write and never corrupts the store when killed mid-ingest', async () => {
    const dir = stateDir();
    const total = 400;
    for (let n = 0; n < total; n++) spoolTrace(dir, trace(n));
    const child = await startChild('ingest-loop', dir);
    await child.waitFor((l) => l.startsWith('ACK ') && child.lines.filter((x) => x.startsWith('ACK ')).length >= 60);
    child.process.kill('SIGKILL');
    await child.exited;
    const acknowledged = child.lines.filter((l) => l.startsWith('ACK ')).map((l) => l.slice(4));
    expect(acknowledged.length).toBeGreaterThanOrEqual(60);
    expect(acknowledged.length).toBeLessThan(total); // it really died mid-way

    const store = await openLevelStore(dir); // stale lock taken over, LevelDB recovers its log
    for (const id of acknowledged) expect(await store.get('trace', id)).toBeDefined();
    const before = await store.count('trace');
    const report = await store.ingest(); // the rest, plus any file stored but not yet removed
    expect(report.rejected).toEqual([]);
    expect(await store.count('trace')).toBe(total);
    expect(report.stored.length).toBe(total - before);
    expect(listSpool(dir)).toHaveLength(0);
    const ids = new Set((await store.list({ kind: 'trace' })).map((e) => e.id));
    expect(ids.size).toBe(total);
    await store.close();
  });
});
