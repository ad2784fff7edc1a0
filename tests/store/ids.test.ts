import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isWardError } from '../../src/errors.js';
import { buildAuthorizationPack, buildRunPack } from '../../src/pack/index.js';
import {
  exportStore,
  idProblem,
  importStore,
  openLevelStore,
  quoteId,
  spoolBytes,
  spoolTrace,
  type EvidenceStore,
  type LevelStore,
  type StoreEntry,
} from '../../src/store/index.js';
import { openZip, writeDeterministicZip } from '../../src/zip/index.js';
import { craftZip, resignRunpack } from '../pack/craft.js';
import { ward, workdir, DEMO_RECORD } from '../pack/cli.js';
import { record, TEST_KEY } from '../runpack/helpers.js';
import { trace } from './traces.js';

const open: LevelStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

async function openStore(dir = mkdtempSync(join(tmpdir(), 'ward-ids-'))): Promise<LevelStore> {
  const store = await openLevelStore(dir);
  open.push(store);
  return store;
}

const bytesOf = (value: unknown) => Buffer.from(JSON.stringify(value, null, 2) + '\n');
const BAD_IDS: [string, string][] = [
  ['../../etc/evil', 'contains a path separator'],
  ['a\u0000b', 'contains NUL'],
  ['a\u001bb', 'contains a control character'],
  ['dir\\x', 'contains a path separator'],
  ['..', 'contains ".."'],
  ['x'.repeat(129), 'longer than 128 characters'],
  ['', 'empty'],
  ['a b', "must start with a letter or digit and use only letters, digits, '_', '.', '-'"],
];

