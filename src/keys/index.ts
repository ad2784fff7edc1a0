// Ed25519 keys: parsing, Ward's persistent key store, verify-key resolution, JWKS.
export type { SigningKey, VerifyKey, RingKey, KeyStatus } from './types.js';
export {
  keyIdFor,
  verifyKeyFromRaw,
  signingKeyFromSeed,
  generateSigningKey,
  encodePrivateKeyFile,
  encodePublicKeyFile,
} from './ed25519.js';
export { parsePrivateKey, parsePublicKey, detectKeyFormat } from './parse.js';
export type { KeyFormat } from './parse.js';
export {
  DEFAULT_KEY_PREFIX,
  defaultKeyPaths,
  readPrivateKeyFile,
  readPublicKeyFile,
  loadOrCreateDefaultKey,
  rotateDefaultKey,
  loadKeyRing,
  writeKeyPair,
} from './store.js';
export type { DefaultKeyPaths, DefaultKeyResult, RotateResult, WrittenKeyPair } from './store.js';
export { resolveSigningKey, loadVerifyKeys, isVerifyKeyConfigured, KEY_MODES, DEV_KEY_WARNING } from './resolve.js';
export type { KeyMode, ResolveSigningKeyOptions, ResolvedSigningKey, SigningKeySource, VerifyKeySources } from './resolve.js';
export { keyModeFlag, keyFlagOptions, signingKeyFromKeyFlags, checkProfileKeyFlags } from './flags.js';
export type { KeyFlags, KeyFlagPlace } from './flags.js';
export { publicJwk, jwkThumbprint, jwksEntry, buildJwks, parseJwks } from './jwk.js';
export type { PublicJwk, JwksEntry } from './jwk.js';
export { isStdBase64 } from './parse.js';
