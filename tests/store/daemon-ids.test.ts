import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spoolTrace } from '../../src/store/index.js';
import { call, startDaemon, workdir, type DaemonChild } from '../daemon/helpers.js';
import { craftZip, entriesOf, resignRunpack, S_IFLNK } from '../pack/craft.js';
import { record, TEST_KEY } from '../runpack/helpers.js';
import { trace } from './traces.js';

// `ward serve` runs from dist/: build it first (npx tsc -p tsconfig.build.json).
let daemon: DaemonChild;

beforeAll(async () => {
  const w = workdir();
  spoolTrace(w.state, trace(1));
  spoolTrace(w.state, trace(2, { event_id: '../../escape' }));
  spoolTrace(w.state, trace(3, { event_id: 'hidden\u0000id' }));
  daemon = await startDaemon(['--policy', w.policy, '--ingest-interval-ms', '0'], { cwd: w.dir });
}, 30_000);

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

const zipHeaders = { 'content-type': 'application/zip' };

describe('ward serve: ids on the way in', () => {
  it('spooled traces with path-like or NUL ids are not stored; the valid one is listed', async () => {
    const list = await call(daemon.url, '/v1/traces');
    expect(list.status).toBe(200);
    expect(list.json.entries.map((e: { id: string }) => e.id)).toEqual([trace(1)['event_id']]);
  });

  it('path parameters that are not ids are refused with the reason', async () => {
    const cases: [string, string][] = [
      ['/v1/store/..%2F..%2Fescape', 'path segments must not'],
      ['/v1/traces/hidden%00id', 'path segments must not'],
      ['/v1/store/a%07b', 'contains a control character'],
      [`/v1/traces/${'a'.repeat(129)}`, 'longer than 128 characters'],
      ['/v1/packs/x..y', 'contains ".."'],
    ];
    for (const [path, why] of cases) {
      const r = await call(daemon.url, path);
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
      expect(r.json.error).toContain(why);
    }
  });

  it('uploaded runpacks with a run id that is not an id, or a symlink entry, are refused (400), nothing stored', async () => {
    const badId = resignRunpack(record({ signingKey: TEST_KEY }).bytes, (m) => void (m['run_id'] = '../../etc/cron.d/x'));
    const r = await call(daemon.url, '/v1/packs', { raw: badId, headers: zipHeaders });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('runpack run_id "../../etc/cron.d/x" is not a valid id: contains a path separator');
    const symlink = craftZip([...entriesOf(record({ signingKey: TEST_KEY }).bytes), { name: 'link', data: Buffer.from('/etc/shadow'), mode: S_IFLNK | 0o777 }]);
    const s = await call(daemon.url, '/v1/packs', { raw: symlink, headers: zipHeaders });
    expect(s.status).toBe(400);
    expect(s.json.error).toContain('a symbolic link (only regular files are allowed)');
    const list = await call(daemon.url, '/v1/packs');
    expect(list.json.entries).toEqual([]);
    const diff = await call(daemon.url, '/v1/packs/diff', { body: { left: '../x', right: 'run_demo' } });
    expect(diff.status).toBe(400);
  });
});
