// The one request/reply over a worker thread (src/edge/worker-rpc.ts) that the daemon's store thread
// and the MCP proxy's decision thread share. Checked with real workers: answers come back by id
// (errors revived with their code); a worker that never answers fails the call at its deadline with
// the host's typed error — alone, or with every call the worker held when a missed deadline ends
// it; a worker that dies or is closed fails every pending and later call at once.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerRpc, type RpcFailure, type WorkerRpcOptions } from '../../src/edge/worker-rpc.js';
import { ERROR_CODES, isWardError, WardError } from '../../src/errors.js';
import { REPO, tempDir } from '../cli/run.js';

// Workers run JavaScript: the worker side is the built module (tests/cli builds it).
const BUILT = pathToFileURL(join(REPO, 'dist', 'edge', 'worker-rpc.js')).href;

/** A worker from source: `answer(msg)` is its handler, run by the built `answerCalls`. */
function workerOf(source: string): Worker {
  const file = join(tempDir('ward-rpc-'), 'worker.mjs');
  writeFileSync(file, `import { parentPort } from 'node:worker_threads';\nimport { answerCalls } from ${JSON.stringify(BUILT)};\n${source}\n`);
  return new Worker(file);
}

// Answers `{ n }` with n * 2, `{ fail }` with a WardError, and never answers `{ hang }`; `{ die }` exits.
const ECHO = `
import { WardError } from ${JSON.stringify(pathToFileURL(join(REPO, 'dist', 'errors.js')).href)};
answerCalls(parentPort, async (msg) => {
  if (msg.die) process.exit(7);
  if (msg.hang) return new Promise(() => {});
  if (msg.fail) throw new WardError('ERR_POLICY_INVALID', 'bad policy');
  return msg.n * 2;
});`;

type Msg = { n?: number; hang?: true; fail?: true; die?: true };

describe('worker rpc', () => {
  const rpcs: WorkerRpc<Msg>[] = [];
  afterEach(async () => {
    for (const r of rpcs.splice(0)) await r.close();
  });
  const failures: { message: string; why: RpcFailure }[] = [];
  const rpcOf = (source: string, opts: Partial<WorkerRpcOptions> = {}) => {
    const r = new WorkerRpc<Msg>(workerOf(source), {
      name: 'the test thread',
      timeoutMs: 5_000,
      onDeadline: 'call',
      error: (message, why) => {
        failures.push({ message, why });
        return new WardError(why === 'late' ? ERROR_CODES.STORE_UNAVAILABLE : ERROR_CODES.INTERNAL, message);
      },
      ...opts,
    });
    rpcs.push(r);
    return r;
  };

  it('answers each call by its id, out of order too; an error thrown there comes back with its code', async () => {
    const r = rpcOf(ECHO);
    const answers = await Promise.all([1, 2, 3].map((n) => r.call<number>({ n })));
    expect(answers).toEqual([2, 4, 6]);
    const err = await r.call({ fail: true }).catch((e: unknown) => e);
    expect(isWardError(err) && err.code).toBe(ERROR_CODES.POLICY_INVALID);
    expect((err as Error).message).toBe('bad policy');
    expect(r.inFlight).toBe(0);
    expect(r.dead).toBeUndefined();
  });

  it('a worker that never answers: the call fails at its deadline with the typed error; with onDeadline "call" the worker goes on', async () => {
    const r = rpcOf(ECHO, { timeoutMs: 150 });
    const started = performance.now();
    const err = await r.call({ hang: true }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(isWardError(err) && err.code).toBe(ERROR_CODES.STORE_UNAVAILABLE);
    expect((err as Error).message).toBe('the test thread did not answer within 150 ms');
    expect(r.dead).toBeUndefined();
    expect(await r.call<number>({ n: 5 })).toBe(10);
    // A per-call deadline overrides the default.
    await expect(r.call({ hang: true }, 50)).rejects.toThrow('within 50 ms');
  });

  it('with onDeadline "worker", a missed deadline ends the worker and every call it held', async () => {
    const r = rpcOf(ECHO, { timeoutMs: 150, onDeadline: 'worker' });
    const first = r.call({ hang: true }).catch((e: unknown) => e);
    const second = r.call({ hang: true }, 60_000).catch((e: unknown) => e);
    const [a, b] = await Promise.all([first, second]);
    expect((a as Error).message).toBe('the test thread did not answer within 150 ms');
    expect(b).toBe(a);
    expect(r.dead).toBe(a);
    await expect(r.call({ n: 1 })).rejects.toBe(a);
    expect(r.inFlight).toBe(0);
  });

  it('a worker that dies fails every pending call at once, and every later one', async () => {
    const r = rpcOf(ECHO, { timeoutMs: 60_000 });
    const pending = [r.call({ hang: true }), r.call({ hang: true })].map((p) => p.catch((e: unknown) => e));
    expect(await r.call<number>({ n: 1 })).toBe(2); // the worker is up and holds both calls
    const started = performance.now();
    const died = r.call({ die: true }).catch((e: unknown) => e);
    const errs = await Promise.all([...pending, died]);
    expect(performance.now() - started).toBeLessThan(10_000);
    for (const e of errs) {
      expect(isWardError(e) && e.code).toBe(ERROR_CODES.INTERNAL);
      expect((e as Error).message).toBe('the test thread exited (7)');
    }
    expect(failures.filter((f) => f.message.includes('exited')).every((f) => f.why === 'gone')).toBe(true);
    expect(r.dead?.message).toBe('the test thread exited (7)');
    await expect(r.call({ n: 1 })).rejects.toThrow('exited (7)');
  });

  it('a worker that fails to load, and one closed with calls pending, fail their calls', async () => {
    const broken = rpcOf('throw new Error("boom at load");');
    await expect(broken.call({ n: 1 })).rejects.toThrow(/the test thread (failed: boom at load|exited)/);
    const r = rpcOf(ECHO);
    const pending = r.call({ hang: true }).catch((e: unknown) => e);
    await r.close();
    expect(((await pending) as Error).message).toBe('the test thread is closed');
    await expect(r.call({ n: 1 })).rejects.toThrow('the test thread is closed');
  });

  it('a value that cannot be copied back fails that call, not the worker', async () => {
    const r = rpcOf(`answerCalls(parentPort, (msg) => (msg.n === 0 ? { f: () => 1 } : msg.n));`);
    await expect(r.call({ n: 0 })).rejects.toThrow(/could not be cloned/);
    expect(await r.call<number>({ n: 3 })).toBe(3);
  });
});
