import { Worker } from 'node:worker_threads';
import { WorkerRpc } from '../edge/worker-rpc.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { EntryKind, EvidenceStore, GcReport, IngestReport, ListFilter, PutResult, RetentionPolicy, StoreEntry, StoreInput } from '../store/types.js';

/**
 * The daemon's store on its own thread. Indexing a trace (strict parse, description, ten index
 * keys, the synced LevelDB batch) costs more CPU than deciding it; on the event loop that work
 * stalls requests. Here the store is opened, owned and written by a worker thread, and the daemon
 * holds an `EvidenceStore` that forwards each call — the same interface, so nothing above it knows.
 *
 * Every call has a deadline (docs/daemon.md "Store thread deadline"). A call the thread does not
 * answer in time fails with ERR_STORE_UNAVAILABLE, as a PostgreSQL statement past its timeout does:
 * the journal's ingestion then refuses new decisions (503) and retries until the store answers
 * again. The thread is not ended for one late call (a slow disk is not a dead store); a thread that
 * dies fails every pending and later call with ERR_STORE_INVALID.
 */

/**
 * One call's deadline. The largest call the daemon makes is a put of 4,096 traces: ~60–90 µs of
 * indexing each (0.25–0.4 s) and one synced batch; 10 s is 25 times that, so only a wedged disk or
 * thread reaches it. Longer would let the unindexed backlog (held in memory) grow for longer while
 * reads wait; shorter would turn a loaded machine's slow batch into a refusal episode.
 */
const STORE_THREAD_TIMEOUT_MS = 10_000;
/** Opening the store, `ingest` (every spooled and trace file there is) and `gc` (every entry): housekeeping, not bounded by the daemon's batch size. */
const STORE_HOUSEKEEPING_TIMEOUT_MS = 600_000;

export interface StoreThreadOptions {
  /** Per-call deadline (default `STORE_THREAD_TIMEOUT_MS`). */
  timeoutMs?: number | undefined;
  /** The worker module (default: store-thread-worker.js beside this file). */
  workerUrl?: URL | undefined;
}

/** A call as the worker receives it. */
export type StoreCall = { method: string; args: unknown[] };

export async function openStoreThread(stateDir: string, opts: StoreThreadOptions = {}): Promise<EvidenceStore> {
  const worker = new Worker(opts.workerUrl ?? new URL('./store-thread-worker.js', import.meta.url));
  const rpc = new WorkerRpc<StoreCall>(worker, {
    name: 'the store thread',
    timeoutMs: opts.timeoutMs ?? STORE_THREAD_TIMEOUT_MS,
    onDeadline: 'call',
    error: (message, why, cause) =>
      why === 'late'
        ? new WardError(ERROR_CODES.STORE_UNAVAILABLE, message, { hint: 'the disk under the state directory may be stalled; decisions are refused until the store answers again' })
        : new WardError(ERROR_CODES.STORE_INVALID, `store thread stopped: ${message}`, cause === undefined ? {} : { cause }),
  });
  const call = <T>(method: string, ...args: unknown[]): Promise<T> => rpc.call<T>({ method, args });
  const housekeeping = <T>(method: string, ...args: unknown[]): Promise<T> => rpc.call<T>({ method, args }, STORE_HOUSEKEEPING_TIMEOUT_MS);
  try {
    await housekeeping<void>('open', stateDir);
  } catch (err) {
    await rpc.close();
    throw err;
  }
  return {
    put: (inputs: readonly StoreInput[]) => call<PutResult>('put', inputs),
    get: (kind: EntryKind, id: string) => call<StoreEntry | undefined>('get', kind, id),
    read: async (entry: StoreEntry) => toBuffer(await call<Uint8Array>('read', entry)),
    list: (filter: ListFilter) => call<StoreEntry[]>('list', filter),
    resolve: (idOrRef: string, kind?: EntryKind) => call<StoreEntry[]>('resolve', idOrRef, kind),
    ingest: () => housekeeping<IngestReport>('ingest'),
    gc: (policy: RetentionPolicy) => housekeeping<GcReport>('gc', policy),
    count: (kind?: EntryKind) => call<number>('count', kind),
    close: async () => {
      if (rpc.dead) return;
      try {
        await call<void>('close');
      } finally {
        await rpc.close();
      }
    },
  };
}

function toBuffer(u8: Uint8Array): Buffer {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}
