import { Worker } from 'node:worker_threads';
import { ERROR_CODES, reviveError, WardError, type SerializedError } from '../errors.js';
import type { EntryKind, EvidenceStore, GcReport, IngestReport, ListFilter, PutResult, RetentionPolicy, StoreEntry, StoreInput } from '../store/types.js';

/**
 * The daemon's store on its own thread. Indexing a trace (strict parse, description, ten index
 * keys, the synced LevelDB batch) costs more CPU than deciding it; on the event loop that work
 * stalls requests. Here the store is opened, owned and written by a worker thread, and the daemon
 * holds an `EvidenceStore` that forwards each call — the same interface, so nothing above it knows.
 */
export async function openStoreThread(stateDir: string): Promise<EvidenceStore> {
  const worker = new Worker(new URL('./store-thread-worker.js', import.meta.url), { workerData: { stateDir } });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  let dead: Error | undefined;
  await new Promise<void>((resolve, reject) => {
    const onMessage = (msg: WorkerMessage) => {
      if (msg.type === 'ready') {
        worker.off('message', onMessage);
        resolve();
      } else if (msg.type === 'error') {
        worker.off('message', onMessage);
        reject(reviveError(msg.error));
      }
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  worker.on('message', (msg: WorkerMessage) => {
    if (msg.type !== 'reply') return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(reviveError(msg.error));
  });
  const fail = (err: Error) => {
    dead = new WardError(ERROR_CODES.STORE_INVALID, `store thread stopped: ${err.message}`, { cause: err });
    for (const p of pending.values()) p.reject(dead);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => {
    if (!dead) fail(new Error(`exit ${code}`));
  });
  const call = <T>(method: string, ...args: unknown[]): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = next++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, method, args });
    });
  };
  return {
    put: (inputs: readonly StoreInput[]) => call<PutResult>('put', inputs),
    get: (kind: EntryKind, id: string) => call<StoreEntry | undefined>('get', kind, id),
    read: async (entry: StoreEntry) => toBuffer(await call<Uint8Array>('read', entry)),
    list: (filter: ListFilter) => call<StoreEntry[]>('list', filter),
    resolve: (idOrRef: string, kind?: EntryKind) => call<StoreEntry[]>('resolve', idOrRef, kind),
    ingest: () => call<IngestReport>('ingest'),
    gc: (policy: RetentionPolicy) => call<GcReport>('gc', policy),
    count: (kind?: EntryKind) => call<number>('count', kind),
    close: async () => {
      if (dead) return;
      await call<void>('close');
      dead = new WardError(ERROR_CODES.STORE_INVALID, 'store is closed');
      await worker.terminate();
    },
  };
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'error'; error: SerializedError }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: SerializedError };

function toBuffer(u8: Uint8Array): Buffer {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}
