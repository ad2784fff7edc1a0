import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isWardError } from '../../src/errors.js';
import { openPgStore } from '../../src/store/postgres.js';
import { listSpool, openLevelStore, spoolBytes, spoolTrace, type EvidenceStore, type ListFilter, type StoreInput } from '../../src/store/index.js';
import { demoPack, record, TEST_KEY } from '../pack/helpers.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { trace } from './traces.js';

/*
 * One table of cases, run against the LevelDB store and the PostgreSQL store: every case returns
 * what the store answered (entries, bytes as digests, counts, errors), and both answers must be
 * identical — order included. `ingested_at` is the wall clock of each run, so it is blanked.
 */

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.destroy();
});

const open: EvidenceStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

type Backend = 'level' | 'postgres';

async function openBackend(backend: Backend, stateDir: string): Promise<EvidenceStore> {
  const store =
    backend === 'level'
      ? await openLevelStore(stateDir)
      : await openPgStore({ config: { connectionString: await server.createDatabase(), display: 'test' }, stateDir, migrate: true });
  open.push(store);
  return store;
}

const bytesOf = (value: unknown) => Buffer.from(JSON.stringify(value, null, 2) + '\n');
const traceInput = (n: number, extra = {}): StoreInput => ({ kind: 'trace', bytes: bytesOf(trace(n, extra)) });
const hex24 = (n: number) => n.toString(16).padStart(24, '0');

function capture(n: number, extra: Record<string, unknown> = {}): StoreInput {
  return {
    kind: 'capture',
    bytes: bytesOf({
      schema_id: 'ward.decision_capture',
      schema_version: '1.0.0',
      trace_id: hex24(n + 0x100),
      event_id: hex24(n),
      evaluation_time: `2026-02-18T00:00:${String(n % 60).padStart(2, '0')}Z`,
      policy_digest: 'a'.repeat(64),
      intent_digest: 'b'.repeat(64),
      tool_name: n % 2 ? 'http.get' : 'fs.write',
      verdict: 'allow',
      reason_codes: ['matched_rule_allow'],
      matched_rule: 'r',
      intent_error: 'none',
      ...extra,
    }),
  };
}

/** A store's answers, with the wall-clock field blanked and errors as their code and message. */
function normalize(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (k, v) => (k === 'ingested_at' ? '-' : Buffer.isBuffer(v) ? v.toString('base64') : v)));
}

async function attempt<T>(fn: () => Promise<T>): Promise<T | { error: string; message: string }> {
  try {
    return await fn();
  } catch (err) {
    return { error: isWardError(err) ? err.code : 'Error', message: (err as Error).message };
  }
}

/** Run `scenario` on both backends (each with its own prepared state directory) and require the same answers. */
async function conform(scenario: (store: EvidenceStore, stateDir: string) => Promise<unknown>, prepare?: (stateDir: string) => void): Promise<unknown> {
  const answers: unknown[] = [];
  for (const backend of ['level', 'postgres'] as const) {
    const dir = mkdtempSync(join(tmpdir(), `ward-conform-${backend}-`));
    prepare?.(dir);
    const store = await openBackend(backend, dir);
    answers.push(normalize(await scenario(store, dir)));
  }
  expect(answers[1]).toEqual(answers[0]);
  return answers[0];
}

const FILTERS: ListFilter[] = [
  {},
  { order: 'asc' },
  { limit: 3 },
  { limit: 0 },
  { limit: 4, order: 'asc' },
  { kind: 'trace' },
  { kind: 'capture', order: 'asc' },
  { kind: 'runpack' },
  { run_id: 'run_1' },
  { run_id: 'run_1', kind: 'trace', limit: 2 },
  { session_id: 'sess_0', verdict: 'block' },
  { verdict: 'block', order: 'asc' },
  { reason_code: 'destructive_apply_requires_approval', tool_name: 'fs.write' },
  { tool_name: 'http.get', limit: 5 },
  { tool_name: 'tool.fetch' },
  { ref: `trace${'0'.repeat(18)}7` },
  { ref: 'run_demo' },
  { since: '2026-02-18T00:00:10Z', until: '2026-02-18T00:00:12Z' },
  { since: '2026-02-18T00:00:10.000000010Z', order: 'asc', limit: 3 },
  { until: '2026-02-18T00:00:02Z' },
  { since: '2026-02-18T00:00:05+00:00', until: '2026-02-18T01:00:00+01:00', verdict: 'allow' },
  { verdict: 'nothing' },
  { kind: 'pack', tool_name: 'tool.fetch', run_id: 'run_demo' },
];

