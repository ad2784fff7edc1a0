import { sign, verify } from 'node:crypto';
import { jwkThumbprint, type SigningKey, type VerifyKey } from '../keys/index.js';
import { isJsonObject, jcs, parseStrictJson, type JsonObject, type JsonValue } from '../canon/index.js';

/**
 * Wrappers that let standard tooling check a trace: a compact JWS (RFC 7515; alg `EdDSA` per
 * RFC 8037, or the fully specified `Ed25519` of RFC 9864, same signature bytes)
 * and a DSSE envelope (in-toto). Both carry the JCS bytes of the *whole* signed trace, inner
 * `signature` included, so unwrapping yields the original artifact and its own signature can be
 * checked too. The wrapper signature is made directly over the wrapper's signing input (not over
 * a digest), as those specifications require.
 */
export const TRACE_PAYLOAD_TYPE = 'application/vnd.ward.trace+json';
export const JWS_ALGS = ['EdDSA', 'Ed25519'] as const;
export type JwsAlg = (typeof JWS_ALGS)[number];

export type WrapperCheck = { ok: true; record: JsonValue; keyId: string } | { ok: false; error: string };

export function exportJws(record: JsonObject, key: SigningKey, alg: JwsAlg = 'EdDSA'): string {
  const header = { alg, kid: jwkThumbprint(key), cty: TRACE_PAYLOAD_TYPE };
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(jcs(record))}`;
  return `${signingInput}.${sign(null, Buffer.from(signingInput, 'ascii'), key.privateKey).toString('base64url')}`;
}

const COMPACT_JWS = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]+)$/;

export function isCompactJws(text: string): boolean {
  return COMPACT_JWS.test(text.trim());
}

export function verifyJws(text: string, keys: readonly VerifyKey[]): WrapperCheck {
  const parts = COMPACT_JWS.exec(text.trim());
  if (!parts) return { ok: false, error: 'jws: not a compact serialization' };
  const [, headerPart, payloadPart, sigPart] = parts as unknown as [string, string, string, string];
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(headerPart, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, error: 'jws: header is not JSON' };
  }
  if (!isJsonObject(header)) return { ok: false, error: 'jws: header is not an object' };
  if (!(JWS_ALGS as readonly unknown[]).includes(header['alg'])) return { ok: false, error: `jws: unsupported alg: ${String(header['alg'])}` };
  if (header['crit'] !== undefined) return { ok: false, error: 'jws: unsupported crit header' };
  if (keys.length === 0) return { ok: false, error: 'public key not configured' };
  const kid = header['kid'];
  const candidates = typeof kid === 'string' ? keys.filter((key) => jwkThumbprint(key) === kid) : keys;
  if (candidates.length === 0) return { ok: false, error: 'jws: key id mismatch' };
  const signature = Buffer.from(sigPart, 'base64url');
  const input = Buffer.from(`${headerPart}.${payloadPart}`, 'ascii');
  const signer = candidates.find((key) => signature.length === 64 && verify(null, input, key.publicKey, signature));
  if (!signer) return { ok: false, error: 'jws: signature verification failed' };
  return parsePayload(Buffer.from(payloadPart, 'base64url'), signer.keyId, 'jws');
}

export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** DSSE pre-authentication encoding: `DSSEv1 SP len(type) SP type SP len(body) SP body`. */
export function pae(payloadType: string, body: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

export function exportDsse(record: JsonObject, key: SigningKey): DsseEnvelope {
  const body = Buffer.from(jcs(record), 'utf8');
  const sig = sign(null, pae(TRACE_PAYLOAD_TYPE, body), key.privateKey).toString('base64');
  return { payloadType: TRACE_PAYLOAD_TYPE, payload: body.toString('base64'), signatures: [{ keyid: key.keyId, sig }] };
}

export function isDsseEnvelope(value: JsonValue): boolean {
  return isJsonObject(value) && 'payloadType' in value && 'signatures' in value;
}

/** Accept the envelope when any signature verifies under a key whose key_id matches its keyid. */
export function verifyDsse(envelope: JsonValue, keys: readonly VerifyKey[]): WrapperCheck {
  if (!isJsonObject(envelope)) return { ok: false, error: 'dsse: not an object' };
  const { payloadType, payload, signatures } = envelope;
  if (payloadType !== TRACE_PAYLOAD_TYPE) return { ok: false, error: `dsse: unsupported payloadType: ${String(payloadType)}` };
  if (typeof payload !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(payload)) return { ok: false, error: 'dsse: payload is not base64' };
  if (!Array.isArray(signatures) || signatures.length === 0) return { ok: false, error: 'dsse: no signatures' };
  if (keys.length === 0) return { ok: false, error: 'public key not configured' };
  const body = Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
  const message = pae(payloadType, body);
  let keyMatched = false;
  for (const entry of signatures) {
    if (!isJsonObject(entry) || typeof entry['sig'] !== 'string') continue;
    const keyid = typeof entry['keyid'] === 'string' ? entry['keyid'] : '';
    const raw = Buffer.from(entry['sig'], 'base64');
    for (const key of keys) {
      if (keyid !== '' && keyid !== key.keyId) continue;
      keyMatched = true;
      if (raw.length === 64 && verify(null, message, key.publicKey, raw)) return parsePayload(body, key.keyId, 'dsse');
    }
  }
  return { ok: false, error: keyMatched ? 'dsse: signature verification failed' : 'dsse: key id mismatch' };
}

function parsePayload(bytes: Buffer, keyId: string, what: string): WrapperCheck {
  try {
    return { ok: true, record: parseStrictJson(bytes.toString('utf8')), keyId };
  } catch (err) {
    return { ok: false, error: `${what}: payload: ${(err as Error).message}` };
  }
}

function b64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
