import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { digestJcs, formatRFC3339Nano, nowUTC, type JsonObject } from '../../canon/index.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import { syncDir, writeFileAtomic } from '../../state/atomic-file.js';
import { withFileLock } from '../../state/file-lock.js';

/**
 * Tool pins that persist per server (`--pin-tools`, `ward mcp pins`): one JSON document per MCP
 * server in `<state>/mcp-pins/<server key>.json`, holding for each tool the sha256 of its JCS
 * definition as first seen (`pinned`) and, when a later `tools/list` showed something else, the new
 * digest (`pending`) until the operator accepts it. Writes are atomic and made under a lock file,
 * so any number of proxies (and the CLI) can share the directory.
 */

export const PINS_SCHEMA_ID = 'ward.mcp.tool_pins';
export const PINS_SCHEMA_VERSION = '1.0.0';

export interface ToolPin {
  /** "" for a tool held on first sight (its definition is suspicious): nothing is pinned until an operator accepts it. */
  pinned: string;
  pinned_at: string;
  /** The definition that was pinned (name, description, inputSchema, annotations). */
  definition: JsonObject;
  pending?: string;
  pending_at?: string;
  pending_definition?: JsonObject;
  /** Why the pending definition is held besides being new or changed: the witness's reason codes (docs/witness.md). */
  pending_reasons?: string[];
  /** The digest an operator accepted (`ward mcp pins accept`): a suspicious definition with this digest is no longer held. */
  accepted?: string;
}

export interface PinsDocument {
  schema_id: string;
  schema_version: string;
  server_key: string;
  server: { name: string; version?: string; upstream: string[] | string };
  created_at: string;
  updated_at: string;
  tools: Record<string, ToolPin>;
}

/** Who the server is, for its pins: its `serverInfo` plus how Ward reaches it. */
export interface ServerIdentity {
  name: string;
  version?: string | undefined;
  /** The upstream command line (`-- <command> [args...]`) or the `--upstream-url`. */
  upstream: string[] | string;
}

/**
 * The server key: `<serverInfo.name, as a slug>-<16 hex of sha256(JCS({name, upstream}))>`. The
 * version is left out on purpose (an upgrade of the same server keeps its pins and shows changed
 * tools as pending); the upstream command line or URL is in (two different servers that both call
 * themselves "filesystem" do not share pins).
 */
export function serverKey(id: ServerIdentity): string {
  const slug = id.name.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 40) || 'server';
  return `${slug}-${digestJcs({ name: id.name, upstream: id.upstream } as never).slice(0, 16)}`;
}

/** `<state>/mcp-pins`. */
export function pinsDir(stateDir: string): string {
  return join(stateDir, 'mcp-pins');
}

const KEY_RE = /^[a-z0-9._-]{1,80}$/;
const LOCK = { timeoutMs: 3000, staleMs: 15000 };

export class PinStore {
  constructor(readonly dir: string) {}

  path(key: string): string {
    if (!KEY_RE.test(key) || key.startsWith('.')) throw new WardError(ERROR_CODES.USAGE, `not a server key: ${key}`, { hint: 'ward mcp pins list shows the server keys' });
    return join(this.dir, `${key}.json`);
  }

  /** The document for `key`; undefined when there is none. A damaged file is an error that says where it is. */
  read(key: string): PinsDocument | undefined {
    const path = this.path(key);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new WardError(ERROR_CODES.IO, `read ${path}: ${(err as Error).message}`);
    }
    return parsePinsDocument(text, `pins file ${path}`, key);
  }

  /**
   * Read-modify-write under the lock. `change` edits the document in place (it gets a fresh one when
   * there is none) and returns false when there is nothing to write.
   */
  update(key: string, server: ServerIdentity | undefined, change: (doc: PinsDocument) => boolean): PinsDocument | undefined {
    const path = this.path(key);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return withFileLock(`${path}.lock`, LOCK, () => {
      const doc = applyPinChange(this.read(key), key, server, change);
      if (doc?.changed) writeFileAtomic(path, `${JSON.stringify(doc.doc, null, 2)}\n`, 0o600);
      return doc?.doc;
    });
  }

  /** Every server's document, sorted by key (damaged files are reported, not skipped silently). */
  list(): PinsDocument[] {
    return this.keys().map((k) => this.read(k)).filter((d): d is PinsDocument => d !== undefined);
  }

  keys(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter((k) => KEY_RE.test(k))
      .sort();
  }

  remove(key: string): boolean {
    const path = this.path(key);
    return withFileLock(`${path}.lock`, LOCK, () => {
      try {
        unlinkSync(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw err;
      }
      syncDir(this.dir);
      return true;
    });
  }

  /** Writes still in flight are done (a store that writes elsewhere than files has some). */
  async close(): Promise<void> {}
}

