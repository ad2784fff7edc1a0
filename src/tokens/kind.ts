import type { JsonObject, JsonValue } from '../canon/index.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { signDigestedJson, verifyDigestedJson } from '../trace/sign.js';
import { decodeTokenObject, TokenInvalidError, tokenFields, type TokenFields } from './decode.js';

/*
 * The skeleton approval tokens, delegation tokens and approved-script entries share (`gate.md`
 * §7): decode the JSON object with the one decoder, normalize and refuse what normalization
 * refuses (`TokenInvalidError`, `<what> <problem>`), sign "JCS, then sha256, then Ed25519" over
 * the normalized token without `signature` (§6.2), and check that signature in the reference's
 * order. Each kind supplies only its fields, its rules and its payload; the order of its own
 * checks after the signature (or, for approved scripts, expiry before it) stays in its module.
 */

/** What a token carries besides its fields: the signature object as given (undefined when absent). */
export interface Signed {
  signature: JsonValue | undefined;
}

export interface TokenKindSpec<T extends Signed> {
  /** `approval token`: the subject of every message about this kind. */
  readonly what: string;
  /** Read and normalize the fields (trims, lowercasing, sorting). */
  readonly decode: (obj: JsonObject, f: TokenFields) => T;
  /** The first rule a decoded token breaks (`token_id is required`), or undefined. */
  readonly problem: (token: T) => string | undefined;
  /** The signed payload: the normalized token without `signature`, as Go marshals it. */
  readonly payload: (token: T) => JsonObject;
}

export interface TokenKind<T extends Signed> extends TokenKindSpec<T> {
  readonly fields: TokenFields;
}

export function tokenKind<T extends Signed>(spec: TokenKindSpec<T>): TokenKind<T> {
  return { ...spec, fields: tokenFields(spec.what) };
}

/** Decode and normalize; throws `TokenInvalidError` for anything normalization refuses. */
export function normalizeToken<T extends Signed>(kind: TokenKind<T>, value: JsonValue): T {
  const token = decodeTokenObject(value, kind.what, kind.fields, kind.decode);
  const problem = kind.problem(token);
  if (problem !== undefined) throw new TokenInvalidError(`${kind.what} ${problem}`);
  return token;
}

/** The token as written: its payload plus the signature over it. */
export function signToken<T extends Signed>(kind: TokenKind<T>, token: T, key: SigningKey): JsonObject {
  const payload = kind.payload(token);
  return { ...payload, signature: signDigestedJson(payload, key) };
}

export type TokenSignatureCheck = { ok: true; keyId: string } | { ok: false; kind: 'missing' | 'invalid'; message: string };

/**
 * The signature checks in reference order (§7.1 steps 2–3): no verify key is an invalid signature
 * (never a skip), then a missing signature, then the §6.2 check over the normalized payload; on
 * success, the key that verified (distinct approvers need distinct keys). The `signature` object
 * may hold only the four members of the construction: anything else would be an unsigned claim
 * beside signed data, so it is an invalid signature (Ward is stricter than the reference here,
 * docs/compatibility.md).
 */
export function verifyTokenSignature<T extends Signed>(kind: TokenKind<T>, token: T, keys: readonly VerifyKey[]): TokenSignatureCheck {
  if (keys.length === 0) return { ok: false, kind: 'invalid', message: 'verify key not configured' };
  if (token.signature === undefined || token.signature === null) return { ok: false, kind: 'missing', message: 'signature missing' };
  const check = verifyDigestedJson(kind.payload(token), token.signature, keys, { exactMembers: true });
  return check.ok ? { ok: true, keyId: check.keyId } : { ok: false, kind: 'invalid', message: check.message };
}

/** The reason codes a kind reports for the shared steps. */
export interface OpenCodes<C extends string> {
  invalid: C;
  signatureMissing: C;
  signatureInvalid: C;
}

export type Opened<T, C extends string> =
  | { ok: true; token: T; keyId: string }
  | { ok: false; code: C; message: string; token: T | undefined };

/** The first steps of validation: normalize (`invalid`), then the signature (`missing`, `invalid`). */
export function openToken<T extends Signed, C extends string>(
  kind: TokenKind<T>,
  value: JsonValue,
  keys: readonly VerifyKey[],
  codes: OpenCodes<C>,
): Opened<T, C> {
  let token: T;
  try {
    token = normalizeToken(kind, value);
  } catch (err) {
    if (err instanceof TokenInvalidError) return { ok: false, code: codes.invalid, message: err.message, token: undefined };
    throw err;
  }
  return checkTokenSignature(kind, token, keys, codes);
}

/** The signature step alone, for a token normalized earlier. */
export function checkTokenSignature<T extends Signed, C extends string>(
  kind: TokenKind<T>,
  token: T,
  keys: readonly VerifyKey[],
  codes: OpenCodes<C>,
): Opened<T, C> {
  const check = verifyTokenSignature(kind, token, keys);
  if (check.ok) return { ok: true, token, keyId: check.keyId };
  return { ok: false, code: check.kind === 'missing' ? codes.signatureMissing : codes.signatureInvalid, message: check.message, token };
}
