import { describe, expect, it } from 'vitest';
import { digestJcs, sha256Hex } from '../../src/canon/index.js';
import { buildRunPack, computePackId, packVerified, parsePackManifest, verifyPack } from '../../src/pack/index.js';
import { contextSetDigest, parseContextEnvelope } from '../../src/context/index.js';
import { openZip } from '../../src/zip/index.js';
import { demoPack, errorOf, json, OTHER_KEY, record, rezip, TEST_KEY } from './helpers.js';

function entry(bytes: Buffer, name: string): Buffer {
  const zip = openZip(bytes);
  return zip.read(zip.get(name)!);
}

describe('pack build (run)', () => {
  it('gives the same bytes and pack_id for the same runpack every time', () => {
    const a = demoPack();
    const b = demoPack();
    expect(a.bytes.equals(b.bytes)).toBe(true);
    expect(a.manifest.pack_id).toBe(b.manifest.pack_id);
  });

  it('writes the PackSpec v1 files, listed with their hashes and types', () => {
    const { bytes, manifest } = demoPack();
    expect(openZip(bytes).entries.map((e) => e.name)).toEqual([
      'context_envelope.json',
      'pack_manifest.json',
      'proof_records.jsonl',
      'run_payload.json',
      'source/runpack.zip',
    ]);
    expect(manifest.contents.map((c) => [c.path, c.type])).toEqual([
      ['context_envelope.json', 'json'],
      ['proof_records.jsonl', 'jsonl'],
      ['run_payload.json', 'json'],
      ['source/runpack.zip', 'zip'],
    ]);
    for (const c of manifest.contents) expect(c.sha256).toBe(sha256Hex(entry(bytes, c.path)));
    expect(manifest).toMatchObject({ created_at: '1980-01-01T00:00:00Z', pack_type: 'run', source_ref: 'run_demo', producer_version: '0.1.0' });
  });

  it('derives pack_id from the manifest with an empty pack_id and no signatures', () => {
    const { manifest } = demoPack();
    const { signatures: _s, ...body } = manifest;
    expect(manifest.pack_id).toBe(digestJcs({ ...body, pack_id: '' }));
    expect(computePackId(manifest)).toBe(manifest.pack_id);
  });

  it('summarizes the runpack in run_payload.json with the context summary', () => {
    const { bytes, runpack } = demoPack();
    const payload = JSON.parse(entry(bytes, 'run_payload.json').toString());
    expect(payload).toEqual({
      schema_id: 'gait.pack.run',
      schema_version: '1.0.0',
      created_at: '2026-02-05T10:00:00Z',
      run_id: 'run_demo',
      capture_mode: 'reference',
      manifest_digest: runpack.manifest.manifest_digest,
      intents_count: 3,
      results_count: 3,
      refs_count: 3,
      context_ref_count: 3,
      // run record always writes the resolved evidence mode into refs.json, as the reference does
      context_evidence_mode: 'best_effort',
      context_privacy_mode: 'reference',
    });
  });

  it('derives context_envelope.json from the receipts with a reproducible context_set_digest', () => {
    const { bytes } = demoPack();
    const envelope = parseContextEnvelope(entry(bytes, 'context_envelope.json'));
    expect(envelope.context_set_id).toBe('run_demo');
    expect(envelope.records).toHaveLength(3);
    expect(envelope.context_set_digest).toBe(contextSetDigest(envelope.records));
  });

  it('chains one proof record per payload file, signed with the pack key', () => {
    const { bytes } = demoPack();
    const lines = entry(bytes, 'proof_records.jsonl').toString().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.event.entry_path)).toEqual(['context_envelope.json', 'run_payload.json', 'source/runpack.zip']);
    expect(lines[0].integrity.previous_record_hash).toBeUndefined();
    expect(lines[1].integrity.previous_record_hash).toBe(lines[0].integrity.record_hash);
    expect(lines[0].record_id).toMatch(/^prf-1980-01-01T00:00:00Z-[0-9a-f]{8}$/);
    expect(lines[0].event.entry_permissions).toBe(420);
    expect(lines[0].integrity.signing_key_id).toBe(TEST_KEY.keyId);
    expect(entry(bytes, 'proof_records.jsonl').toString().endsWith('\n')).toBe(false);
  });

  it('refuses to build from a runpack whose refs digest does not match its receipts', () => {
    const runpack = record({ unsafeContextRaw: true }).bytes;
    const tampered = rezip(runpack, (files) => {
      const refs = JSON.parse(files.get('refs.json')!.toString());
      refs.context_set_digest = 'a'.repeat(64);
      files.set('refs.json', json(refs));
    });
    expect(errorOf(() => buildRunPack(tampered, { producerVersion: '0.1.0' })).message).toMatch(/hash mismatch/);
  });
});

