import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';
import { writeFully, writeFullySync } from './fs-seam.js';

/**
 * node:fs/promises, loaded by the first asynchronous write: the one-shot commands (`gate eval`,
 * the hooks) write synchronously and need not load it (about 1 ms of every call).
 */
export function fsPromises(): Promise<typeof import('node:fs/promises')> {
  return (loadedFsPromises ??= import('node:fs/promises'));
}
let loadedFsPromises: Promise<typeof import('node:fs/promises')> | undefined;

/**
 * Durable file writes shared by traces, keys, tokens and audit records. Readers never see a
 * partial file: content is written and fsynced under a temporary name in the same directory, then
 * published with rename (replace) or link (create-only), and the directory entry is fsynced. The
 * temporary file is removed on every failure path (a full disk leaves nothing behind), and
 * `sweepTempFiles` removes those a process that died left. No code writes a final file in place:
 * tests/faults/atomic-writes.test.ts holds every other write call in src/ to a short allowlist.
 */

/** Write `data` to `path`, replacing any existing file atomically. Creates missing directories. */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  renameIntoPlace(writeTemp(path, data, mode), path);
}

/**
 * Replace an existing user file (a policy `ward policy fmt --write` formats) atomically, keeping
 * its permission bits exactly: open(2) applies the umask, which would turn a group-writable 0664
 * file into 0644.
 */
export function rewriteFileAtomic(path: string, data: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch (err) {
    throw ioError(`read ${path}`, err);
  }
  renameIntoPlace(writeTemp(path, data, mode, true, true), path);
}

/** The fsynced temporary file renamed over `path`, and the directory synced; the temporary removed on failure. */
function renameIntoPlace(temp: string, path: string): void {
  try {
    renameSync(temp, path);
  } catch (err) {
    safeUnlink(temp);
    throw ioError(`write ${path}`, err);
  }
  syncDir(dirname(path));
}

/**
 * Publish `data` at `path` only if nothing is there yet. Returns false (and leaves the existing
 * file untouched) when another writer got there first: link(2) fails with EEXIST atomically, so
 * exactly one of any number of concurrent writers wins.
 */
export function createFileExclusive(path: string, data: string | Uint8Array, mode = 0o600): boolean {
  return linkUnderFirstFree(dirname(path), [basename(path)], data, mode, false) !== undefined;
}

/**
 * Create a new file in `dir` under the first free name of `names`; if all are taken, under the
 * last name with a random suffix. Never overwrites. Returns the path written.
 */
export function createUniqueFile(dir: string, names: readonly string[], data: string | Uint8Array, mode = 0o600): string {
  return linkUnderFirstFree(dir, names, data, mode, true)!;
}

/**
 * The content written and fsynced once under a temporary name, then link(2)ed under the first of
 * `names` that is free (and, with `suffixed`, then under the last name with random suffixes until
 * one is): a taken name costs one failed link, not another write and fsync. Undefined when every
 * name is taken (without `suffixed`).
 */
function linkUnderFirstFree(dir: string, names: readonly string[], data: string | Uint8Array, mode: number, suffixed: boolean): string | undefined {
  const first = join(dir, names[0] ?? 'file.json');
  const temp = writeTemp(first, data, mode);
  try {
    for (const path of candidateNames(dir, names, suffixed)) {
      try {
        linkSync(temp, path);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') continue;
        if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
          // File systems without hard links: O_EXCL create is still exclusive, only less tidy on crash.
          safeUnlink(temp);
          for (const p of candidateNames(dir, names, suffixed)) if (createWithExcl(p, data, mode)) return p;
          return undefined;
        }
        throw ioError(`write ${path}`, err);
      }
      // The temporary name goes before the directory sync, so its removal is as durable as the file.
      safeUnlink(temp);
      syncDir(dir);
      return path;
    }
    safeUnlink(temp);
    return undefined;
  } catch (err) {
    safeUnlink(temp);
    throw err;
  }
}

/** `names` in `dir`, then (with `suffixed`) the last one with a fresh random suffix, endlessly. */
function* candidateNames(dir: string, names: readonly string[], suffixed: boolean): Generator<string> {
  for (const name of names) yield join(dir, name);
  if (!suffixed) return;
  const last = names[names.length - 1] ?? 'file.json';
  const dot = last.lastIndexOf('.');
  for (;;) {
    const suffix = randomBytes(4).toString('hex');
    yield join(dir, dot > 0 ? `${last.slice(0, dot)}_${suffix}${last.slice(dot)}` : `${last}_${suffix}`);
  }
}

