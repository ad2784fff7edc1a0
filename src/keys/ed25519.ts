import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { sha256Hex } from '../canon/index.js';
import { ERROR_CODES, WardError } from '../errors.js';
import type { SigningKey, VerifyKey } from './types.js';

// DER prefixes for raw Ed25519 material (`gate.md` §6.4 "Node interop").
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export const ED25519_SEED_LENGTH = 32;
export const ED25519_PUBLIC_LENGTH = 32;

export function keyIdFor(publicRaw: Uint8Array): string {
  return sha256Hex(publicRaw);
}

export function verifyKeyFromRaw(publicRaw: Buffer): VerifyKey {
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicRaw]), format: 'der', type: 'spki' });
  return { publicKey, publicRaw: Buffer.from(publicRaw), keyId: keyIdFor(publicRaw) };
}

export function verifyKeyFromObject(publicKey: KeyObject): VerifyKey {
  assertEd25519(publicKey);
  const raw = rawPublic(publicKey);
  return { publicKey, publicRaw: raw, keyId: keyIdFor(raw) };
}

export function signingKeyFromSeed(seed: Buffer): SigningKey {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return signingKeyFromObject(privateKey);
}

export function signingKeyFromObject(privateKey: KeyObject): SigningKey {
  assertEd25519(privateKey);
  const publicKey = createPublicKey(privateKey);
  const raw = rawPublic(publicKey);
  return { privateKey, publicKey, publicRaw: raw, keyId: keyIdFor(raw) };
}

export function generateSigningKey(): SigningKey {
  return signingKeyFromObject(generateKeyPairSync('ed25519').privateKey);
}

/** The 32-byte seed of a private key (the first half of the reference's 64-byte private key). */
export function seedOf(key: SigningKey): Buffer {
  const der = key.privateKey.export({ format: 'der', type: 'pkcs8' });
  return der.subarray(der.length - ED25519_SEED_LENGTH);
}

/** Reference private key file text: base64(seed ‖ public) and a newline (`gate.md` §6.4). */
export function encodePrivateKeyFile(key: SigningKey): string {
  return Buffer.concat([seedOf(key), key.publicRaw]).toString('base64') + '\n';
}

/** Reference public key file text: base64 of the 32 raw bytes and a newline. */
export function encodePublicKeyFile(key: VerifyKey): string {
  return key.publicRaw.toString('base64') + '\n';
}

/** The 32 raw public bytes (as the JWK's x: Node reads them from the key, where a DER export encodes through OpenSSL, ~0.4 ms for the first). */
function rawPublic(publicKey: KeyObject): Buffer {
  const { x } = publicKey.export({ format: 'jwk' });
  const raw = Buffer.from(typeof x === 'string' ? x : '', 'base64url');
  if (raw.length !== ED25519_PUBLIC_LENGTH) throw new WardError(ERROR_CODES.KEY_INVALID, `invalid Ed25519 public key length: ${raw.length}`);
  return raw;
}

function assertEd25519(key: KeyObject): void {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new WardError(ERROR_CODES.KEY_INVALID, `unsupported key type: ${key.asymmetricKeyType ?? key.type} (Ed25519 required)`);
  }
}
