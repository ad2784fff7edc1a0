import { resolve } from 'node:path';
import { ERROR_CODES, WardError } from '../errors.js';
import { generateSigningKey } from './ed25519.js';
import { parseJwks } from './jwk.js';
import { parsePrivateKey, parsePublicKey } from './parse.js';
import { loadOrCreateDefaultKey, readKeyText, readPrivateKeyFile, readPublicKeyFile } from './store.js';
import type { SigningKey, VerifyKey } from './types.js';

/**
 * `default`: Ward's persistent key in `<state>/keys/` (created on first use), or an explicit source
 * when one is given. `dev`: an ephemeral key, like the reference default. `prod`: an explicit
 * source is mandatory.
 */
export type KeyMode = 'default' | 'dev' | 'prod';

export const KEY_MODES: readonly KeyMode[] = ['default', 'dev', 'prod'];

/** The reference warning text for ephemeral keys (`gate.md` §3.6 step 6). */
export const DEV_KEY_WARNING = 'dev mode: ephemeral keypair generated; signatures will not verify across machines';

export interface ResolveSigningKeyOptions {
  mode: KeyMode;
  privateKeyPath?: string | undefined;
  privateKeyEnv?: string | undefined;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export type SigningKeySource = 'default' | 'ephemeral' | 'path' | 'env';

export interface ResolvedSigningKey {
  key: SigningKey;
  warnings: string[];
  source: SigningKeySource;
  /** True when the default key was created by this call. */
  created: boolean;
}

export function resolveSigningKey(opts: ResolveSigningKeyOptions): ResolvedSigningKey {
  const hasPath = nonEmpty(opts.privateKeyPath);
  const hasEnv = nonEmpty(opts.privateKeyEnv);
  switch (opts.mode) {
    case 'dev':
      if (hasPath || hasEnv) throw keyUsage('dev mode does not accept explicit key sources');
      return { key: generateSigningKey(), warnings: [DEV_KEY_WARNING], source: 'ephemeral', created: false };
    case 'prod':
      if (!hasPath && !hasEnv) throw keyUsage('prod mode requires a private key source');
      return explicitSigningKey(opts);
    case 'default': {
      if (hasPath || hasEnv) return explicitSigningKey(opts);
      const { key, created } = loadOrCreateDefaultKey(opts.stateDir);
      return { key, warnings: [], source: 'default', created };
    }
    default:
      throw keyUsage(`unsupported key mode: ${String(opts.mode)}`);
  }
}

function explicitSigningKey(opts: ResolveSigningKeyOptions): ResolvedSigningKey {
  const text = readSource('private', opts.privateKeyPath, opts.privateKeyEnv, opts);
  if (text.kind === 'path') return { key: readPrivateKeyFile(text.path), warnings: [], source: 'path', created: false };
  return { key: parsePrivateKey(text.text), warnings: [], source: 'env', created: false };
}

export interface VerifyKeySources {
  publicKeyPath?: string | undefined;
  publicKeyEnv?: string | undefined;
  privateKeyPath?: string | undefined;
  privateKeyEnv?: string | undefined;
  jwksPath?: string | undefined;
}

export function isVerifyKeyConfigured(sources: VerifyKeySources): boolean {
  return [sources.publicKeyPath, sources.publicKeyEnv, sources.privateKeyPath, sources.privateKeyEnv, sources.jwksPath].some(nonEmpty);
}

/**
 * Verify keys per `gate.md` §6.4 `LoadVerifyKey`: a public source (a key or a JWKS) wins; else the
 * public half of a private source; else `public key not configured`. Never returns an empty list.
 */
export function loadVerifyKeys(sources: VerifyKeySources, env: NodeJS.ProcessEnv, cwd: string): VerifyKey[] {
  const where = { env, cwd };
  const publicSources = [sources.publicKeyPath, sources.publicKeyEnv, sources.jwksPath].filter(nonEmpty).length;
  if (publicSources > 1) throw keyUsage('public key source: set exactly one of path, env or jwks');
  if (nonEmpty(sources.jwksPath)) {
    const path = resolve(cwd, sources.jwksPath);
    return parseJwks(readKeyText(path, 'jwks'));
  }
  if (nonEmpty(sources.publicKeyPath) || nonEmpty(sources.publicKeyEnv)) {
    const text = readSource('public', sources.publicKeyPath, sources.publicKeyEnv, where);
    return [text.kind === 'path' ? readPublicKeyFile(text.path) : parsePublicKey(text.text)];
  }
  if (nonEmpty(sources.privateKeyPath) || nonEmpty(sources.privateKeyEnv)) {
    const text = readSource('private', sources.privateKeyPath, sources.privateKeyEnv, where);
    return [text.kind === 'path' ? readPrivateKeyFile(text.path) : parsePrivateKey(text.text)];
  }
  throw new WardError(ERROR_CODES.KEY_MISSING, 'public key not configured');
}

type SourceText = { kind: 'path'; path: string } | { kind: 'env'; text: string };

/** Resolve a `--x-key PATH` / `--x-key-env VAR` pair to a path or the variable's text. */
function readSource(
  kind: 'private' | 'public',
  path: string | undefined,
  envName: string | undefined,
  where: { env: NodeJS.ProcessEnv; cwd: string },
): SourceText {
  if (nonEmpty(path) && nonEmpty(envName)) throw keyUsage(`${kind} key source: set either path or env`);
  if (nonEmpty(path)) return { kind: 'path', path: resolve(where.cwd, path) };
  const name = envName ?? '';
  const value = (where.env[name] ?? '').trim();
  if (value === '') throw new WardError(ERROR_CODES.KEY_MISSING, `${kind} key env not set: ${name}`);
  return { kind: 'env', text: value };
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function keyUsage(message: string): WardError {
  return new WardError(ERROR_CODES.KEY_INVALID, message);
}
