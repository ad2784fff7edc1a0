import { createHash, type JsonWebKey } from 'node:crypto';
import { ERROR_CODES, WardError } from '../errors.js';
import { publicKeyFromJwk } from './parse.js';
import type { VerifyKey } from './types.js';

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

/** A published key: RFC 8037 OKP members, RFC 7638 `kid`, and the reference `key_id` alongside. */
export interface JwksEntry extends PublicJwk {
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
  key_id: string;
}

export function publicJwk(key: VerifyKey): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: key.publicRaw.toString('base64url') };
}

/**
 * RFC 7638 thumbprint: sha256 over the required members in lexicographic order, no whitespace,
 * base64url. For OKP those are crv, kty, x, all plain ASCII, so the JSON is fixed text. Kept
 * synchronous (jose's `calculateJwkThumbprint` is async); tests check both agree.
 */
export function jwkThumbprint(key: VerifyKey): string {
  const { crv, kty, x } = publicJwk(key);
  return createHash('sha256').update(`{"crv":"${crv}","kty":"${kty}","x":"${x}"}`).digest('base64url');
}

export function jwksEntry(key: VerifyKey): JwksEntry {
  return { ...publicJwk(key), kid: jwkThumbprint(key), alg: 'EdDSA', use: 'sig', key_id: key.keyId };
}

export function buildJwks(keys: readonly VerifyKey[]): { keys: JwksEntry[] } {
  return { keys: keys.map(jwksEntry) };
}

/**
 * Read the Ed25519 keys of a JWKS. Entries of other key types are skipped (a JWKS may publish
 * several algorithms); a `key_id` member that disagrees with the key is an error, not a hint.
 */
export function parseJwks(text: string): VerifyKey[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw jwksError(`invalid JWKS: ${(err as Error).message}`);
  }
  const entries = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(entries)) throw jwksError('invalid JWKS: "keys" must be an array');
  const keys: VerifyKey[] = [];
  for (const [index, entry] of entries.entries()) {
    if (entry === null || typeof entry !== 'object') throw jwksError(`invalid JWKS: keys[${index}] is not an object`);
    const jwk = entry as JsonWebKey & { key_id?: unknown };
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') continue;
    const key = publicKeyFromJwk(jwk);
    if (jwk.key_id !== undefined && jwk.key_id !== key.keyId) {
      throw jwksError(`invalid JWKS: keys[${index}] key_id does not match its key`);
    }
    keys.push(key);
  }
  if (keys.length === 0) throw jwksError('invalid JWKS: no Ed25519 keys');
  return keys;
}

function jwksError(message: string): WardError {
  return new WardError(ERROR_CODES.KEY_INVALID, message);
}
