import { parentPort, workerData } from 'node:worker_threads';
import { serializeError } from '../errors.js';
import { openLevelStore } from '../store/level.js';
import type { EvidenceStore, StoreInput } from '../store/types.js';
import type { WorkerMessage } from './store-thread.js';

/** The worker side of `openStoreThread`: owns the LevelDB store and answers forwarded calls. */
const port = parentPort!;
const send = (msg: WorkerMessage) => port.postMessage(msg);

let store: EvidenceStore;
try {
  store = await openLevelStore((workerData as { stateDir: string }).stateDir);
  send({ type: 'ready' });
} catch (err) {
  send({ type: 'error', error: serializeError(err) });
  process.exit(0);
}

port.on('message', (msg: { id: number; method: string; args: unknown[] }) => {
  void (async () => {
    try {
      let value: unknown;
      switch (msg.method) {
        case 'put':
          // Buffers arrive as Uint8Arrays; the store hashes and stores them as bytes.
          value = await store.put(
            (msg.args[0] as (Omit<StoreInput, 'bytes'> & { bytes: Uint8Array })[]).map((i) => ({
              kind: i.kind,
              bytes: Buffer.from(i.bytes.buffer, i.bytes.byteOffset, i.bytes.byteLength),
              // The daemon's own traces come with the fields it serialized them from: not parsed again.
              ...(i.fields ? { fields: i.fields } : {}),
            })),
          );
          break;
        case 'read':
          value = await store.read(msg.args[0] as Parameters<EvidenceStore['read']>[0]);
          break;
        case 'close':
          await store.close();
          value = undefined;
          break;
        default: {
          const fn = (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[msg.method];
          if (typeof fn !== 'function' || !['get', 'list', 'resolve', 'ingest', 'gc', 'count'].includes(msg.method)) throw new Error(`unknown store method ${msg.method}`);
          if (msg.method === 'gc') {
            const policy = msg.args[0] as { now: Date };
            value = await store.gc({ ...(msg.args[0] as object), now: new Date(policy.now) } as Parameters<EvidenceStore['gc']>[0]);
          } else value = await fn.apply(store, msg.args);
        }
      }
      send({ type: 'reply', id: msg.id, ok: true, value });
    } catch (err) {
      send({ type: 'reply', id: msg.id, ok: false, error: serializeError(err) });
    }
  })();
});
