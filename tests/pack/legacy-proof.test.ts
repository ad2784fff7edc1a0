import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildRunPack, upgradePack, verifyPack, verifyProofRecords } from '../../src/pack/index.js';
import { openZip } from '../../src/zip/index.js';
import { ward, workdir } from './cli.js';
import { referenceChainProblems } from './gait-interop.js';
import { errorOf, OTHER_KEY, record, rezip, TEST_KEY } from './helpers.js';

/** A run pack as Ward built it before 2026-11-28: the first proof record hashed with `integrity: {}`. */
function legacyPack(signed = true): Buffer {
  const runpack = record({ signingKey: TEST_KEY }).bytes;
  return buildRunPack(runpack, { producerVersion: '0.1.0', signingKey: signed ? TEST_KEY : undefined, proofHashForm: 'legacy' }).bytes;
}

function file(bytes: Buffer, name: string): Buffer {
  const zip = openZip(bytes);
  return zip.read(zip.get(name)!);
}

describe('packs with the legacy proof-record hash', () => {
  it('are really in the old form: the reference rule rejects their first record, and only it', () => {
    expect(referenceChainProblems(file(legacyPack(), 'proof_records.jsonl'))).toEqual(['line 1: record_hash']);
  });

  it('still verify, flagged as legacy, with their signatures', () => {
    const result = verifyPack(legacyPack(), { keys: [TEST_KEY], requireSignature: true });
    expect(result).toMatchObject({ legacy_proof_records: true, signature_status: 'verified', proof_records_verified: 3 });
    expect(result.signature_errors).toBeUndefined();
  });

  it('still fail when the legacy chain is tampered with', () => {
    const tampered = rezip(legacyPack(false), (files) => {
      const lines = files.get('proof_records.jsonl')!.toString().split('\n');
      lines[0] = lines[0]!.replace('"entry_size_bytes":', '"entry_size_bytes":1');
      files.set('proof_records.jsonl', Buffer.from(lines.join('\n')));
    });
    // The manifest hash of proof_records.jsonl no longer matches, so the chain is not even read.
    expect(verifyPack(tampered).hash_mismatches?.map((m) => m.path)).toEqual(['proof_records.jsonl']);
  });

  it('a record hashed in neither form is refused', () => {
    const runpack = record({ signingKey: TEST_KEY }).bytes;
    const pack = buildRunPack(runpack, { producerVersion: '0.1.0' }).bytes;
    const lines = file(pack, 'proof_records.jsonl').toString().split('\n');
    const first = JSON.parse(lines[0]!) as Record<string, any>;
    first['integrity']['record_hash'] = `sha256:${'0'.repeat(64)}`;
    lines[0] = JSON.stringify(first);
    // verifyProofRecords is reached only when the manifest vouches for the file: check it directly.
    const contents = (JSON.parse(file(pack, 'pack_manifest.json').toString()) as { contents: { path: string; sha256: string; type: string }[] }).contents;
    expect(errorOf(() => verifyProofRecords(Buffer.from(lines.join('\n')), contents, undefined, false)).message).toBe('proof_records.jsonl: line 1 record_hash mismatch');
  });

  it('ward pack verify says so and names the upgrade', async () => {
    const cwd = workdir();
    const path = join(cwd, 'old.pack.zip');
    writeFileSync(path, legacyPack(false));
    const run = await ward(['pack', 'verify', path, '--json'], cwd);
    expect(run.code).toBe(0);
    expect(run.json['verify']['legacy_proof_records']).toBe(true);
    expect(run.json['warnings']).toEqual([expect.stringContaining('legacy form')]);
    expect(run.json['next_commands']).toEqual([`ward pack upgrade ${path}`]);
    const text = await ward(['pack', 'verify', path], cwd);
    expect(text.stdout).toMatch(/legacy form/);
  });
});

describe('pack upgrade', () => {
  it('writes a reference-compatible copy with the same payload files, signed again', () => {
    const legacy = legacyPack();
    const upgraded = upgradePack(legacy, { keys: [TEST_KEY], signingKey: TEST_KEY });
    expect(upgraded.original.legacy_proof_records).toBe(true);
    expect(referenceChainProblems(file(upgraded.bytes, 'proof_records.jsonl'))).toEqual([]);
    for (const name of ['run_payload.json', 'source/runpack.zip', 'context_envelope.json']) {
      expect(file(upgraded.bytes, name).equals(file(legacy, name)), name).toBe(true);
    }
    const verified = verifyPack(upgraded.bytes, { keys: [TEST_KEY], requireSignature: true });
    expect(verified.legacy_proof_records).toBeUndefined();
    expect(verified.signature_status).toBe('verified');
    expect(upgraded.manifest.pack_id).not.toBe(upgraded.original.pack_id);
    expect(upgraded.manifest.producer_version).toBe('0.1.0');
  });

  it('keeps an unsigned pack unsigned', () => {
    const upgraded = upgradePack(legacyPack(false), { signingKey: TEST_KEY });
    expect(upgraded.manifest.signatures).toBeUndefined();
    expect(verifyPack(upgraded.bytes).signature_status).toBe('missing');
  });

  it('refuses a pack whose signature it cannot check, or that does not verify', () => {
    expect(errorOf(() => upgradePack(legacyPack(), { signingKey: TEST_KEY })).message).toMatch(/signature is skipped/);
    expect(errorOf(() => upgradePack(legacyPack(), { keys: [OTHER_KEY], signingKey: TEST_KEY })).code).toBe('ERR_PACK_VERIFY_FAILED');
    const tampered = rezip(legacyPack(false), (files) => files.set('run_payload.json', Buffer.from('{}')));
    expect(errorOf(() => upgradePack(tampered, { signingKey: TEST_KEY })).message).toMatch(/does not verify/);
    expect(errorOf(() => upgradePack(record({ signingKey: TEST_KEY }).bytes, { signingKey: TEST_KEY })).message).toMatch(/not a PackSpec pack/);
  });

  it('ward pack upgrade writes the copy, which the reference rule and ward pack verify accept', async () => {
    const cwd = workdir();
    const path = join(cwd, 'old.pack.zip');
    writeFileSync(path, legacyPack(false));
    const out = join(cwd, 'new.pack.zip');
    const run = await ward(['pack', 'upgrade', path, '--out', out, '--json'], cwd);
    expect(run.code, run.stdout).toBe(0);
    expect(run.json).toMatchObject({ ok: true, operation: 'upgrade', path: './new.pack.zip', upgrade: { from_legacy_proof_records: true, signature_status: 'missing' } });
    expect(referenceChainProblems(file(readFileSync(out), 'proof_records.jsonl'))).toEqual([]);
    const verify = await ward(['pack', 'verify', out, '--json'], cwd);
    expect(verify.code).toBe(0);
    expect(verify.json['verify']['pack_id']).toBe(run.json['pack_id']);
    expect(verify.json['warnings']).toBeUndefined();
  });
});
