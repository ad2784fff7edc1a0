import type { KeyObject } from 'node:crypto';

/** A public Ed25519 key that can check signatures. */
export interface VerifyKey {
  readonly publicKey: KeyObject;
  /** The 32 raw public-key bytes (what the reference key files hold and `key_id` hashes). */
  readonly publicRaw: Buffer;
  /** The reference `key_id`: lowercase hex sha256 of `publicRaw` (`gate.md` §6.2 step 4). */
  readonly keyId: string;
}

/** An Ed25519 key pair that signs traces and tokens. */
export interface SigningKey extends VerifyKey {
  readonly privateKey: KeyObject;
}

/** Where a key came from, for messages and `keys list`. */
export type KeyStatus = 'current' | 'retired' | 'explicit';

/** A verify key with its provenance, as held in a key ring. */
export interface RingKey extends VerifyKey {
  readonly status: KeyStatus;
  /** File the key was read from ("" when it came from an env var or was derived). */
  readonly path: string;
}
