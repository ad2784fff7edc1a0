import { formatRFC3339Nano, goTrim, toUTC, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { signDigestedJson, verifyDigestedJson } from '../trace/index.js';
import { decodeTokenObject, TokenInvalidError, tokenFields, type TokenFields } from './decode.js';

/*
 * The skeleton approval tokens, delegation tokens and approved-script entries share (`gate.md`
 * §7): decode the JSON object with the one decoder, normalize and refuse what normalization
 * refuses (`TokenInvalidError`, `<what> <problem>`), sign "JCS, then sha256, then Ed25519" over
 * the normalized token without `signature` (§6.2), and check that signature in the reference's
 * order. Each kind supplies only its fields, its rules and its payload; the order of its own
 * checks after the signature (or, for approved scripts, expiry before it) stays in its module.
 */

/** The members every kind starts with, and the signature object as given (undefined when absent). */
export interface Signed {
  schema_id: string;
  schema_version: string;
  created_at: GoTime;
  producer_version: string;
  signature: JsonValue | undefined;
}

export type TokenHeader = Pick<Signed, 'schema_id' | 'schema_version' | 'created_at' | 'producer_version'>;

export interface TokenKindSpec<T extends Signed> {
  /** `approval token`: the subject of every message about this kind. */
  readonly what: string;
  readonly schemaId: string;
  readonly schemaVersion: string;
  /** Read and normalize the fields (trims, lowercasing, sorting). */
  readonly decode: (obj: JsonObject, f: TokenFields) => T;
  /** The first rule a decoded token breaks after its schema (`token_id is required`), or undefined. */
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

/** The header as decoded: schema id and version trimmed, `producer_version` as given. */
export function decodeTokenHeader(obj: JsonObject, f: TokenFields): TokenHeader {
  return {
    schema_id: goTrim(f.string(obj, 'schema_id')),
    schema_version: goTrim(f.string(obj, 'schema_version')),
    created_at: f.time(obj, 'created_at'),
    producer_version: f.string(obj, 'producer_version'),
  };
}

/** The header of a token being minted now: the kind's schema, `created_at` = now in UTC. */
export function mintTokenHeader<T extends Signed>(kind: TokenKind<T>, now: GoTime, producerVersion: string): TokenHeader {
  return { schema_id: kind.schemaId, schema_version: kind.schemaVersion, created_at: toUTC(now), producer_version: producerVersion };
}

/** The header's members as Go marshals them: the first four members of every payload. */
export function tokenHeaderJson(token: TokenHeader): JsonObject {
  return {
    schema_id: token.schema_id,
    schema_version: token.schema_version,
    created_at: formatRFC3339Nano(token.created_at),
    producer_version: token.producer_version,
  };
}

function schemaProblem<T extends Signed>(kind: TokenKind<T>, token: T): string | undefined {
  if (token.schema_id !== kind.schemaId) return `schema_id must be ${kind.schemaId}`;
  if (token.schema_version !== kind.schemaVersion) return `schema_version must be ${kind.schemaVersion}`;
  return undefined;
}

/** Decode and normalize; throws `TokenInvalidError` for anything normalization refuses. */
export function normalizeToken<T extends Signed>(kind: TokenKind<T>, value: JsonValue): T {
  const token = decodeTokenObject(value, kind.what, kind.fields, kind.decode);
  const problem = schemaProblem(kind, token) ?? kind.problem(token);
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
