import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateSigningKey } from '../../src/keys/index.js';
import { startDaemon, type Daemon } from '../../src/daemon/server.js';
import type { DaemonOptions } from '../../src/daemon/context.js';
import { fsSeam } from '../../src/state/fs-seam.js';
import { call, evalBody, workdir } from '../daemon/helpers.js';

/**
 * A full disk is a state, not a wedge (issue 29): the file system is made to fail at Ward's
 * syscall seam (src/state/fs-seam.ts) or under the real LevelDB store, with the real journal and
 * store around it. Decisions are refused with ERR_STORAGE_FULL (503 + Retry-After, never 429),
 * the daemon is not ready, the failure is counted and logged once, and once writes succeed again
 * the daemon serves by itself, with every decision it acknowledged in the store.
 */

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

interface Running {
  d: Daemon;
  logs: Record<string, unknown>[];
}

async function start(extra: Partial<DaemonOptions> = {}): Promise<Running> {
  const w = workdir();
  const logs: Record<string, unknown>[] = [];
  const d = await startDaemon({
    stateDir: w.state,
    policyPath: w.policy,
    host: '127.0.0.1',
    port: 0,
    signingKey: generateSigningKey(),
    ingestIntervalMs: 0,
    storageRetryMs: 100,
    logWrite: (text) => {
      for (const line of text.split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
    },
    ...extra,
  });
  return { d, logs };
}

const running: Daemon[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const d of running.splice(0)) await d.close();
});

async function decide(d: Daemon) {
  return call(d.url, '/v1/gate/eval', { body: evalBody('read-report') });
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line === undefined ? NaN : Number(line.split(' ').pop());
}

/** Poll until a decision is answered 200 again; the time it took (ms). */
async function untilServing(d: Daemon, acked: string[], limitMs = 5000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const r = await decide(d);
    if (r.status === 200) {
      acked.push(r.json.trace_path.slice('store:trace/'.length));
      return Date.now() - started;
    }
    expect(r.json.ward_error).toBe('ERR_STORAGE_FULL');
    if (Date.now() - started > limitMs) throw new Error(`not serving again after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function expectAllStored(d: Daemon, acked: string[]): Promise<void> {
  for (const id of acked) expect((await call(d.url, `/v1/traces/${id}`)).status, `trace ${id}`).toBe(200);
}

describe('disk full while appending to the journal', () => {
  it('refuses with ERR_STORAGE_FULL, turns not-ready, counts and logs once, and recovers by itself', async () => {
    const { d, logs } = await start();
    running.push(d);
    const acked: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await decide(d);
      expect(r.status).toBe(200);
      acked.push(r.json.trace_path.slice('store:trace/'.length));
    }

    const write = vi.spyOn(fsSeam, 'write').mockRejectedValue(enospc());
    const failed = await Promise.all(Array.from({ length: 8 }, () => decide(d)));
    for (const r of failed) {
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('1');
      expect(r.json.ward_error).toBe('ERR_STORAGE_FULL');
      expect(r.json.retryable).toBe(true);
    }
    expect(write).toHaveBeenCalled();
    // Later decisions are refused at admission, with the same code (never 429 "overload").
    const later = await decide(d);
    expect(later.status).toBe(503);
    expect(later.json.ward_error).toBe('ERR_STORAGE_FULL');
    const ready = await call(d.url, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json.storage_fault.errno).toBe('ENOSPC');
    const metrics = (await call(d.url, '/metrics')).text;
    expect(metric(metrics, 'ward_ready')).toBe(0);
    expect(metric(metrics, 'ward_storage_fault')).toBe(1);
    expect(metrics).toMatch(/ward_storage_errors_total\{code="ENOSPC",source="journal"\} [1-9]/);
    expect(metric(metrics, 'ward_trace_write_errors_total')).toBeGreaterThan(0);
    expect(metrics).not.toMatch(/ward_http_rejected_total\{reason="overload"\}/);
    // The probe keeps failing while the disk is full: still one log line for the episode.
    await new Promise((r) => setTimeout(r, 400));
    expect(logs.filter((l) => String(l['msg']).startsWith('storage fault')).length).toBe(1);

    write.mockRestore(); // space is back
    const took = await untilServing(d, acked);
    expect(took).toBeLessThan(5000);
    expect((await call(d.url, '/readyz')).status).toBe(200);
    const after = (await call(d.url, '/metrics')).text;
    expect(metric(after, 'ward_ready')).toBe(1);
    expect(metric(after, 'ward_storage_fault')).toBe(0);
    expect(logs.filter((l) => String(l['msg']).startsWith('storage recovered')).length).toBe(1);
    await expectAllStored(d, acked);
  });
});

describe('disk full under load', () => {
  it('32 clients through a disk-full episode: only 200 or ERR_STORAGE_FULL (never 429), serving again after it, nothing acknowledged lost', async () => {
    const { d } = await start();
    running.push(d);
    const acked: string[] = [];
    const seen = new Map<string, number>();
    let stop = false;
    const loops = Array.from({ length: 32 }, async () => {
      while (!stop) {
        const r = await decide(d);
        const key = r.status === 200 ? '200' : `${r.status} ${String(r.json?.ward_error)}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        if (r.status === 200) acked.push(r.json.trace_path.slice('store:trace/'.length));
        else await new Promise((res) => setTimeout(res, 5));
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    const write = vi.spyOn(fsSeam, 'write').mockRejectedValue(enospc());
    const put = vi.spyOn(d.context.store, 'put').mockRejectedValue(new Error('IO error: db/000005.log: No space left on device'));
    await new Promise((r) => setTimeout(r, 1500));
    write.mockRestore();
    put.mockRestore();
    const restored = acked.length;
    const t0 = Date.now();
    while (acked.length === restored && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(loops);
    expect(acked.length, JSON.stringify([...seen])).toBeGreaterThan(restored);
    expect([...seen.keys()].sort()).toEqual(['200', '503 ERR_STORAGE_FULL']);
    await expectAllStored(d, acked);
  });
});