/** A pins document from its JSON text; `where` names it in the error. */
export function parsePinsDocument(text: string, where: string, key: string): PinsDocument {
  try {
    const doc = JSON.parse(text) as PinsDocument;
    if (doc.schema_id !== PINS_SCHEMA_ID || typeof doc.tools !== 'object' || doc.tools === null) throw new Error(`not a ${PINS_SCHEMA_ID} document`);
    return doc;
  } catch (err) {
    throw new WardError(ERROR_CODES.STATE_INVALID, `${where} is damaged: ${(err as Error).message}`, {
      hint: `remove it (ward mcp pins forget --server ${key}); the next session pins the tools again`,
    });
  }
}

/**
 * One read-modify-write of a server's document: `doc` as read (undefined: none yet, created when
 * the server's identity is known), changed in place by `change`. Undefined when there is no
 * document and none may be created.
 */
export function applyPinChange(
  current: PinsDocument | undefined,
  key: string,
  server: ServerIdentity | undefined,
  change: (doc: PinsDocument) => boolean,
): { doc: PinsDocument; changed: boolean } | undefined {
  const now = rfc3339();
  let doc = current;
  if (!doc) {
    if (!server) return undefined;
    doc = {
      schema_id: PINS_SCHEMA_ID,
      schema_version: PINS_SCHEMA_VERSION,
      server_key: key,
      server: { name: server.name, ...(server.version ? { version: server.version } : {}), upstream: server.upstream },
      created_at: now,
      updated_at: now,
      tools: {},
    };
  }
  if (!change(doc)) return { doc, changed: false };
  doc.updated_at = now;
  return { doc, changed: true };
}

/**
 * Pins held in memory, with the keys changed since it was filled (`dirty`): what the PostgreSQL
 * pin stores (src/mcp/proxy/pins-store.ts) run the pin functions over. Reads hand out copies, so a
 * caller's edits reach the documents only through `update`.
 */
export class MemoryPinStore extends PinStore {
  readonly dirty = new Set<string>();

  constructor(
    dir: string,
    protected docs: Map<string, PinsDocument> = new Map(),
  ) {
    super(dir);
  }

  override read(key: string): PinsDocument | undefined {
    this.path(key);
    const doc = this.docs.get(key);
    return doc ? (structuredClone(doc) as PinsDocument) : undefined;
  }

  override update(key: string, server: ServerIdentity | undefined, change: (doc: PinsDocument) => boolean): PinsDocument | undefined {
    const out = applyPinChange(this.read(key), key, server, change);
    if (out?.changed) {
      this.docs.set(key, out.doc);
      this.dirty.add(key);
    }
    return out?.doc;
  }

  override keys(): string[] {
    return [...this.docs.keys()].sort();
  }

  override remove(key: string): boolean {
    this.path(key);
    const had = this.docs.delete(key);
    if (had) this.dirty.add(key);
    return had;
  }

  /** The document of a dirty key as it now is (undefined: removed). */
  current(key: string): PinsDocument | undefined {
    return this.docs.get(key);
  }
}

/**
 * What one observation of a listed tool means for its pin. `held`: the definition is suspicious
 * (the witness's tool scan) and no operator accepted it: it waits as pending, like a changed one.
 */
export type PinCheck = 'pinned' | 'same' | 'changed' | 'held';

/** One listed tool, as `observeTools` records it. `suspicion`: the scan's reason codes (none: clean). */
export interface ObservedTool {
  name: string;
  digest: string;
  definition: JsonObject;
  suspicion?: readonly string[] | undefined;
}

/**
 * Record listed tools against the persisted pins: a new tool is pinned; a definition that differs
 * from its pin becomes `pending`; a suspicious definition is pinned only once an operator accepted
 * it (until then it is pending with its reasons, even on first sight). One read, and a locked write
 * only when something is new, however many tools the server lists.
 */
