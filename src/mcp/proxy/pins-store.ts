import { updatePins } from '../../cluster/control.js';
import { ControlFollower } from '../../cluster/watch.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import type { PgPool } from '../../pg/index.js';
import { MemoryPinStore, parsePinsDocument, type PinsDocument, type ServerIdentity } from './pins.js';

/**
 * MCP tool pins in the cluster's PostgreSQL (`ward mcp proxy --pin-tools --store URL`,
 * `ward mcp pins … --store URL`): the same documents as `<state>/mcp-pins/<key>.json`, one row per
 * server key in `ward_mcp_pins`. An operator accepts a changed tool once, on any host, and every
 * proxy of the cluster lets its calls through within the control plane's delay (LISTEN/NOTIFY, or
 * a 1 s poll); a proxy that cannot refresh its pins for 5 s treats them as unreadable, which blocks
 * changed tools and every tool of a new tools/list (fail closed).
 */

/** The label pins of a store show in messages (`path()`), in place of a directory. */
function label(display: string): string {
  return `${display}#ward_mcp_pins`;
}

/**
 * Run the pin functions (`acceptPins`, `forgetPins`, `observeTools`) over the stored documents in
 * one transaction: `fn` gets them as a memory store, and what it changed is written back.
 */
export async function withStoredPins<T>(db: PgPool, fn: (store: MemoryPinStore) => T): Promise<T> {
  return updatePins(db, (texts) => {
    const docs = new Map<string, PinsDocument>();
    for (const [key, text] of texts) docs.set(key, parsePinsDocument(text, `pins of server ${key} in ${db.display}`, key));
    const store = new MemoryPinStore(label(db.display), docs);
    const result = fn(store);
    const writes = new Map<string, string | null>();
    for (const key of store.dirty) {
      const doc = store.current(key);
      writes.set(key, doc ? JSON.stringify(doc) : null);
    }
    return { writes, result };
  });
}

/**
 * The pin store of a proxy on the cluster. Reads are synchronous (the proxy checks pins in its
 * call path) and come from the follower's copy; a change is applied to that copy at once and
 * written through to PostgreSQL in order, re-applied there to the stored document so two proxies'
 * changes do not overwrite each other. A write that fails is logged; the next tools/list records
 * the pin again.
 */
export class ClusterPinStore extends MemoryPinStore {
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: PgPool,
    private readonly follower: ControlFollower,
    private readonly onWriteError: (err: Error) => void,
  ) {
    super(label(db.display));
    follower.onPins = () => this.reload();
  }

  private damaged = new Map<string, WardError>();

  private reload(): void {
    const texts = this.follower.pinDocuments();
    if (!texts) return;
    const docs = new Map<string, PinsDocument>();
    const damaged = new Map<string, WardError>();
    for (const [key, text] of texts) {
      try {
        docs.set(key, parsePinsDocument(text, `pins of server ${key} in ${this.db.display}`, key));
      } catch (err) {
        damaged.set(key, err as WardError); // reported by read(): its tools stay blocked
      }
    }
    this.docs = docs;
    this.damaged = damaged;
  }

  override read(key: string): PinsDocument | undefined {
    if (!this.follower.pinDocuments()) {
      throw new WardError(ERROR_CODES.STORE_UNAVAILABLE, `tool pins in ${this.db.display} not refreshed for over ${this.follower.staleAfterMs} ms`, {
        hint: 'check that PostgreSQL is reachable; pins are read again as soon as it is',
      });
    }
    const damaged = this.damaged.get(key);
    if (damaged) throw damaged;
    return super.read(key);
  }

  override update(key: string, server: ServerIdentity | undefined, change: (doc: PinsDocument) => boolean): PinsDocument | undefined {
    const doc = super.update(key, server, change);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.writes = this.writes
        .then(() => withStoredPins(this.db, (stored) => void stored.update(key, server, change)))
        .catch((err: unknown) => this.onWriteError(err as Error));
    }
    return doc;
  }

  override remove(key: string): boolean {
    const had = super.remove(key);
    if (had) {
      this.dirty.delete(key);
      this.writes = this.writes.then(() => withStoredPins(this.db, (stored) => void stored.remove(key))).catch((err: unknown) => this.onWriteError(err as Error));
    }
    return had;
  }

  override async close(): Promise<void> {
    await this.writes;
    await this.follower.close();
    await this.db.close();
  }
}

/** A proxy's pin store on the cluster database (started: first read done, following changes). */
export async function openClusterPinStore(db: PgPool, onError: (err: Error) => void): Promise<ClusterPinStore> {
  const follower = new ControlFollower(db, { topics: ['pins'], onError: (_where, err) => onError(err) });
  const store = new ClusterPinStore(db, follower, onError);
  try {
    await follower.start();
  } catch (err) {
    await db.close();
    throw err;
  }
  return store;
}
