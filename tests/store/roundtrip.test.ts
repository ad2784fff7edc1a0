import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportStore, importStore, openLevelStore, type LevelStore } from '../../src/store/index.js';
import { openZipFile } from '../../src/zip/index.js';

const open: LevelStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

async function openStore(): Promise<LevelStore> {
  const store = await openLevelStore(mkdtempSync(join(tmpdir(), 'ward-roundtrip-')));
  open.push(store);
  return store;
}

const N = 100_000;
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** The smallest valid trace: schema, ids and a time (about 150 bytes). */
function tinyTrace(n: number): Buffer {
  const seconds = String(n % 60).padStart(2, '0');
  return Buffer.from(`{"schema_id":"gait.gate.trace","trace_id":"${hex(n, 24)}","event_id":"${hex(n + 0xe0000000, 24)}","observed_at":"2026-02-18T00:00:${seconds}.${String(n).padStart(9, '0')}Z","verdict":"allow"}`);
}

describe('store export → import at 100,000 entries', () => {
  it('round-trips every entry byte for byte through one ZIP64 archive', async () => {
    const source = await openStore();
    for (let i = 0; i < N; i += 10_000) {
      const put = await source.put(Array.from({ length: 10_000 }, (_, j) => ({ kind: 'trace' as const, bytes: tinyTrace(i + j) })));
      expect(put.stored).toHaveLength(10_000);
    }
    const out = join(mkdtempSync(join(tmpdir(), 'ward-roundtrip-')), 'all.zip');

    let t = performance.now();
    const report = await exportStore(source, {}, out);
    const exportMs = performance.now() - t;
    expect(report).toMatchObject({ count: N, skipped: [] });
    expect(statSync(out).size).toBe(report.bytes);
    const zip = openZipFile(out, { limits: { maxEntries: 1_000_000 } });
    try {
      expect(zip.entries).toHaveLength(N); // more than 65,535: a ZIP64 archive
    } finally {
      zip.close();
    }
    expect(readFileSync(out).readUInt16LE(report.bytes - 22 + 10)).toBe(0xffff);
    await open.shift()!.close(); // the source is done: its compactions should not compete with the import

    const target = await openStore();
    t = performance.now();
    const put = await importStore(target, out);
    const importMs = performance.now() - t;
    expect(put.stored).toBe(N);
    expect(put.conflicts).toEqual([]);
    expect(await target.count('trace')).toBe(N);
    for (const n of [0, 1, 65_535, 65_536, N - 1]) {
      const entry = (await target.get('trace', hex(n + 0xe0000000, 24)))!;
      expect((await target.read(entry)).equals(tinyTrace(n))).toBe(true);
    }
    console.log(`store round trip, ${N} traces: export ${Math.round(exportMs)} ms (${report.bytes} bytes), import ${Math.round(importMs)} ms`);
  }, 180_000);
});