export function observeTools(store: PinStore, key: string, server: ServerIdentity, tools: readonly ObservedTool[]): Map<string, { check: PinCheck; pinned: string }> {
  const out = new Map<string, { check: PinCheck; pinned: string }>();
  const decide = (doc: PinsDocument | undefined, write: boolean): boolean => {
    let dirty = false;
    const now = rfc3339();
    for (const { name, digest, definition, suspicion } of tools) {
      const t = doc?.tools[name];
      if (suspicion?.length && !(t && t.pinned === digest && t.accepted === digest)) {
        out.set(name, { check: 'held', pinned: t?.pinned ?? '' });
        const reasons = [...new Set(suspicion)].sort();
        if (t && t.pending === digest && sameList(t.pending_reasons, reasons)) continue;
        dirty = true;
        if (!write || !doc) continue;
        const held = { pending: digest, pending_at: now, pending_definition: definition, pending_reasons: reasons };
        if (t) Object.assign(t, held);
        else doc.tools[name] = { pinned: '', pinned_at: '', definition: {}, ...held };
        continue;
      }
      if (t && t.pinned === digest) {
        out.set(name, { check: 'same', pinned: digest });
        continue;
      }
      if (t) {
        out.set(name, { check: 'changed', pinned: t.pinned });
        if (t.pending === digest && !t.pending_reasons) continue;
        dirty = true;
        if (write) {
          Object.assign(t, { pending: digest, pending_at: now, pending_definition: definition });
          delete t.pending_reasons;
        }
        continue;
      }
      out.set(name, { check: 'pinned', pinned: digest });
      dirty = true;
      if (write && doc) doc.tools[name] = { pinned: digest, pinned_at: now, definition };
    }
    return dirty;
  };
  if (!decide(store.read(key), false)) return out;
  out.clear();
  store.update(key, server, (doc) => decide(doc, true));
  return out;
}

/** `ward mcp pins accept`: promote pending → pinned for the named tools (or all with a pending digest). */
export function acceptPins(store: PinStore, key: string, tools: readonly string[] | 'all'): { doc: PinsDocument; accepted: { name: string; digest: string; previous: string }[] } {
  requireKnown(store, key);
  const accepted: { name: string; digest: string; previous: string }[] = [];
  const doc = store.update(key, undefined, (d) => {
    const names = tools === 'all' ? Object.keys(d.tools).filter((n) => d.tools[n]!.pending) : [...tools];
    if (names.length === 0) {
      throw new WardError(ERROR_CODES.USAGE, `nothing pending for server ${key}: every tool matches its pin`, {
        hint: 'ward mcp pins list shows pinned and pending digests',
      });
    }
    for (const name of names) {
      const t = d.tools[name];
      if (!t) {
        throw new WardError(ERROR_CODES.USAGE, `server ${key} has no pinned tool ${name}`, {
          hint: `its tools: ${Object.keys(d.tools).sort().join(', ') || '(none)'}`,
        });
      }
      if (!t.pending) {
        throw new WardError(ERROR_CODES.USAGE, `nothing pending for tool ${name} of server ${key}: its definition matches the pin`, {
          hint: 'ward mcp pins list shows which tools have a pending definition',
        });
      }
    }
    const now = rfc3339();
    for (const name of names.sort()) {
      const t = d.tools[name]!;
      accepted.push({ name, digest: t.pending!, previous: t.pinned });
      t.pinned = t.pending!;
      t.pinned_at = now;
      t.accepted = t.pending!;
      t.definition = t.pending_definition ?? t.definition;
      delete t.pending;
      delete t.pending_at;
      delete t.pending_definition;
      delete t.pending_reasons;
    }
    return true;
  });
  return { doc: doc!, accepted };
}

/** `ward mcp pins forget`: drop one tool's pin, or the server's whole document. */
export function forgetPins(store: PinStore, key: string, tool?: string): { removed: string[] } {
  requireKnown(store, key);
  if (tool === undefined) {
    const names = Object.keys(store.read(key)?.tools ?? {}).sort();
    store.remove(key);
    return { removed: names };
  }
  store.update(key, undefined, (d) => {
    if (!d.tools[tool]) {
      throw new WardError(ERROR_CODES.USAGE, `server ${key} has no pinned tool ${tool}`, { hint: `its tools: ${Object.keys(d.tools).sort().join(', ') || '(none)'}` });
    }
    delete d.tools[tool];
    return true;
  });
  return { removed: [tool] };
}

function requireKnown(store: PinStore, key: string): void {
  if (store.read(key)) return;
  const known = store.keys();
  throw new WardError(ERROR_CODES.USAGE, `unknown server key ${key}`, {
    hint: known.length
      ? `known server keys: ${known.join(', ')} (ward mcp pins list)`
      : `no pins in ${store.dir} yet: ward mcp proxy --pin-tools records them (check --state-dir)`,
  });
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}

function rfc3339(): string {
  return formatRFC3339Nano(nowUTC());
}