async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string; exitCode: number }> {
  try {
    await promise;
  } catch (err) {
    if (isWardError(err)) return { code: err.code, message: err.message, exitCode: err.exitCode };
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('one id rule (src/store/ids.ts)', () => {
  it.each(BAD_IDS)('refuses %j: %s', (id, problem) => {
    expect(idProblem(id)).toBe(problem);
  });

  it('accepts Ward’s and the reference’s ids', () => {
    for (const id of ['5db2362d8eb9b75a9265737a', 'a'.repeat(64), 'run_demo', 'run-2026.02.18', 'x'.repeat(128)]) expect(idProblem(id)).toBeUndefined();
  });
});

describe('ids on every way into the store', () => {
  it('store put refuses traces whose event_id or trace_id is not an id, and stores nothing', async () => {
    const store = await openStore();
    for (const [id, problem] of BAD_IDS.slice(0, 6)) {
      for (const field of ['event_id', 'trace_id']) {
        const err = await rejection(store.put([{ kind: 'trace', bytes: bytesOf(trace(1)) }, { kind: 'trace', bytes: bytesOf(trace(2, { [field]: id })) }]));
        expect(err).toMatchObject({ code: 'ERR_STORE_INVALID', exitCode: 2 });
        expect(err.message).toBe(`trace ${field} ${quoteId(id)} is not a valid id: ${problem}`);
      }
    }
    expect(await store.count()).toBe(0);
  });

  it('a trace with NUL in its id is rejected at ingest (it used to be stored and never listed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-ids-'));
    spoolTrace(dir, trace(1, { event_id: 'event\u0000hidden' }));
    spoolTrace(dir, trace(2));
    mkdirSync(join(dir, 'traces'));
    writeFileSync(join(dir, 'traces', 'trace_x.json'), bytesOf(trace(3, { trace_id: '../../x' })));
    const store = await openStore(dir);
    const report = await store.ingest();
    expect(report.stored.map((e) => e.id)).toEqual([trace(2)['event_id']]);
    expect(report.rejected.map((r) => r.error).sort()).toEqual([
      'trace event_id "event\\u0000hidden" is not a valid id: contains NUL',
      'trace trace_id "../../x" is not a valid id: contains a path separator',
    ]);
    expect(readdirSync(join(dir, 'spool', 'rejected'))).toHaveLength(1);
    expect((await store.list({})).map((e) => e.id)).toEqual([trace(2)['event_id']]);
  });

  it('runpacks and packs with a run id that is not an id are refused (store, pack build, run record)', async () => {
    const bad = resignRunpack(record({ signingKey: TEST_KEY }).bytes, (manifest) => {
      manifest['run_id'] = '../../../tmp/evil';
    });
    const store = await openStore();
    expect(await rejection(store.put([{ kind: 'runpack', bytes: bad }]))).toMatchObject({
      code: 'ERR_STORE_INVALID',
      message: 'runpack run_id "../../../tmp/evil" is not a valid id: contains a path separator',
    });
    try {
      buildRunPack(bad, { producerVersion: '0.1.0', signingKey: TEST_KEY });
      expect.unreachable();
    } catch (err) {
      expect(isWardError(err) && [err.code, err.message]).toEqual(['ERR_PACK_INVALID', 'pack source_ref (run_id) "../../../tmp/evil" is not a valid id: contains a path separator']);
    }
    const nul = resignRunpack(record({ signingKey: TEST_KEY }).bytes, (manifest) => {
      manifest['run_id'] = 'run\u0000demo';
    });
    expect(() => buildRunPack(nul, { producerVersion: '0.1.0' })).toThrow('contains NUL');
    const cwd = workdir();
    for (const runId of ['../x', 'run\u0000x']) {
      const run = await ward(['run', 'record', '--input', DEMO_RECORD, '--run-id', runId, '--json'], cwd);
      expect(run.code).toBe(6);
      expect(run.json['error']).toContain('run_id');
    }
    writeFileSync(join(cwd, 'bad.zip'), bad);
    const build = await ward(['pack', 'build', '--from', join(cwd, 'bad.zip'), '--json'], cwd);
    expect(build.code).toBe(6);
    expect(build.json['error']).toContain('is not a valid id: contains a path separator');
    const ingest = await ward(['store', 'ingest', join(cwd, 'bad.zip'), '--json'], cwd);
    expect(ingest.code).toBe(2);
  });

  it('pack build --type authorization refuses a trace whose trace_id is not an id', async () => {
    for (const [traceId, problem] of [['../../x', 'contains a path separator'], ['t\u0000x', 'contains NUL']] as const) {
      try {
        buildAuthorizationPack({ name: 'trace_x.json', bytes: bytesOf(trace(1, { trace_id: traceId })) }, [], { producerVersion: '0.1.0' });
        expect.unreachable();
      } catch (err) {
        expect(isWardError(err) && [err.code, err.message]).toEqual(['ERR_PACK_INVALID', `pack source_ref (trace_id) ${quoteId(traceId)} is not a valid id: ${problem}`]);
      }
    }
    const cwd = workdir();
    writeFileSync(join(cwd, 'trace_x.json'), bytesOf(trace(1, { trace_id: '../../x' })));
    const cli = await ward(['pack', 'build', '--type', 'authorization', '--from', 'trace_x.json', '--json'], cwd);
    expect(cli.code).toBe(6);
    expect(cli.json['error']).toContain('is not a valid id');
    expect(buildAuthorizationPack({ name: 'trace_x.json', bytes: bytesOf(trace(1)) }, [], { producerVersion: '0.1.0' }).manifest.source_ref).toBe(trace(1)['trace_id']);
  });

  it('store ingest stores the valid files it is given and reports the others (exit 2)', async () => {
    const cwd = workdir();
    const dir = join(cwd, 'in');
    mkdirSync(dir);
    writeFileSync(join(dir, 'trace_good.json'), bytesOf(trace(1)));
    writeFileSync(join(dir, 'trace_dots.json'), bytesOf(trace(2, { event_id: '../../escape' })));
    writeFileSync(join(dir, 'trace_nul.json'), bytesOf(trace(3, { trace_id: 'a\u0000b' })));
    writeFileSync(join(dir, 'link.zip'), craftZip([{ name: 'manifest.json', data: Buffer.from('{}'), mode: 0o120777 }]));
    const run = await ward(['store', 'ingest', dir, '--json'], cwd);
    expect(run.code).toBe(2);
    expect(run.json).toMatchObject({ ok: false, stored: 1, duplicates: 0 });
    expect(run.json['rejected'].map((r: { file: string; error: string }) => [r.file.slice(dir.length + 1), r.error])).toEqual([
      ['link.zip', 'zip entry "manifest.json": a symbolic link (only regular files are allowed)'],
      ['trace_dots.json', 'trace event_id "../../escape" is not a valid id: contains a path separator'],
      ['trace_nul.json', 'trace trace_id "a\\u0000b" is not a valid id: contains NUL'],
    ]);
    const list = await ward(['store', 'list', '--json'], cwd);
    expect(list.json['entries'].map((e: { id: string }) => e.id)).toEqual([trace(1)['event_id']]);
  });

  it('import refuses entry names that are not ids and artifacts whose ids are not, naming the entry', async () => {
    const store = await openStore();
    const dir = mkdtempSync(join(tmpdir(), 'ward-ids-'));
    const write = (name: string, bytes: Buffer) => {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      return path;
    };
    const good = bytesOf(trace(1));
    const cases: [string, Buffer, string, string][] = [
      ['traversal.zip', craftZip([{ name: 'traces/../../evil.json', data: good }]), 'ERR_ZIP_UNSAFE_PATH', 'zip entry "traces/../../evil.json": entry path traverses parent directories'],
      ['nul.zip', craftZip([{ name: 'traces/a\u0000b.json', data: good }]), 'ERR_ZIP_UNSAFE_PATH', 'zip entry "traces/a\\u0000b.json": entry name contains NUL'],
      ['space.zip', writeDeterministicZip([{ path: 'traces/a b.json', data: good }]), 'ERR_STORE_INVALID', `not a ward store export: entry "traces/a b.json": id "a b" is not a valid id: must start with a letter or digit and use only letters, digits, '_', '.', '-'`],
      ['colon.zip', craftZip([{ name: 'traces/a:b.json', data: good }]), 'ERR_ZIP_UNSAFE_PATH', 'zip entry "traces/a:b.json": entry name contains ":"'],
      ['stray.zip', writeDeterministicZip([{ path: 'notes.txt', data: good }]), 'ERR_STORE_INVALID', 'not a ward store export: unexpected entry "notes.txt"'],
      [
        'content.zip',
        writeDeterministicZip([{ path: 'traces/x.json', data: bytesOf(trace(2, { event_id: '../x' })) }]),
        'ERR_STORE_INVALID',
        'traces/x.json: trace event_id "../x" is not a valid id: contains a path separator',
      ],
    ];
    for (const [name, bytes, code, message] of cases) {
      const err = await rejection(importStore(store, write(name, bytes)));
      expect({ name, ...err }).toEqual({ name, code, message, exitCode: 2 });
    }
    expect(await store.count()).toBe(0);
    const cwd = workdir();
    writeFileSync(join(cwd, 'content.zip'), cases.find((c) => c[0] === 'content.zip')![1]);
    const cli = await ward(['store', 'import', 'content.zip', '--json'], cwd);
    expect(cli.code).toBe(2);
    expect(cli.json['error']).toContain('traces/x.json: trace event_id "../x"');
  });

  it('export leaves out (and reports) entries stored before ids were checked; the rest round-trips', async () => {
    const goodEntry = (n: number): StoreEntry => ({ kind: 'trace', id: trace(n)['event_id'] as string, digest: 'd', size: 10, time: '2026-02-18T00:00:00Z', ingested_at: '2026-02-18T00:00:00Z' });
    const legacy: StoreEntry[] = [goodEntry(1), { ...goodEntry(2), id: '../escape' }, { ...goodEntry(3), id: 'hidden\u0000id' }];
    const fake = {
      list: async () => legacy,
      read: async (e: StoreEntry) => bytesOf(trace(Number(e.id.slice(-1)) || 1)),
    } as unknown as EvidenceStore;
    const out = join(mkdtempSync(join(tmpdir(), 'ward-ids-')), 'out.zip');
    const report = await exportStore(fake, {}, out);
    expect(report.count).toBe(1);
    expect(report.skipped).toEqual([
      { kind: 'trace', id: '../escape', reason: 'not a valid id: contains a path separator' },
      { kind: 'trace', id: 'hidden\u0000id', reason: 'not a valid id: contains NUL' },
    ]);
    expect(openZip(readFileSync(out)).entries.map((e) => e.name)).toEqual([`traces/${trace(1)['event_id']}.json`]);
  });

  it('an empty store exports an archive that imports', async () => {
    const store = await openStore();
    const base = mkdtempSync(join(tmpdir(), 'ward-ids-'));
    const out = join(base, 'new', 'dir', 'empty.zip'); // missing directories are created
    expect(await exportStore(store, {}, out)).toMatchObject({ count: 0, bytes: 22, skipped: [] });
    expect(await importStore(store, out)).toEqual({ stored: 0, duplicates: 0, conflicts: [] });
    expect(existsSync(out)).toBe(true);
    writeFileSync(join(base, 'file'), 'x');
    expect(await rejection(exportStore(store, {}, join(base, 'file', 'x.zip')))).toMatchObject({ code: 'ERR_IO', exitCode: 1 });
    expect(readdirSync(base).sort()).toEqual(['file', 'new']); // no temporary file left behind
  });

  it('spooled runpacks go through the same check', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-ids-'));
    spoolBytes(dir, 'runpack', resignRunpack(record({ signingKey: TEST_KEY }).bytes, (m) => void (m['run_id'] = 'run/../x')));
    const store = await openStore(dir);
    const report = await store.ingest();
    expect(report.stored).toEqual([]);
    expect(report.rejected[0]!.error).toBe('runpack run_id "run/../x" is not a valid id: contains a path separator');
  });
});
