import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { describe, expect, it } from 'vitest';
import { spoolTrace } from '../../src/store/index.js';
import { openZip } from '../../src/zip/index.js';
import { ward, workdir } from '../pack/cli.js';
import { trace } from './traces.js';

/** Entries as a store written before ids were checked holds them (keys laid out as `level.ts` writes them). */
async function plantLegacyEntries(state: string, ids: readonly string[]): Promise<void> {
  const dir = join(state, 'store', 'db');
  mkdirSync(dir, { recursive: true });
  const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  const batch = db.batch();
  ids.forEach((id, n) => {
    const time = `2026-02-17T00:00:0${n}.000000000Z`;
    const body = JSON.stringify(trace(50 + n, { event_id: id }));
    const entry = { kind: 'trace', id, digest: String(n).repeat(64).slice(0, 64), size: body.length, time, ingested_at: time };
    batch.put(['e', 'trace', id].join('\0'), JSON.stringify(entry));
    batch.put(['b', 'trace', id].join('\0'), body);
    batch.put(['t', 'trace', time, id].join('\0'), '');
  });
  await batch.write({ sync: true });
  await db.close();
}

describe('store export over a store written before ids were checked', () => {
  it('lists them, writes the valid entries, reports the others under skipped and exits 2; gc removes them; the export imports', async () => {
    const cwd = workdir();
    const state = join(cwd, '.ward');
    await plantLegacyEntries(state, ['../../escape', 'hidden\u0000id']);
    for (let n = 0; n < 3; n++) spoolTrace(state, trace(n));
    // The NUL id used to be cut at the key separator: stored, never listed. It is listed now.
    const list = await ward(['store', 'list', '--json'], cwd);
    expect(list.json['entries'].map((e: { id: string }) => e.id).slice(3)).toEqual(['hidden\u0000id', '../../escape']);
    const exported = await ward(['store', 'export', '--out', 'all.zip', '--json'], cwd);
    expect(exported.code).toBe(2);
    expect(exported.json).toMatchObject({
      ok: false,
      count: 3,
      skipped: [
        { kind: 'trace', id: '../../escape', reason: 'not a valid id: contains a path separator' },
        { kind: 'trace', id: 'hidden\u0000id', reason: 'not a valid id: contains NUL' },
      ],
    });
    const names = openZip(readFileSync(join(cwd, 'all.zip'))).entries.map((e) => e.name);
    expect(names).toEqual([0, 1, 2].map((n) => `traces/${trace(n)['event_id'] as string}.json`));
    const text = await ward(['store', 'export', '--out', 'again.zip'], cwd);
    expect(text.stdout).toContain('skipped trace "../../escape": not a valid id: contains a path separator');

    // Retention can now remove them too.
    const gc = await ward(['store', 'gc', '--max-count', '3', '--kind', 'trace', '--json'], cwd);
    expect(gc.json).toMatchObject({ removed: 2, remaining: 3 });
    expect((await ward(['store', 'export', '--out', 'clean.zip', '--json'], cwd)).code).toBe(0);

    const other = workdir();
    const imported = await ward(['store', 'import', join(cwd, 'all.zip'), '--json'], other);
    expect(imported.json).toMatchObject({ ok: true, stored: 3, duplicates: 0 });
  });
});
