import { parentPort } from 'node:worker_threads';
import { answerCalls } from '../edge/worker-rpc.js';
import { openLevelStore } from '../store/level.js';
import type { EvidenceStore, StoreInput } from '../store/types.js';
import type { StoreCall } from './store-thread.js';

/** The worker side of `openStoreThread`: opens and owns the LevelDB store and answers forwarded calls. */
let store: EvidenceStore | undefined;

answerCalls<StoreCall>(parentPort!, async (msg) => {
  if (msg.method === 'open') {
    store = await openLevelStore(msg.args[0] as string);
    return undefined;
  }
  if (!store) throw new Error('the store is not open');
  switch (msg.method) {
    case 'put':
      // Buffers arrive as Uint8Arrays; the store hashes and stores them as bytes.
      return store.put(
        (msg.args[0] as (Omit<StoreInput, 'bytes'> & { bytes: Uint8Array })[]).map((i) => ({
          kind: i.kind,
          bytes: Buffer.from(i.bytes.buffer, i.bytes.byteOffset, i.bytes.byteLength),
          // The daemon's own traces come with the fields it serialized them from: not parsed again.
          ...(i.fields ? { fields: i.fields } : {}),
        })),
      );
    case 'read':
      return store.read(msg.args[0] as Parameters<EvidenceStore['read']>[0]);
    case 'close':
      await store.close();
      return undefined;
    case 'gc': {
      const policy = msg.args[0] as Parameters<EvidenceStore['gc']>[0];
      return store.gc({ ...policy, now: new Date(policy.now) });
    }
    default: {
      const fn = (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[msg.method];
      if (typeof fn !== 'function' || !['get', 'list', 'resolve', 'ingest', 'count'].includes(msg.method)) throw new Error(`unknown store method ${msg.method}`);
      return fn.apply(store, msg.args);
    }
  }
});