describe('pack verify', () => {
  const good = demoPack();
  const keys = [TEST_KEY];

  it('verifies an intact signed pack, proof chain included', () => {
    const result = verifyPack(good.bytes, { keys, requireSignature: true });
    expect(result).toEqual({
      pack_id: good.manifest.pack_id,
      pack_type: 'run',
      source_ref: 'run_demo',
      files_checked: 4,
      proof_records_verified: 3,
      signature_status: 'verified',
      signatures_total: 1,
      signatures_valid: 1,
    });
    expect(packVerified(result, true)).toBe(true);
  });

  it('reports skipped without a key and missing when unsigned', () => {
    expect(verifyPack(good.bytes).signature_status).toBe('skipped');
    const unsigned = demoPack({ signed: false });
    expect(verifyPack(unsigned.bytes).signature_status).toBe('missing');
    expect(packVerified(verifyPack(unsigned.bytes), false)).toBe(true);
    // Required: unsigned proof records force `failed` (§1.7 step 9).
    const result = verifyPack(unsigned.bytes, { keys, requireSignature: true });
    expect(result.signature_status).toBe('failed');
    expect(result.signature_errors).toContain('manifest has no signatures');
    expect(result.signature_errors).toContain('proof_records line 1 missing signature');
    expect(packVerified(result, true)).toBe(false);
  });

  it('fails a signature made by another key', () => {
    const result = verifyPack(good.bytes, { keys: [OTHER_KEY] });
    expect(result.signature_status).toBe('failed');
    expect(packVerified(result, false)).toBe(false);
  });

  it('reports a tampered entry as a hash mismatch', () => {
    const tampered = rezip(good.bytes, (f) => f.set('run_payload.json', Buffer.concat([f.get('run_payload.json')!, Buffer.from(' ')])));
    const result = verifyPack(tampered, { keys });
    expect(result.hash_mismatches?.map((m) => m.path)).toEqual(['run_payload.json']);
    expect(packVerified(result, false)).toBe(false);
  });

  it('reports extra entries as undeclared and removed ones as missing', () => {
    const extra = rezip(good.bytes, (f) => f.set('evil.sh', Buffer.from('#!/bin/sh')));
    expect(verifyPack(extra, { keys }).undeclared_files).toEqual(['evil.sh']);
    const missing = rezip(good.bytes, (f) => f.delete('context_envelope.json'));
    const result = verifyPack(missing, { keys });
    expect(result.missing_files).toEqual(['context_envelope.json']);
    expect(packVerified(result, false)).toBe(false);
  });

  it('rejects a manifest with unknown fields, and a pack_id that does not match', () => {
    const unknown = rezip(good.bytes, (f) => {
      const m = JSON.parse(f.get('pack_manifest.json')!.toString());
      m.extra = true;
      f.set('pack_manifest.json', json(m));
    });
    expect(errorOf(() => verifyPack(unknown))).toMatchObject({ exitCode: 2, message: 'parse manifest: json: unknown field "extra"' });
    const renamed = rezip(good.bytes, (f) => {
      const m = JSON.parse(f.get('pack_manifest.json')!.toString());
      m.source_ref = 'run_other';
      f.set('pack_manifest.json', json(m));
    });
    expect(errorOf(() => verifyPack(renamed))).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^pack_id mismatch: expected=/) });
  });

  it('rejects duplicate keys in the manifest', () => {
    const dup = rezip(good.bytes, (f) => {
      const text = f.get('pack_manifest.json')!.toString();
      f.set('pack_manifest.json', Buffer.from(text.replace('{', '{"pack_type":"job",')));
    });
    expect(errorOf(() => verifyPack(dup)).exitCode).toBe(2);
  });

  it('rejects truncated archives and non-zips with exit 2', () => {
    expect(errorOf(() => verifyPack(good.bytes.subarray(0, good.bytes.length - 30)))).toMatchObject({ code: 'ERR_ZIP_INVALID', exitCode: 2 });
  });

  it('rejects a broken proof chain even when the manifest is re-hashed to match', () => {
    const forged = rezip(good.bytes, (f) => {
      const lines = f.get('proof_records.jsonl')!.toString().split('\n');
      lines.reverse();
      f.set('proof_records.jsonl', Buffer.from(lines.join('\n')));
      const m = JSON.parse(f.get('pack_manifest.json')!.toString());
      m.contents.find((c: { path: string }) => c.path === 'proof_records.jsonl').sha256 = sha256Hex(f.get('proof_records.jsonl')!);
      delete m.signatures;
      m.pack_id = computePackId({ ...m, pack_id: '' });
      f.set('pack_manifest.json', json(m));
    });
    expect(errorOf(() => verifyPack(forged))).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^proof_records.jsonl: line 1 /) });
  });

  it('rejects a payload that misstates its embedded runpack, even with consistent hashes', () => {
    const forged = rezip(good.bytes, (f) => {
      const payload = JSON.parse(f.get('run_payload.json')!.toString());
      payload.intents_count = 2;
      f.set('run_payload.json', json(payload));
      const m = JSON.parse(f.get('pack_manifest.json')!.toString());
      m.contents.find((c: { path: string }) => c.path === 'run_payload.json').sha256 = sha256Hex(f.get('run_payload.json')!);
      m.contents = m.contents.filter((c: { path: string }) => c.path !== 'proof_records.jsonl');
      f.delete('proof_records.jsonl');
      delete m.signatures;
      m.pack_id = computePackId({ ...m, pack_id: '' });
      f.set('pack_manifest.json', json(m));
    });
    expect(errorOf(() => verifyPack(forged))).toMatchObject({ exitCode: 2, message: 'run payload intents_count does not match source/runpack.zip' });
  });

  it('verifies a bare runpack as a legacy run pack', () => {
    const runpack = record({ signingKey: TEST_KEY });
    const result = verifyPack(runpack.bytes, { keys });
    expect(result).toMatchObject({ legacy_type: 'runpack', pack_id: runpack.manifest.manifest_digest, signature_status: 'verified' });
  });

  it('says which archives are not packs (missing manifest, exit 6)', () => {
    const notPack = rezip(good.bytes, (f) => f.delete('pack_manifest.json'));
    expect(errorOf(() => verifyPack(notPack))).toMatchObject({ exitCode: 6, message: 'missing pack_manifest.json' });
  });

  it('parses its own manifest strictly without loss', () => {
    const zip = openZip(good.bytes);
    expect(parsePackManifest(zip.read(zip.get('pack_manifest.json')!))).toEqual(good.manifest);
  });
});
