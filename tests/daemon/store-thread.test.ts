// The daemon's store on its worker thread (src/daemon/store-thread.ts) has a deadline on every
// call: a store that does not answer fails the call with ERR_STORE_UNAVAILABLE, and the daemon's
// journal then refuses new decisions (a decision is answered only with its trace written, and
// indexing that has stalled is refused, not waited on forever); a store thread that dies fails its
// pending calls with ERR_STORE_INVALID. Stalled and dying threads are stand-in workers speaking the
// same protocol; the round trip uses the real one.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { Journal } from '../../src/daemon/journal.js';
import { openStoreThread } from '../../src/daemon/store-thread.js';
import { ERROR_CODES, isWardError } from '../../src/errors.js';
import { REPO, tempDir } from '../cli/run.js';

// Workers run JavaScript: the built modules (tests/cli builds them).
const dist = (p: string) => pathToFileURL(join(REPO, 'dist', p));

/** A stand-in store worker: opens, counts 0, never answers a put, exits on `ingest`. */
function standIn(): URL {
  const file = join(tempDir('ward-store-thread-'), 'worker.mjs');
  writeFileSync(
    file,
    `import { parentPort } from 'node:worker_threads';
import { answerCalls } from ${JSON.stringify(dist('edge/worker-rpc.js').href)};
answerCalls(parentPort, (msg) => {
  if (msg.method === 'put') return new Promise(() => {});
  if (msg.method === 'ingest') process.exit(5);
  return msg.method === 'count' ? 0 : undefined;
});
`,
  );
  return pathToFileURL(file);
}

const codeOf = (e: unknown) => (isWardError(e) ? e.code : String(e));

describe('store thread', () => {
  it('forwards calls to the LevelDB store on the thread; once closed, every call fails with ERR_STORE_INVALID', async () => {
    const store = await openStoreThread(tempDir('ward-store-thread-'), { workerUrl: dist('daemon/store-thread-worker.js') });
    expect(await store.count()).toBe(0);
    expect(await store.list({ kind: 'trace' })).toEqual([]);
    await store.close();
    expect(codeOf(await store.count().catch((e: unknown) => e))).toBe(ERROR_CODES.STORE_INVALID);
  });

  it('a store that cannot open fails the start with its error, and ends its thread', async () => {
    const file = join(tempDir('ward-store-thread-'), 'not-a-dir');
    writeFileSync(file, 'x');
    await expect(openStoreThread(file, { workerUrl: dist('daemon/store-thread-worker.js') })).rejects.toThrow();
  });

  it('a put the thread never answers fails at the deadline with ERR_STORE_UNAVAILABLE; the thread goes on', async () => {
    const store = await openStoreThread(tempDir('ward-store-thread-'), { workerUrl: standIn(), timeoutMs: 150 });
    const started = performance.now();
    const err = await store.put([{ kind: 'trace', bytes: Buffer.from('{}') }]).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(codeOf(err)).toBe(ERROR_CODES.STORE_UNAVAILABLE);
    expect((err as Error).message).toBe('the store thread did not answer within 150 ms');
    expect(await store.count()).toBe(0); // one late call does not end the thread
    await store.close();
  });

  it('the daemon journal over a stalled store thread refuses new decisions (ERR_STORE_UNAVAILABLE) instead of waiting', async () => {
    const store = await openStoreThread(tempDir('ward-store-thread-'), { workerUrl: standIn(), timeoutMs: 150 });
    const journal = new Journal(tempDir('ward-store-journal-'), store, { ingestChunk: 1, retryMs: 60_000 });
    await journal.preallocate();
    expect(journal.refusal()).toBeUndefined();
    await journal.append([{ kind: 'trace', bytes: Buffer.from('{"a":1}') }]); // durable in the journal
    await vi.waitFor(() => expect(journal.refusal()).toBeDefined(), { timeout: 5_000, interval: 20 });
    const refusal = journal.refusal()!;
    expect(refusal.code).toBe(ERROR_CODES.STORE_UNAVAILABLE);
    expect(refusal.message).toContain('the store thread did not answer within 150 ms');
    // Readers waiting for their writes are failed too, not left waiting.
    expect(codeOf(await journal.caughtUp().catch((e: unknown) => e))).toBe(ERROR_CODES.STORE_UNAVAILABLE);
    expect(journal.pendingIngest).toBe(1); // kept for the retry, not dropped
    await journal.close().catch(() => undefined);
    await store.close();
  });

  it('a store thread that dies fails its pending calls and every later one with ERR_STORE_INVALID', async () => {
    const store = await openStoreThread(tempDir('ward-store-thread-'), { workerUrl: standIn(), timeoutMs: 60_000 });
    const pending = store.put([{ kind: 'trace', bytes: Buffer.from('{}') }]).catch((e: unknown) => e);
    const dying = store.ingest().catch((e: unknown) => e);
    const [a, b] = await Promise.all([pending, dying]);
    for (const e of [a, b]) {
      expect(codeOf(e)).toBe(ERROR_CODES.STORE_INVALID);
      expect((e as Error).message).toBe('store thread stopped: the store thread exited (5)');
    }
    expect(codeOf(await store.count().catch((e: unknown) => e))).toBe(ERROR_CODES.STORE_INVALID);
    await store.close(); // a dead thread closes without waiting
  });
});
