import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';
import { syncDir } from '../state/atomic-file.js';

/**
 * Ward's own exclusive lock on the store. LevelDB's fcntl lock is not enough: a failed second
 * open() in the same process silently releases it (deps.md §5). So the store is opened only
 * after this lock is held, and never twice in one process.
 */
export interface StoreLock {
  readonly path: string;
  readonly token: string;
  release(): void;
}

interface LockContent {
  pid: number;
  host: string;
  /** Kernel start time of the process (Linux), so a recycled pid is not mistaken for the holder. */
  proc_start: string;
  since: string;
  token: string;
}

/** Lock paths held by this process: a second acquisition fails without touching LevelDB. */
const heldHere = new Set<string>();

export function acquireStoreLock(path: string): StoreLock {
  const full = resolve(path);
  if (heldHere.has(full)) throw locked(full, `this process (pid ${process.pid}) already has the store open`);
  mkdirSync(dirname(full), { recursive: true, mode: 0o750 });
  const content: LockContent = {
    pid: process.pid,
    host: hostname(),
    proc_start: procStart(process.pid),
    since: new Date().toISOString(),
    token: randomBytes(16).toString('hex'),
  };
  // Two attempts: the second only after a stale lock (dead holder) was moved aside.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (tryCreate(full, content)) {
      heldHere.add(full);
      return { path: full, token: content.token, release: () => release(full, content.token) };
    }
    const holder = readHolder(full);
    if (holder && holderAlive(holder)) {
      throw locked(full, `held by pid ${holder.pid} on ${holder.host} since ${holder.since}`);
    }
    breakStaleLock(full);
  }
  throw locked(full, 'another process took the lock while a stale one was being removed');
}

function tryCreate(path: string, content: LockContent): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new WardError(ERROR_CODES.IO, `create store lock ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    writeSync(fd, JSON.stringify(content));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDir(dirname(path));
  return true;
}

function readHolder(path: string): LockContent | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as LockContent;
    return typeof value.pid === 'number' ? value : undefined;
  } catch {
    // Unreadable or half-written (the holder died between create and write): treat as stale.
    return undefined;
  }
}

/** A holder on another host, or one whose liveness cannot be decided, counts as alive (fail safe). */
function holderAlive(holder: LockContent): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    return true; // EPERM: alive, owned by someone else
  }
  const start = procStart(holder.pid);
  return start === '' || holder.proc_start === '' || start === holder.proc_start;
}

/**
 * Move the stale lock aside under a unique name, then look at what was moved: if it is a live
 * holder's lock (one that replaced the stale lock in between), link it back in place.
 */
function breakStaleLock(path: string): void {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else removed it
    throw new WardError(ERROR_CODES.IO, `remove stale store lock ${path}: ${(err as Error).message}`, { cause: err });
  }
  const moved = readHolder(aside);
  if (moved && holderAlive(moved)) {
    try {
      linkSync(aside, path); // never replaces: fails if yet another lock is already there
    } catch {
      // that other lock stands
    }
  }
  unlinkSync(aside);
  syncDir(dirname(path));
}

function release(path: string, token: string): void {
  heldHere.delete(path);
  const holder = readHolder(path);
  if (holder?.token !== token) return; // not ours any more; never remove another process's lock
  try {
    unlinkSync(path);
    syncDir(dirname(path));
  } catch {
    // already gone
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks); "" where /proc is unavailable. */
function procStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? '';
  } catch {
    return '';
  }
}

function locked(path: string, detail: string): WardError {
  return new WardError(ERROR_CODES.STORE_LOCKED, `store is locked (${path}): ${detail}`, {
    hint: 'short-lived commands spool their records instead; run store commands when the owner (e.g. the daemon) is stopped',
  });
}
