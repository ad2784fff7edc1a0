import { verify } from 'node:crypto';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jcs, type JsonObject } from '../../src/canon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { buildTraceRecord, signTrace, verifyTraceRecord, verifyTraceText } from '../../src/trace/index.js';
import { V7_TRACE_TEXT, v7PublicKey, v7SigningKey, v7TraceInput } from './fixtures.js';

const v7 = (): JsonObject => JSON.parse(V7_TRACE_TEXT) as JsonObject;

/** An independent §6.2 check written directly against node:crypto. */
function referenceCheck(record: JsonObject, publicKey = v7PublicKey().publicKey): boolean {
  const { signature, ...rest } = record as JsonObject & { signature: { sig: string; signed_digest: string } };
  const digest = createHash('sha256').update(jcs(rest)).digest();
  return digest.toString('hex') === signature.signed_digest && verify(null, digest, publicKey, Buffer.from(signature.sig, 'base64'));
}

describe('trace verify: the V7 reference trace', () => {
  it('verifies with the V7 public key', () => {
    const result = verifyTraceText(V7_TRACE_TEXT, [v7PublicKey()]);
    expect(result).toMatchObject({ ok: true, signature_status: 'verified', trace_id: '98c069640be42974e73b8b6b', verdict: 'block' });
    expect(referenceCheck(v7())).toBe(true);
  });

  it('fails any single top-level field edit, the context fields included', () => {
    const original = v7();
    for (const field of Object.keys(original).filter((key) => key !== 'signature')) {
      const edited = v7();
      const value = edited[field];
      edited[field] = typeof value === 'number' ? value + 1 : typeof value === 'string' ? `${value}x` : { edited: true };
      const result = verifyTraceRecord(edited, [v7PublicKey()]);
      expect(result.ok, field).toBe(false);
      expect(result.error, field).toMatch(/signed_digest mismatch|not a trace record/);
    }
    for (const [field, value] of [
      ['context_ref_count', 3],
      ['context_set_digest', '0'.repeat(64)],
      ['context_evidence_mode', 'best_effort'],
      ['context_source', 'claims'],
    ] as const) {
      const edited = { ...v7(), [field]: value };
      expect(verifyTraceRecord(edited, [v7PublicKey()]).error, field).toBe('signed_digest mismatch');
    }
  });

  it('fails a nested edit and a removed field', () => {
    const nested = v7();
    ((nested['relationship'] as JsonObject)['entity_refs'] as JsonObject[])[0]!['id'] = 'agent.other';
    expect(verifyTraceRecord(nested, [v7PublicKey()]).error).toBe('signed_digest mismatch');
    const removed = v7();
    delete removed['violations'];
    expect(verifyTraceRecord(removed, [v7PublicKey()]).error).toBe('signed_digest mismatch');
  });
});

describe('trace verify: bad input fails with a specific message', () => {
  const keys = [v7PublicKey()];
  const withSignature = (patch: Record<string, unknown>): JsonObject => {
    const record = v7();
    record['signature'] = { ...(record['signature'] as JsonObject), ...patch } as JsonObject;
    return record;
  };

  it('tampered signature bytes', () => {
    const sig = Buffer.from((v7()['signature'] as JsonObject)['sig'] as string, 'base64');
    sig[0] = sig[0]! ^ 0xff;
    expect(verifyTraceRecord(withSignature({ sig: sig.toString('base64') }), keys).error).toBe('signature verification failed');
  });

  it('truncated file', () => {
    const result = verifyTraceText(V7_TRACE_TEXT.slice(0, 400), keys);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^parse trace: invalid JSON: /);
  });

  it('wrong key: key id mismatch, and a bad signature when no key_id names the key', () => {
    const other = generateSigningKey();
    expect(verifyTraceRecord(v7(), [other]).error).toBe('key id mismatch');
    expect(verifyTraceRecord(withSignature({ key_id: '' }), [other]).error).toBe('signature verification failed');
  });

  it('wrong alg', () => {
    expect(verifyTraceRecord(withSignature({ alg: 'rsa' }), keys).error).toBe('unsupported alg: rsa');
  });

  it('missing signature, missing signed_digest, malformed signature encoding', () => {
    const unsigned = v7();
    delete unsigned['signature'];
    expect(verifyTraceRecord(unsigned, keys).error).toBe('trace signature missing');
    expect(verifyTraceRecord(withSignature({ signed_digest: '' }), keys).error).toBe('missing signed_digest');
    expect(verifyTraceRecord(withSignature({ sig: 'abc' }), keys).error).toBe('decode signature: illegal base64 data');
    expect(verifyTraceRecord(withSignature({ sig: 'AAAA' }), keys).error).toBe('invalid signature length: 3');
    expect(verifyTraceRecord(withSignature({ alg: 5 }), keys).error).toBe('signature malformed: alg must be a string');
  });

  it('duplicate field, even when both copies are equal', () => {
    const duplicated = V7_TRACE_TEXT.replace('"verdict":"block"', '"verdict":"allow","verdict":"block"');
    expect(verifyTraceText(duplicated, keys).error).toBe('parse trace: duplicate key "verdict" at $');
    const nested = V7_TRACE_TEXT.replace('"alg":"ed25519"', '"alg":"ed25519","alg":"ed25519"');
    expect(verifyTraceText(nested, keys).error).toBe('parse trace: duplicate key "alg" at $.signature');
  });

  it('a field added after signing (which the reference would silently drop)', () => {
    const extended = { ...v7(), unknown_extra: 'x' };
    expect(verifyTraceRecord(extended, keys).error).toBe('signed_digest mismatch: unsigned fields added after signing: unknown_extra');
  });

  it('no verify key at all is a failure, never a skip', () => {
    expect(verifyTraceRecord(v7(), []).error).toBe('public key not configured');
  });

  it('a signed artifact that is not a trace', () => {
    expect(verifyTraceRecord({ ...v7(), schema_id: 'gait.gate.approval_token' }, keys).error).toBe(
      'not a trace record: schema_id "gait.gate.approval_token"',
    );
  });
});

describe('trace verify: ward-format records', () => {
  it('covers reason_codes, matched_rule and trace_context with the signature', () => {
    const input = {
      ...v7TraceInput(),
      traceContext: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1' },
    };
    const signed = signTrace(buildTraceRecord(input, 'ward'), v7SigningKey()) as JsonObject;
    expect(verifyTraceRecord(signed, [v7PublicKey()]).ok).toBe(true);
    expect(referenceCheck(signed)).toBe(true);
    for (const [field, value] of [
      ['reason_codes', ['approval_granted']],
      ['matched_rule', 'other'],
      ['trace_context', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b7-01' }],
    ] as const) {
      expect(verifyTraceRecord({ ...signed, [field]: value } as JsonObject, [v7PublicKey()]).error, field).toBe('signed_digest mismatch');
    }
  });

  it('verifies with a retired key from a ring that also holds the current key', () => {
    const retired = generateSigningKey();
    const current = generateSigningKey();
    const signed = signTrace(buildTraceRecord(v7TraceInput(), 'ward'), retired) as JsonObject;
    expect(verifyTraceRecord(signed, [current, retired])).toMatchObject({ ok: true, key_id: retired.keyId });
  });
});

describe('trace verify: input that cannot be canonicalized', () => {
  it('fails with the canonicalization error instead of throwing', () => {
    let deep: JsonObject = {};
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const result = verifyTraceRecord({ ...v7(), deep }, [v7PublicKey()]);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^canonicalize: nesting deeper than/);
  });
});
