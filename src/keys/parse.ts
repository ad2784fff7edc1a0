import { createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto';
import { ERROR_CODES, WardError } from '../errors.js';
import {
  ED25519_PUBLIC_LENGTH,
  ED25519_SEED_LENGTH,
  signingKeyFromObject,
  signingKeyFromSeed,
  verifyKeyFromObject,
  verifyKeyFromRaw,
} from './ed25519.js';
import type { SigningKey, VerifyKey } from './types.js';

/** The key file encodings Ward reads; the reference writes only `base64`. */
export type KeyFormat = 'base64' | 'jwk' | 'pem';

/** The reference trims exactly these around key text (`gate.md` §6.4). */
export function trimKeyText(text: string): string {
  return text.replace(/^[ \n\r\t]+|[ \n\r\t]+$/g, '');
}

/** Autodetect by the first character: `{` is a JWK, `-----BEGIN` is PEM, anything else base64. */
export function detectKeyFormat(trimmed: string): KeyFormat {
  if (trimmed.startsWith('{')) return 'jwk';
  if (trimmed.startsWith('-----BEGIN')) return 'pem';
  return 'base64';
}

/**
 * Parse private key text in any supported format. The reference 64-byte form carries the public
 * half too; it must match the seed, or signatures would be made under a key nobody can name.
 */
export function parsePrivateKey(text: string): SigningKey {
  const trimmed = trimKeyText(text);
  switch (detectKeyFormat(trimmed)) {
    case 'base64': {
      const raw = decodeBase64(trimmed, 'private key');
      if (raw.length !== ED25519_SEED_LENGTH + ED25519_PUBLIC_LENGTH) {
        throw keyError(`invalid private key length: ${raw.length}`);
      }
      const key = signingKeyFromSeed(raw.subarray(0, ED25519_SEED_LENGTH));
      if (!key.publicRaw.equals(raw.subarray(ED25519_SEED_LENGTH))) {
        throw keyError('invalid private key: public half does not match the seed');
      }
      return key;
    }
    case 'jwk': {
      const jwk = parseJwkText(trimmed);
      if (typeof jwk.d !== 'string') throw keyError('invalid private key: JWK has no private part (d)');
      const key = signingKeyFromObject(importJwk(() => createPrivateKey({ key: jwk, format: 'jwk' })));
      if (typeof jwk.x === 'string' && jwk.x !== key.publicRaw.toString('base64url')) {
        throw keyError('invalid private key: JWK x does not match d');
      }
      return key;
    }
    case 'pem':
      if (!/^-----BEGIN PRIVATE KEY-----/.test(trimmed)) {
        throw keyError('invalid private key: PEM must be an unencrypted PKCS#8 "PRIVATE KEY"');
      }
      return signingKeyFromObject(importPem(() => createPrivateKey(trimmed), 'private'));
  }
}

/** Parse public key text. A private key is refused here: a public source must not hold secrets. */
export function parsePublicKey(text: string): VerifyKey {
  const trimmed = trimKeyText(text);
  switch (detectKeyFormat(trimmed)) {
    case 'base64': {
      const raw = decodeBase64(trimmed, 'public key');
      if (raw.length !== ED25519_PUBLIC_LENGTH) throw keyError(`invalid public key length: ${raw.length}`);
      return verifyKeyFromRaw(raw);
    }
    case 'jwk':
      return publicKeyFromJwk(parseJwkText(trimmed));
    case 'pem':
      if (!/^-----BEGIN PUBLIC KEY-----/.test(trimmed)) {
        throw keyError('invalid public key: PEM must be an SPKI "PUBLIC KEY"');
      }
      return verifyKeyFromObject(importPem(() => createPublicKey(trimmed), 'public'));
  }
}

/** A public OKP/Ed25519 JWK (members other than kty, crv and x are ignored). */
export function publicKeyFromJwk(jwk: JsonWebKey): VerifyKey {
  if (jwk.d !== undefined) throw keyError('invalid public key: JWK holds a private key (d)');
  if (typeof jwk.x !== 'string') throw keyError('invalid public key: JWK has no x');
  return verifyKeyFromObject(importJwk(() => createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' })));
}

function parseJwkText(text: string): JsonWebKey {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw keyError(`invalid JWK: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw keyError('invalid JWK: not a JSON object');
  const jwk = value as JsonWebKey;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') {
    throw keyError(`invalid JWK: kty must be "OKP" and crv "Ed25519" (got ${String(jwk.kty)}/${String(jwk.crv)})`);
  }
  return jwk;
}

function importJwk<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (err instanceof WardError) throw err;
    throw keyError(`invalid JWK: ${(err as Error).message}`);
  }
}

function importPem<T>(load: () => T, kind: string): T {
  try {
    return load();
  } catch (err) {
    if (err instanceof WardError) throw err;
    throw keyError(`invalid PEM ${kind} key: ${(err as Error).message}`);
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Go's `base64.StdEncoding` accepts it: standard alphabet, padding required. */
export function isStdBase64(text: string): boolean {
  return BASE64.test(text);
}

function decodeBase64(text: string, what: string): Buffer {
  if (!isStdBase64(text)) throw keyError(`decode ${what}: illegal base64 data`);
  return Buffer.from(text, 'base64');
}

function keyError(message: string): WardError {
  return new WardError(ERROR_CODES.KEY_INVALID, message);
}
