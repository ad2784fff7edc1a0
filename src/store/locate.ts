import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ERROR_CODES, isWardError, WardError } from '../errors.js';
import { openLevelStore, storePaths } from './level.js';
import { inspectPack } from '../pack/index.js';
import { isJsonKind, type EntryKind, type EvidenceStore, type StoreEntry } from './types.js';

export interface LocatedArtifact {
  bytes: Buffer;
  /** The file read, or `store:<kind>/<id>` for an artifact read from the store. */
  path: string;
}

/**
 * Find an artifact named on the command line: a path (anything with a separator, ending in
 * `.zip`, or existing), then `<state>/<fileName(ref)>` (e.g. `runpack_<run_id>.zip`), then the store
 * by id, id prefix or run id. When another process owns the store, only the lock-free object files
 * are searched (by id or id prefix), so a busy store never makes a read fail that could succeed.
 */
export async function locateArtifact(
  ref: string,
  options: {
    cwd: string;
    stateDir: string;
    kinds: readonly EntryKind[];
    fileName?: (ref: string) => string;
    /** Another store to search instead of the local one (a PostgreSQL store named by `--store`). */
    openStore?: () => Promise<EvidenceStore>;
  },
): Promise<LocatedArtifact> {
  const asPath = resolve(options.cwd, ref);
  if (/[\\/]/.test(ref) || ref.endsWith('.zip') || existsSync(asPath)) {
    if (!existsSync(asPath)) throw new WardError(ERROR_CODES.USAGE, `artifact not found: ${ref}`);
    if (statSync(asPath).isDirectory()) {
      const what = options.kinds.join(' or ');
      throw new WardError(ERROR_CODES.USAGE, `${ref} is a directory; expected a ${what} zip file`, {
        hint: `pass the .zip file inside it (ls ${ref}), or a ${what} id from \`ward store list\``,
      });
    }
    return { bytes: readFileSync(asPath), path: asPath };
  }
  if (options.fileName) {
    const conventional = join(options.stateDir, options.fileName(ref));
    if (existsSync(conventional)) return { bytes: readFileSync(conventional), path: conventional };
  }
  let store: EvidenceStore;
  try {
    store = options.openStore ? await options.openStore() : await openLevelStore(options.stateDir);
  } catch (err) {
    if (isWardError(err) && err.code === ERROR_CODES.STORE_LOCKED) return fromObjects(ref, options.stateDir, options.kinds, err);
    throw err;
  }
  try {
    // Kinds are tried in order (a pack before a runpack); a run id naming several recordings of
    // one kind means the newest.
    for (const kind of options.kinds) {
      const found = await store.resolve(ref, kind);
      if (found.length === 0) continue;
      if (found.length > 1 && !found.every((e) => e.run_id === ref)) throw ambiguous(ref, found.map((e) => e.id));
      const entry = found.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0))[0]!;
      return { bytes: await store.read(entry), path: `store:${entry.kind}/${entry.id}` };
    }
    throw notFound(ref);
  } finally {
    await store.close();
  }
}

/** The one entry `idOrRef` names (optionally of one kind), as `ward store show` resolves it: none is not found, several are ambiguous. */
export async function resolveOneEntry(store: Pick<EvidenceStore, 'resolve'>, idOrRef: string, kind?: EntryKind): Promise<StoreEntry> {
  const found = await store.resolve(idOrRef, kind);
  if (found.length === 0) throw new WardError(ERROR_CODES.STORE_NOT_FOUND, `not in the store: ${idOrRef}`);
  if (found.length > 1) throw new WardError(ERROR_CODES.USAGE, `${idOrRef} is ambiguous: ${found.map((e) => `${e.kind}/${e.id}`).join(', ')}`);
  return found[0]!;
}

/** What `ward store show` shows of an entry's bytes: a JSON record under its kind (field order kept), a pack or runpack's inspection under `inspect`. */
export function entryView(entry: StoreEntry, bytes: Buffer): { key: string; body: unknown } {
  return isJsonKind(entry.kind) ? { key: entry.kind, body: JSON.parse(bytes.toString('utf8')) as unknown } : { key: 'inspect', body: inspectPack(bytes) };
}

function fromObjects(ref: string, stateDir: string, kinds: readonly EntryKind[], lockError: WardError): LocatedArtifact {
  const matches: string[] = [];
  for (const kind of kinds) {
    if (isJsonKind(kind)) continue;
    const dir = join(storePaths(stateDir).objects, kind);
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) if (name.endsWith('.zip') && (name === `${ref}.zip` || (ref.length >= 8 && name.startsWith(ref)))) matches.push(join(dir, name));
  }
  if (matches.length === 1) return { bytes: readFileSync(matches[0]!), path: matches[0]! };
  if (matches.length > 1) throw ambiguous(ref, matches);
  throw new WardError(ERROR_CODES.STORE_NOT_FOUND, `${ref}: not found among stored objects, and ${lockError.message}`, { hint: lockError.hint });
}

function notFound(ref: string): WardError {
  return new WardError(ERROR_CODES.STORE_NOT_FOUND, `artifact not found: ${ref} (not a file, and not in the store)`);
}

function ambiguous(ref: string, ids: readonly string[]): WardError {
  return new WardError(ERROR_CODES.USAGE, `${ref} is ambiguous: ${ids.join(', ')}`);
}
