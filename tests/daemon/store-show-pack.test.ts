import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, ward } from '../cli/run.js';
import { call, intentFile, startDaemon, workdir, type DaemonChild } from './helpers.js';

/**
 * `ward store show <id> --daemon URL` prints what `ward store show <id>` prints locally, for the
 * same store content: traces, packs and runpacks, in JSON and text, errors included.
 */
let d: DaemonChild;
let w: ReturnType<typeof workdir>;
let runId = '';
const ids: Record<'trace' | 'pack' | 'runpack', string> = { trace: '', pack: '', runpack: '' };
/** args → the local command's result, recorded before the daemon owns the store. */
const local = new Map<string, { code: number; stdout: string }>();

function cases(): string[][] {
  const shown: string[][] = [];
  for (const id of [ids.trace, ids.pack, ids.runpack, ids.pack.slice(0, 16), ids.runpack.slice(0, 12), runId, 'ffffffffffffffff']) {
    shown.push(['store', 'show', id, '--json'], ['store', 'show', id]);
  }
  shown.push(['store', 'show', runId, '--kind', 'pack', '--json'], ['store', 'show', runId, '--kind', 'runpack']);
  return shown;
}

const withoutCorrelation = (stdout: string) => {
  if (!stdout.startsWith('{')) return stdout;
  const o = JSON.parse(stdout) as Record<string, unknown>;
  delete o['correlation_id']; // derived from each invocation's argv
  return o;
};

beforeAll(async () => {
  w = workdir();
  const record = ward(['run', 'record', '--input', fixture('runs/run_record_demo.json'), '--json'], { cwd: w.dir });
  runId = JSON.parse(record.stdout).run_id;
  expect(ward(['pack', 'build', '--from', runId, '--json'], { cwd: w.dir }).code).toBe(0);
  expect(ward(['gate', 'eval', '--policy', w.policy, '--intent', intentFile('delete-database'), '--json'], { cwd: w.dir }).code).toBe(3);
  const list = JSON.parse(ward(['store', 'list', '--json'], { cwd: w.dir }).stdout).entries as { kind: 'trace' | 'pack' | 'runpack'; id: string }[];
  for (const e of list) ids[e.kind] = e.id;
  expect(Object.values(ids).every(Boolean)).toBe(true);
  for (const args of cases()) local.set(args.join(' '), ward(args, { cwd: w.dir }));
  d = await startDaemon(['--policy', w.policy], { cwd: w.dir });
}, 60_000);

afterAll(async () => {
  expect(await d.stop()).toBe(0);
});

describe('ward store show --daemon', { timeout: 60_000 }, () => {
  it('prints what the local command prints for a trace, a pack and a runpack (JSON and text)', () => {
    const kinds = new Set<string>();
    for (const args of cases().filter((a) => [ids.trace, ids.pack, ids.runpack].includes(a[2]!))) {
      const mine = local.get(args.join(' '))!;
      expect(mine.code).toBe(0);
      const remote = ward([...args, '--daemon', d.url], { cwd: w.dir });
      expect(remote.code, remote.stdout).toBe(0);
      expect(withoutCorrelation(remote.stdout)).toEqual(withoutCorrelation(mine.stdout));
      if (args.includes('--json')) kinds.add(JSON.parse(remote.stdout).entry.kind);
      else expect(remote.stdout).toBe(mine.stdout); // text: byte for byte
    }
    expect([...kinds].sort()).toEqual(['pack', 'runpack', 'trace']);
    // A pack is shown in full (its inspect object), not only its entry id.
    const pack = JSON.parse(ward(['store', 'show', ids.pack, '--daemon', d.url, '--json'], { cwd: w.dir }).stdout);
    expect(pack.inspect.pack_id).toBe(ids.pack);
    expect(pack.entry).toMatchObject({ kind: 'pack', id: ids.pack, run_id: runId });
  });

  it('prefixes, run ids, --kind, ambiguity and unknown ids resolve (or fail) as locally, with the same exit codes', () => {
    for (const args of cases().filter((a) => ![ids.trace, ids.pack, ids.runpack].includes(a[2]!))) {
      const mine = local.get(args.join(' '))!;
      const remote = ward([...args, '--daemon', d.url], { cwd: w.dir });
      expect(remote.code, `${args.join(' ')}: ${remote.stdout}`).toBe(mine.code);
      if (mine.code === 0) expect(withoutCorrelation(remote.stdout)).toEqual(withoutCorrelation(mine.stdout));
      else if (args.includes('--json')) {
        const [r, l] = [JSON.parse(remote.stdout), JSON.parse(mine.stdout)];
        expect([r.error, r.error_code]).toEqual([l.error, l.error_code]);
      }
    }
  });

  it('the routes: GET /v1/store/{id} resolves an entry, /content serves its bytes; captures and unknown kinds are refused', async () => {
    const entry = await call(d.url, `/v1/store/${ids.runpack}`);
    expect(entry.status).toBe(200);
    expect(entry.json).toMatchObject({ ok: true, entry: { kind: 'runpack', id: ids.runpack } });
    const content = await call(d.url, `/v1/store/${ids.trace}/content?kind=trace`);
    expect(content.status).toBe(200);
    expect(content.headers['content-type']).toBe('application/json');
    expect(JSON.parse(content.text).verdict).toBe('block');
    expect((await call(d.url, `/v1/store/${ids.trace}?kind=capture`)).status).toBe(400);
    expect((await call(d.url, `/v1/store/${ids.trace}?kind=nope`)).status).toBe(400);
    expect((await call(d.url, `/v1/store/${ids.trace}?bogus=1`)).status).toBe(400);
    expect((await call(d.url, '/v1/store/ffffffffffffffff/content')).status).toBe(404);
  });
});