describe('PostgreSQL store conforms to the LevelDB store', () => {
  it('put, get, read, list (every filter, order and limit), resolve and count', async () => {
    const runpack = record({ signingKey: TEST_KEY });
    const pack = demoPack();
    const out = (await conform(async (store) => {
      const put = await store.put([
        ...Array.from({ length: 30 }, (_, n) => traceInput(n)),
        // Same time as trace 5: ties break by id, bytewise.
        traceInput(40, { observed_at: trace(5)['observed_at'] as string, event_id: 'EVENT_upper_case_sorts_first' }),
        traceInput(41, { observed_at: trace(5)['observed_at'] as string, event_id: 'event_tie_sorts_after_digits' }),
        traceInput(42, { observed_at: undefined as unknown as string }),
        // Same time and id as capture 3: the kinds tie, LevelDB's merge orders them by kind.
        traceInput(43, { observed_at: '2026-02-18T00:00:03Z', event_id: hex24(3) }),
        ...Array.from({ length: 6 }, (_, n) => capture(n)),
        { kind: 'runpack', bytes: runpack.bytes },
        { kind: 'pack', bytes: pack.bytes },
      ]);
      const answers: Record<string, unknown> = { put };
      for (const [i, filter] of FILTERS.entries()) answers[`list ${i} ${JSON.stringify(filter)}`] = await store.list(filter);
      const lookups = [
        trace(4)['trace_id'] as string,
        trace(4)['event_id'] as string,
        'event000000000000000001', // a prefix of traces 10–19
        'event00000000000000000', // a prefix of 0–29 (and not of the tie entries)
        'event00',
        'event',
        'run_2',
        'run_demo',
        pack.manifest.pack_id.slice(0, 12),
        runpack.manifest.manifest_digest,
        hex24(3),
        hex24(0x103),
        'no-such-thing',
        'abc%_\\xyz',
        '', // LevelDB's fallback lists filter nothing: every entry
        'run_1', // trace run ids, newest first
      ];
      for (const ref of lookups) {
        answers[`resolve ${ref}`] = await store.resolve(ref);
        for (const kind of ['trace', 'capture', 'runpack', 'pack'] as const) answers[`resolve ${ref} ${kind}`] = await store.resolve(ref, kind);
      }
      const entry = (await store.get('trace', trace(7)['event_id'] as string))!;
      answers['get'] = entry;
      answers['get missing'] = (await store.get('trace', 'missing')) ?? null;
      answers['read trace'] = await store.read(entry);
      answers['read pack'] = await store.read((await store.get('pack', pack.manifest.pack_id))!);
      answers['read missing'] = await attempt(() => store.read({ ...entry, id: 'missing' }));
      answers['count'] = [await store.count(), await store.count('trace'), await store.count('capture'), await store.count('pack')];
      answers['bad time'] = await attempt(() => store.list({ since: 'yesterday' }));
      return answers;
    })) as Record<string, unknown>;
    // The cases are meaningful: things were stored and found.
    expect((out['put'] as { stored: unknown[] }).stored).toHaveLength(42);
    expect(out['resolve event000000000000000001']).toHaveLength(10);
    expect(out['list 11 {"verdict":"block","order":"asc"}']).toHaveLength(11);
  });

  it('duplicates and conflicts, within a batch and against stored entries, in LevelDB order', async () => {
    const out = (await conform(async (store) => {
      const a = traceInput(1);
      const b = traceInput(2);
      const first = await store.put([a, b]);
      const forged1 = traceInput(1, { verdict: 'block' }); // trace 1's id, other bytes
      const renamed = traceInput(1, { event_id: 'event_renamed_but_same' });
      return {
        first,
        again: await store.put([a]),
        forged: await store.put([forged1]),
        // digest already stored comes first; an item later in the batch with the id of a skipped one is stored
        mixed: await store.put([b, traceInput(3), traceInput(3), traceInput(3, { verdict: 'x' }), renamed, traceInput(1, { event_id: 'event_renamed_but_same', verdict: 'x' })]),
        // an item whose id conflicts first, then the same bytes stored under a new id later in the batch
        order: await store.put([traceInput(2, { verdict: 'x' }), traceInput(50), traceInput(2, { verdict: 'x' })]),
        sameDigestTwice: await store.put([traceInput(60), traceInput(60)]),
        bytes: await store.read((await store.get('trace', trace(1)['event_id'] as string))!),
        invalid: await attempt(() => store.put([{ kind: 'trace', bytes: Buffer.from('{"schema_id":"other"}') }])),
        badId: await attempt(() => store.put([traceInput(70, { event_id: '../etc' })])),
        count: await store.count(),
      };
    })) as Record<string, { duplicates: number; conflicts: unknown[] }>;
    expect(out['again']!.duplicates).toBe(1);
    expect(out['forged']!.conflicts).toHaveLength(1);
  });

  it('stores runpacks and packs, refuses broken ones', async () => {
    const pack = demoPack();
    await conform(async (store) => {
      const broken = Buffer.from(pack.bytes);
      broken[broken.length - 40] ^= 0xff;
      return {
        broken: await attempt(() => store.put([{ kind: 'pack', bytes: broken }])),
        put: await store.put([{ kind: 'pack', bytes: pack.bytes }, { kind: 'runpack', bytes: record({ signingKey: TEST_KEY }).bytes }]),
        list: await store.list({}),
        count: await store.count(),
      };
    });
  });

  it('ingests the spool and <state>/traces once each, and sets bad files aside', async () => {
    const out = (await conform(
      async (store, dir) => {
        const first = await store.ingest();
        const second = await store.ingest();
        spoolTrace(dir, trace(1)); // spooled again after ingestion (a crash before removal)
        writeFileSync(join(dir, 'traces', 'trace_9.json'), bytesOf(trace(9)));
        const third = await store.ingest();
        return { first, second, third, spool: listSpool(dir).length, rejected: readdirSync(join(dir, 'spool', 'rejected')), list: await store.list({}) };
      },
      (dir) => {
        spoolTrace(dir, trace(1));
        spoolTrace(dir, trace(2));
        spoolBytes(dir, 'runpack', record().bytes);
        spoolBytes(dir, 'trace', Buffer.from('not json'));
        mkdirSync(join(dir, 'traces'));
        for (let n = 3; n < 6; n++) writeFileSync(join(dir, 'traces', `trace_${n}.json`), bytesOf(trace(n)));
        writeFileSync(join(dir, 'traces', 'approval_audit_x.json'), '{"schema_id":"gait.gate.approval_audit_record"}');
      },
    )) as Record<string, { stored: unknown[]; files: number }>;
    expect(out['first']!.stored).toHaveLength(6);
    expect(out['second']!.files).toBe(0);
    expect(out['third']!.stored).toHaveLength(1);
  });

  it('applies retention by age and by count, per kind', async () => {
    const pack = demoPack();
    await conform(async (store) => {
      await store.put([...Array.from({ length: 10 }, (_, n) => traceInput(n)), ...Array.from({ length: 4 }, (_, n) => capture(n)), { kind: 'pack', bytes: pack.bytes }]);
      const now = new Date('2026-02-18T00:00:10Z');
      const byAge = await store.gc({ maxAgeSeconds: 5, now, kind: 'trace' });
      const byCount = await store.gc({ maxCount: 2, now });
      const both = await store.gc({ maxCount: 1, maxAgeSeconds: 60, now: new Date('2026-02-18T00:01:03Z') });
      const none = await store.gc({ now });
      return { byAge, byCount, both, none, list: await store.list({}), block: await store.list({ verdict: 'block' }), pack: ((await attempt(() => store.read({ kind: 'pack', id: pack.manifest.pack_id } as never))) as { error: string }).error };
    });
  });
});
