import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type JsonObject } from '../../src/canon/index.js';
import { generateSigningKey } from '../../src/keys/index.js';
import { buildTraceRecord, exportDsse, exportJws, signTrace, verifyDigestedJson, verifyTraceRecord, verifyTraceText, withoutSignature } from '../../src/trace/index.js';
import { REPO, tempDir, ward } from '../cli/run.js';
import { V7_TRACE_TEXT, v7PublicKey, v7TraceInput } from './fixtures.js';

const v7 = (): JsonObject => JSON.parse(V7_TRACE_TEXT) as JsonObject;
const withSignatureMember = (record: JsonObject, name: string, value: unknown): JsonObject => ({
  ...record,
  signature: { ...(record['signature'] as JsonObject), [name]: value } as JsonObject,
});

describe('the trace signature object holds exactly alg, key_id, sig, signed_digest', () => {
  it('the V7 reference trace (golden vector) still verifies', () => {
    expect(verifyTraceText(V7_TRACE_TEXT, [v7PublicKey()])).toMatchObject({ ok: true, trace_id: '98c069640be42974e73b8b6b' });
  });

  it('an unknown member inside signature fails verification, naming it', () => {
    const tampered = withSignatureMember(v7(), 'approved_by', 'ciso');
    const result = verifyTraceRecord(tampered, [v7PublicKey()]);
    expect(result).toMatchObject({ ok: false, signature_status: 'failed', trace_id: '98c069640be42974e73b8b6b' });
    expect(result.error).toBe('signature malformed: unknown member approved_by (not covered by the signature)');
    const two = verifyTraceRecord(withSignatureMember(withSignatureMember(v7(), 'zz', 1), 'approved_by', 'ciso'), [v7PublicKey()]);
    expect(two.error).toBe('signature malformed: unknown members approved_by, zz (not covered by the signature)');
    // Even an empty or null extra member.
    expect(verifyTraceRecord(withSignatureMember(v7(), 'note', null), [v7PublicKey()]).ok).toBe(false);
  });

  it('a Ward-signed trace verifies, and fails with an extra signature member', () => {
    const key = generateSigningKey();
    const trace = signTrace(buildTraceRecord(v7TraceInput(), 'ward'), key);
    expect(verifyTraceRecord(trace, [key]).ok).toBe(true);
    expect(Object.keys(trace['signature'] as JsonObject).sort()).toEqual(['alg', 'key_id', 'sig', 'signed_digest']);
    expect(verifyTraceRecord(withSignatureMember(trace, 'approved_by', 'ciso'), [key]).ok).toBe(false);
  });

  it('the shared construction stays lenient unless asked (runpack manifests use it as before)', () => {
    const record = v7();
    const signature = { ...(record['signature'] as JsonObject), approved_by: 'ciso' };
    expect(verifyDigestedJson(withoutSignature(record), signature, [v7PublicKey()]).ok).toBe(true);
    expect(verifyDigestedJson(withoutSignature(record), signature, [v7PublicKey()], { exactMembers: true }).ok).toBe(false);
  });

  it('JWS and DSSE keep working, and check the inner signature object too', () => {
    const wrapper = generateSigningKey();
    const keys = [wrapper, v7PublicKey()];
    expect(verifyTraceText(exportJws(v7(), wrapper), keys)).toMatchObject({ ok: true, format: 'jws' });
    expect(verifyTraceText(JSON.stringify(exportDsse(v7(), wrapper)), keys)).toMatchObject({ ok: true, format: 'dsse' });
    // A wrapper signed over a trace whose signature carries an extra claim: the wrapper verifies, the trace does not.
    const tampered = withSignatureMember(v7(), 'approved_by', 'ciso');
    const jws = verifyTraceText(exportJws(tampered, wrapper), keys);
    expect(jws).toMatchObject({ ok: false, format: 'jws' });
    expect(jws.error).toContain('approved_by');
    const dsse = verifyTraceText(JSON.stringify(exportDsse(tampered, wrapper)), keys);
    expect(dsse).toMatchObject({ ok: false, format: 'dsse' });
    expect(dsse.error).toContain('approved_by');
  });

  it('ward trace verify exits 2 for the tampered V7 trace and 0 for the original', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'trace_v7.json'), V7_TRACE_TEXT);
    writeFileSync(join(cwd, 'trace_bad.json'), JSON.stringify(withSignatureMember(v7(), 'approved_by', 'ciso'), null, 2));
    const key = join(REPO, 'keys', 'v7_public.key');
    expect(ward(['trace', 'verify', 'trace_v7.json', '--public-key', key], { cwd }).code).toBe(0);
    const bad = ward(['trace', 'verify', 'trace_bad.json', '--public-key', key, '--json'], { cwd });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, signature_status: 'failed', error: expect.stringContaining('approved_by') });
  });
});
