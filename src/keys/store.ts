import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatRFC3339Nano, type GoTime } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { createFileExclusive, writeFileAtomic } from '../state/atomic-file.js';
import { encodePrivateKeyFile, encodePublicKeyFile, generateSigningKey } from './ed25519.js';
import { parsePrivateKey, parsePublicKey } from './parse.js';
import type { RingKey, SigningKey, VerifyKey } from './types.js';

/**
 * Key files on disk. Ward's own key lives in `<state>/keys/` (README decision 2):
 *   ward_private.key / ward_public.key   the current pair (reference base64 format, 0600)
 *   retired/ward_<stamp>_<id>_public.key  public halves of rotated-out keys, verify-only
 */
export const DEFAULT_KEY_PREFIX = 'ward';

export interface DefaultKeyPaths {
  dir: string;
  privateKey: string;
  publicKey: string;
  retiredDir: string;
}

export function defaultKeyPaths(stateDir: string): DefaultKeyPaths {
  const dir = join(stateDir, 'keys');
  return {
    dir,
    privateKey: join(dir, `${DEFAULT_KEY_PREFIX}_private.key`),
    publicKey: join(dir, `${DEFAULT_KEY_PREFIX}_public.key`),
    retiredDir: join(dir, 'retired'),
  };
}

/** Read a private key file, refusing one that group or others can read. */
export function readPrivateKeyFile(path: string): SigningKey {
  assertPrivateFileMode(path);
  return parseWithPath(path, () => parsePrivateKey(readKeyText(path, 'private key')));
}

export function readPublicKeyFile(path: string): VerifyKey {
  return parseWithPath(path, () => parsePublicKey(readKeyText(path, 'public key')));
}

/**
 * A private key readable by anyone but its owner is treated as leaked: refuse it rather than sign
 * with it. (Windows has no POSIX modes; the check is skipped there.)
 */
export function assertPrivateFileMode(path: string): void {
  if (process.platform === 'win32') return;
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (err) {
    throw readError(path, 'private key', err);
  }
  if ((mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new WardError(
      ERROR_CODES.KEY_PERMISSIONS,
      `private key file ${path} is accessible by group or others (mode ${octal}); run: chmod 600 ${path}`,
      { hint: `chmod 600 ${path}` },
    );
  }
}

export interface DefaultKeyResult {
  key: SigningKey;
  /** True when this call created the key. */
  created: boolean;
  paths: DefaultKeyPaths;
}

/**
 * Ward's persistent signing key, created on first use. Safe when many processes start at once:
 * each candidate key is fully written to a temporary file and published with link(2), so exactly
 * one key wins and every process (winners and losers alike) then signs with that one.
 */
export function loadOrCreateDefaultKey(stateDir: string): DefaultKeyResult {
  const paths = defaultKeyPaths(stateDir);
  let created = false;
  if (!existsSync(paths.privateKey)) {
    created = createFileExclusive(paths.privateKey, encodePrivateKeyFile(generateSigningKey()), 0o600);
  }
  const key = readPrivateKeyFile(paths.privateKey);
  if (!existsSync(paths.publicKey)) writeFileAtomic(paths.publicKey, encodePublicKeyFile(key), 0o600);
  return { key, created, paths };
}

export interface RotateResult {
  key: SigningKey;
  /** The previous key, now verify-only (undefined when there was none). */
  retired: VerifyKey | undefined;
  retiredPath: string;
}

/**
 * Replace the current key with a new one. The old public half is written to `retired/` first, so
 * traces it signed stay verifiable; its private half is then gone (overwritten by the new key).
 */
export function rotateDefaultKey(stateDir: string, now: GoTime): RotateResult {
  const paths = defaultKeyPaths(stateDir);
  let retired: VerifyKey | undefined;
  let retiredPath = '';
  if (existsSync(paths.privateKey)) {
    retired = readPrivateKeyFile(paths.privateKey);
    retiredPath = join(paths.retiredDir, `${DEFAULT_KEY_PREFIX}_${compactStamp(now)}_${retired.keyId.slice(0, 12)}_public.key`);
    writeFileAtomic(retiredPath, encodePublicKeyFile(retired), 0o600);
  }
  const key = generateSigningKey();
  writeFileAtomic(paths.privateKey, encodePrivateKeyFile(key), 0o600);
  writeFileAtomic(paths.publicKey, encodePublicKeyFile(key), 0o600);
  return { key, retired, retiredPath };
}

/**
 * Every key that may have signed something in this state directory: the current key (from its
 * public file, else derived from the private file) and all retired public keys. Empty when the
 * state directory has no keys; callers must treat that as "cannot verify", never as "skip".
 */
export function loadKeyRing(stateDir: string): RingKey[] {
  const paths = defaultKeyPaths(stateDir);
  const ring: RingKey[] = [];
  if (existsSync(paths.publicKey)) {
    ring.push({ ...readPublicKeyFile(paths.publicKey), status: 'current', path: paths.publicKey });
  } else if (existsSync(paths.privateKey)) {
    ring.push({ ...readPrivateKeyFile(paths.privateKey), status: 'current', path: paths.privateKey });
  }
  if (existsSync(paths.retiredDir)) {
    for (const name of readdirSync(paths.retiredDir).sort()) {
      if (!name.endsWith('_public.key')) continue;
      const path = join(paths.retiredDir, name);
      ring.push({ ...readPublicKeyFile(path), status: 'retired', path });
    }
  }
  return ring;
}

export interface WrittenKeyPair {
  privatePath: string;
  publicPath: string;
}

/** Write `<prefix>_private.key` / `<prefix>_public.key` (both 0600), refusing to overwrite unless forced. */
export function writeKeyPair(dir: string, prefix: string, key: SigningKey, force: boolean): WrittenKeyPair {
  const privatePath = join(dir, `${prefix}_private.key`);
  const publicPath = join(dir, `${prefix}_public.key`);
  if (force) {
    writeFileAtomic(privatePath, encodePrivateKeyFile(key), 0o600);
  } else if (!createFileExclusive(privatePath, encodePrivateKeyFile(key), 0o600)) {
    throw new WardError(ERROR_CODES.USAGE, `key file already exists: ${privatePath} (use --force to replace it)`);
  }
  writeFileAtomic(publicPath, encodePublicKeyFile(key), 0o600);
  return { privatePath, publicPath };
}

/** Read a key-bearing file; a missing one is KEY_MISSING, anything else KEY_INVALID. */
export function readKeyText(path: string, kind: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw readError(path, kind, err);
  }
}

function parseWithPath<T>(path: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof WardError) throw new WardError(err.code, err.message, { cause: err, hint: `key file: ${path}` });
    throw err;
  }
}

function readError(path: string, kind: string, err: unknown): WardError {
  const code = (err as NodeJS.ErrnoException).code === 'ENOENT' ? ERROR_CODES.KEY_MISSING : ERROR_CODES.KEY_INVALID;
  return new WardError(code, `read ${kind} ${path}: ${(err as Error).message}`, { cause: err });
}

/** `yyyymmddThhmmss.fffffffffZ` without punctuation, sortable, from a UTC time. */
function compactStamp(now: GoTime): string {
  return formatRFC3339Nano({ ...now, offset: 0 }).replace(/[-:]/g, '').replace('.', '_');
}