function writeTemp(path: string, data: string | Uint8Array, mode: number, sync = true, exactMode = false): string {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw ioError(`create directory ${dir}`, err);
  }
  const temp = tempName(path);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', mode);
    if (exactMode) fchmodSync(fd, mode);
    writeAll(fd, data);
    if (sync) fsyncSync(fd);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    safeUnlink(temp);
    throw ioError(`write ${path}`, err);
  }
  closeSync(fd);
  return temp;
}

function createWithExcl(path: string, data: string | Uint8Array, mode: number): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw ioError(`write ${path}`, err);
  }
  try {
    writeAll(fd, data);
    fsyncSync(fd);
  } catch (err) {
    // This call created the file: a partial one must not stay under the final name.
    closeSync(fd);
    safeUnlink(path);
    throw ioError(`write ${path}`, err);
  }
  closeSync(fd);
  syncDir(dirname(path));
  return true;
}

function writeAll(fd: number, data: string | Uint8Array): void {
  writeFullySync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, null);
}

/**
 * Publish `data` at `path` unless a file is there (false then), without any fsync: for files whose
 * content is durable elsewhere (a journaled trace). Still never partial: written under a temporary
 * name and link(2)ed into place; the temporary file is removed whatever happens.
 */
export function linkNewUnsyncedSync(path: string, data: string | Uint8Array, mode = 0o600): boolean {
  const temp = writeTemp(path, data, mode, false);
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw ioError(`write ${path}`, err);
  } finally {
    safeUnlink(temp);
  }
}

/** `linkNewUnsyncedSync` off the main thread. */
export async function linkNewUnsynced(path: string, data: string | Uint8Array, mode = 0o600): Promise<boolean> {
  const { open, link, unlink } = await fsPromises();
  const temp = tempName(path);
  let created = false;
  try {
    const fh = await open(temp, 'wx', mode);
    created = true;
    try {
      await writeFully(fh, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, 0);
    } finally {
      await fh.close();
    }
    try {
      await link(temp, path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  } finally {
    if (created) await unlink(temp).catch(() => undefined);
  }
}

/** A temporary name beside `path`: `.<name>.<pid>.<random>.tmp` (the pid lets `sweepTempFiles` tell whose it is). */
function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

const TEMP_FILE = /^\..+\.(\d+)(?:\.[0-9a-f]{8,16})?\.tmp$/;

/**
 * Remove the temporary files of writers that are gone (their pid is not a live process) from
 * `dir`; a host sweeps its directories at start. Returns how many were removed. Best effort: a
 * directory that cannot be read has none to sweep.
 */
export function sweepTempFiles(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = TEMP_FILE.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    try {
      unlinkSync(join(dir, name));
      removed++;
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed;
}

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** fsync the directory so created, renamed or removed names survive a crash. Best effort where unsupported. */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync directories; the file content is already durable.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * `writeFileAtomic` for long-running servers: the same temporary file, data sync, rename and
 * directory sync, each off the main thread.
 */
export async function writeFileAtomicAsync(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const { mkdir, rename, unlink } = await fsPromises();
  const dir = dirname(path);
  let temp: string | undefined;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    temp = await writeTempAsync(path, data, mode);
    await rename(temp, path);
  } catch (err) {
    if (temp) await unlink(temp).catch(() => undefined);
    throw ioError(`write ${path}`, err);
  }
  await syncDirAsync(dir);
}

/**
 * Write and datasync `data` under a temporary name beside `path` (whose directory must exist) and
 * return that name, for the caller to publish with rename or link. Nothing is left on failure.
 */
export async function writeTempAsync(path: string, data: string | Uint8Array, mode = 0o600): Promise<string> {
  const { open, unlink } = await fsPromises();
  const temp = tempName(path);
  const fh = await open(temp, 'wx', mode);
  try {
    await writeFully(fh, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, 0);
    await fh.datasync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  try {
    await fh.close();
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  return temp;
}

/** `syncDir` off the main thread (best effort where directories cannot be synced). */
export async function syncDirAsync(dir: string): Promise<void> {
  const fh = await (await fsPromises()).open(dir, 'r');
  try {
    await fh.sync();
  } catch {
    // Some platforms cannot fsync directories; the file content is already durable.
  } finally {
    await fh.close();
  }
}

function safeUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function ioError(what: string, err: unknown): WardError {
  return new WardError(ERROR_CODES.IO, `${what}: ${(err as Error).message}`, { cause: err });
}
