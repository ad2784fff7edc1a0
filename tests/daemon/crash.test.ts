import { describe, expect, it } from 'vitest';
import { loadKeyRing } from '../../src/keys/index.js';
import { openLevelStore } from '../../src/store/index.js';
import { verifyTraceText } from '../../src/trace/verify.js';
import { call, evalBody, startDaemon, workdir } from './helpers.js';

/**
 * kill -9 under concurrent load: every decision a client received must have its signed trace in
 * the store after a restart (the journal is recovered before the daemon serves again), and the
 * store must open cleanly.
 */
describe('crash safety', () => {
  it('kill -9 at a random moment loses no answered decision (3 rounds, one state directory)', async () => {
    const w = workdir();
    const received = new Set<string>();
    const logs: string[] = [];
    const names = ['read-report', 'write-config', 'delete-database'] as const;
    for (let round = 0; round < 3; round++) {
      const d = await startDaemon(['--policy', w.policy, '--ingest-interval-ms', '0'], { cwd: w.dir });
      let stop = false;
      const clients = Array.from({ length: 12 }, async (_, c) => {
        for (let i = 0; !stop; i++) {
          try {
            const r = await call(d.url, '/v1/gate/eval', { body: evalBody(names[(c + i) % 3]!) });
            if (r.status === 200) received.add(r.json.trace_path.slice('store:trace/'.length));
          } catch {
            return; // connection reset by the kill
          }
        }
      });
      await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 700)));
      d.proc.kill('SIGKILL');
      stop = true;
      expect(await d.exited).toBe('SIGKILL');
      logs.push(d.stderr());
      await Promise.all(clients);
      expect(received.size).toBeGreaterThan(round * 10);
    }

    // Restart: recovery stores the journal; every answered decision is queryable.
    const d = await startDaemon(['--policy', w.policy, '--ingest-interval-ms', '0'], { cwd: w.dir });
    const some = [...received].slice(0, 20);
    for (const id of some) expect((await call(d.url, `/v1/traces/${id}`)).status).toBe(200);
    expect(await d.stop()).toBe(0);
    logs.push(d.stderr());
    // The kills left journaled records that only recovery could store.
    const recovered = logs.join('').split('\n').filter((l) => l.includes('"journal recovered"')).map((l) => JSON.parse(l));
    expect(recovered.length).toBeGreaterThan(0);
    expect(recovered.some((r) => r.records > 0)).toBe(true);

    // The store opens cleanly and holds a verifying signed trace for every received decision.
    const keys = loadKeyRing(w.state);
    const store = await openLevelStore(w.state);
    try {
      let verified = 0;
      for (const id of received) {
        const entry = await store.get('trace', id);
        expect(entry, `trace ${id} missing`).toBeDefined();
        const check = verifyTraceText((await store.read(entry!)).toString('utf8'), keys);
        expect(check.ok, check.error).toBe(true);
        verified++;
      }
      expect(verified).toBe(received.size);
      expect(await store.count('trace')).toBeGreaterThanOrEqual(received.size);
    } finally {
      await store.close();
    }
  }, 120_000);
});