describe('disk full under the store (LevelDB indexing)', () => {
  it('refuses new decisions once ingestion fails, keeps the acknowledged ones, and serves again when the store writes', async () => {
    const { d, logs } = await start();
    running.push(d);
    const acked: string[] = [];
    const put = vi.spyOn(d.context.store, 'put').mockRejectedValue(new Error('IO error: /state/store/db/000003.log: No space left on device'));
    // Journaled (acknowledged) before the store fails: kept in the backlog and the journal.
    for (let i = 0; i < 3; i++) {
      const r = await decide(d);
      expect(r.status).toBe(200);
      acked.push(r.json.trace_path.slice('store:trace/'.length));
    }
    // Ingestion runs in the background; once it has failed, decisions are refused.
    let refused: Awaited<ReturnType<typeof decide>> | undefined;
    for (let i = 0; i < 100 && !refused; i++) {
      const r = await decide(d);
      if (r.status === 200) acked.push(r.json.trace_path.slice('store:trace/'.length));
      else refused = r;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(refused?.status).toBe(503);
    expect(refused?.json.ward_error).toBe('ERR_STORAGE_FULL');
    expect(refused?.headers['retry-after']).toBe('1');
    expect((await call(d.url, '/readyz')).json.storage_fault.source).toBe('ingest');
    expect((await call(d.url, '/metrics')).text).toMatch(/ward_storage_errors_total\{code="ENOSPC",source="ingest"\} [1-9]/);
    expect(put.mock.calls.length).toBeGreaterThan(0);

    put.mockRestore();
    await untilServing(d, acked);
    expect((await call(d.url, '/readyz')).status).toBe(200);
    await expectAllStored(d, acked);
    expect(logs.filter((l) => String(l['msg']).startsWith('storage fault')).length).toBe(1);
    expect(logs.filter((l) => String(l['msg']).startsWith('storage recovered')).length).toBe(1);
  });
});

describe('start-up on a full disk', () => {
  it('refuses to start when the journal cannot preallocate, leaving no segment behind', async () => {
    const w = workdir();
    const write = vi.spyOn(fsSeam, 'write').mockRejectedValue(enospc());
    const opts: DaemonOptions = { stateDir: w.state, policyPath: w.policy, host: '127.0.0.1', port: 0, signingKey: generateSigningKey(), ingestIntervalMs: 0, logWrite: () => {} };
    await expect(startDaemon(opts)).rejects.toMatchObject({ code: 'ERR_STORAGE_FULL' });
    expect(write).toHaveBeenCalled();
    expect(readdirSync(join(w.state, 'journal')).filter((n) => n.startsWith('seg_'))).toEqual([]);
    write.mockRestore();
    // Nothing was left locked: with space back, the daemon starts.
    const d = await startDaemon(opts);
    running.push(d);
    expect((await decide(d)).status).toBe(200);
  });

  it('handles short writes while preallocating and appending (a write of 0 bytes is a full disk)', async () => {
    const real = fsSeam.write.bind(fsSeam);
    const short = vi.spyOn(fsSeam, 'write').mockImplementation((fh, buf, off, len, pos) => real(fh, buf, off, Math.min(len, 1000), pos));
    const { d } = await start();
    running.push(d);
    const r = await decide(d);
    expect(r.status).toBe(200);
    expect(short.mock.calls.length).toBeGreaterThan(8);
    short.mockImplementation(async () => 0);
    const full = await decide(d);
    expect(full.status).toBe(503);
    expect(full.json.ward_error).toBe('ERR_STORAGE_FULL');
    short.mockRestore();
    const acked = [r.json.trace_path.slice('store:trace/'.length) as string];
    await untilServing(d, acked);
    await expectAllStored(d, acked);
  });
});
