import { compactVerify, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { jcs, type JsonObject } from '../../src/canon/index.js';
import { generateSigningKey, publicJwk } from '../../src/keys/index.js';
import { exportDsse, exportJws, pae, TRACE_PAYLOAD_TYPE, verifyTraceText } from '../../src/trace/index.js';
import { V7_TRACE_TEXT, v7PublicKey } from './fixtures.js';

const v7 = (): JsonObject => JSON.parse(V7_TRACE_TEXT) as JsonObject;

describe('JWS export', () => {
  it('is a compact EdDSA JWS over the JCS bytes that jose verifies on its own', async () => {
    const key = generateSigningKey();
    const jws = exportJws(v7(), key);
    const { payload, protectedHeader } = await compactVerify(jws, await importJWK({ ...publicJwk(key), alg: 'EdDSA' }, 'EdDSA'), {
      algorithms: ['EdDSA'],
    });
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(Buffer.from(payload).toString('utf8')).toBe(jcs(v7()));
  });

  it('offers the fully specified Ed25519 alg (RFC 9864), which jose and ward trace verify accept', async () => {
    const key = generateSigningKey();
    const jws = exportJws(v7(), key, 'Ed25519');
    const { protectedHeader } = await compactVerify(jws, await importJWK({ ...publicJwk(key), alg: 'Ed25519' }, 'Ed25519'), {
      algorithms: ['Ed25519'],
    });
    expect(protectedHeader.alg).toBe('Ed25519');
    expect(verifyTraceText(jws, [key, v7PublicKey()])).toMatchObject({ ok: true, format: 'jws' });
  });

  it('verifies with ward trace verify (wrapper and inner signature) and fails when either is wrong', () => {
    const key = generateSigningKey();
    const jws = exportJws(v7(), key);
    expect(verifyTraceText(jws, [key, v7PublicKey()])).toMatchObject({ ok: true, format: 'jws', trace_id: '98c069640be42974e73b8b6b' });
    expect(verifyTraceText(jws, [v7PublicKey()]).error).toBe('jws: key id mismatch');
    expect(verifyTraceText(jws, [key]).error).toBe('key id mismatch');
    const [h, p, s] = jws.split('.');
    const tampered = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as JsonObject;
    tampered['verdict'] = 'allow';
    expect(verifyTraceText(`${h}.${Buffer.from(jcs(tampered)).toString('base64url')}.${s}`, [key, v7PublicKey()]).error).toBe(
      'jws: signature verification failed',
    );
    const hs256 = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');
    expect(verifyTraceText(`${hs256}.${p}.${s}`, [key]).error).toBe('jws: unsupported alg: HS256');
  });
});

describe('DSSE export', () => {
  it('uses the in-toto pre-authentication encoding', () => {
    expect(pae('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).toBe(
      'DSSEv1 29 http://example.com/HelloWorld 11 hello world',
    );
  });

  it('signs PAE(payloadType, JCS bytes) with the key_id as keyid, and verifies', () => {
    const key = generateSigningKey();
    const envelope = exportDsse(v7(), key);
    expect(envelope.payloadType).toBe(TRACE_PAYLOAD_TYPE);
    expect(envelope.signatures[0]!.keyid).toBe(key.keyId);
    expect(Buffer.from(envelope.payload, 'base64').toString('utf8')).toBe(jcs(v7()));
    expect(verifyTraceText(JSON.stringify(envelope), [key, v7PublicKey()])).toMatchObject({ ok: true, format: 'dsse' });
  });

  it('fails a tampered payload, a changed payloadType and an unknown keyid', () => {
    const key = generateSigningKey();
    const envelope = exportDsse(v7(), key);
    const edited = { ...v7(), verdict: 'allow' };
    const tampered = { ...envelope, payload: Buffer.from(jcs(edited)).toString('base64') };
    expect(verifyTraceText(JSON.stringify(tampered), [key, v7PublicKey()]).error).toBe('dsse: signature verification failed');
    expect(verifyTraceText(JSON.stringify({ ...envelope, payloadType: 'application/json' }), [key]).error).toBe(
      'dsse: unsupported payloadType: application/json',
    );
    expect(verifyTraceText(JSON.stringify(envelope), [generateSigningKey()]).error).toBe('dsse: key id mismatch');
  });
});
