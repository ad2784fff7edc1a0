import { describe, expect, it } from 'vitest';
import { diffPacks, inspectPack, packVerified, verifyPack } from '../../src/pack/index.js';
import { writeDeterministicZip } from '../../src/zip/index.js';
import { craftZip, entriesOf, S_IFLNK } from './craft.js';
import { demoPack, errorOf, TEST_KEY } from './helpers.js';

const keys = [TEST_KEY];

describe('pack readers refuse undeclared, aliased and symlink entries', () => {
  const pack = demoPack().bytes;
  const withEntries = (change: (e: ReturnType<typeof entriesOf>) => ReturnType<typeof entriesOf>) => craftZip(change(entriesOf(pack)));

  it('the untouched pack, re-crafted, verifies as signed', () => {
    const result = verifyPack(withEntries((e) => e), { keys, requireSignature: true });
    expect(result.signature_status).toBe('verified');
    expect(packVerified(result, true)).toBe(true);
  });

  it('an undeclared entry fails verification with a verified signature', () => {
    const result = verifyPack(withEntries((e) => [...e, { name: 'evidence/extra.json', data: Buffer.from('{}') }]), { keys, requireSignature: true });
    expect(result.undeclared_files).toEqual(['evidence/extra.json']);
    expect(result.signature_status).toBe('failed');
    expect(result.signature_errors).toEqual(['signed manifest does not declare: evidence/extra.json']);
    expect(packVerified(result, true)).toBe(false);
  });

  it('inspect and diff refuse a pack with an undeclared entry too', () => {
    const bytes = withEntries((e) => [...e, { name: 'evidence/extra.json', data: Buffer.from('{}') }]);
    expect(errorOf(() => inspectPack(bytes))).toMatchObject({ code: 'ERR_PACK_VERIFY_FAILED', message: 'undeclared pack entries: evidence/extra.json', exitCode: 2 });
    expect(errorOf(() => diffPacks(pack, bytes)).code).toBe('ERR_PACK_VERIFY_FAILED');
    expect(diffPacks(pack, withEntries((e) => e)).summary.changed).toBe(false);
  });

  it('a case alias of a declared file is refused by every reader', () => {
    const bytes = withEntries((e) => [...e, { name: 'RUN_PAYLOAD.json', data: Buffer.from('{}') }]);
    expect(errorOf(() => verifyPack(bytes, { keys }))).toMatchObject({
      code: 'ERR_ZIP_DUPLICATE_ENTRY',
      message: 'zip contains entries that differ only in case or Unicode form: RUN_PAYLOAD.json = run_payload.json',
      exitCode: 2,
    });
    expect(errorOf(() => inspectPack(bytes)).code).toBe('ERR_ZIP_DUPLICATE_ENTRY');
  });

  it('a symlink entry is refused by every reader', () => {
    const bytes = withEntries((e) => [...e, { name: 'evidence/key', data: Buffer.from('/home/user/.ssh/id_ed25519'), mode: S_IFLNK | 0o777 }]);
    expect(errorOf(() => verifyPack(bytes, { keys })).code).toBe('ERR_ZIP_UNSAFE_PATH');
    expect(errorOf(() => inspectPack(bytes)).code).toBe('ERR_ZIP_UNSAFE_PATH');
  });

  it('a manifest name spelled another way is refused, not treated as missing', () => {
    const bytes = withEntries((e) => e.map((x) => (x.name === 'pack_manifest.json' ? { ...x, name: './pack_manifest.json' } : x)));
    expect(errorOf(() => verifyPack(bytes, { keys })).code).toBe('ERR_ZIP_UNSAFE_PATH');
  });

  it('Ward never writes what its readers refuse', () => {
    const data = Buffer.from('x');
    for (const path of ['./a', 'a//b', 'a\\b', 'dir/', 're\u0301f', ' a', 'a\u0000b']) {
      expect(errorOf(() => writeDeterministicZip([{ path, data }])).code).toBe('ERR_ZIP_UNSAFE_PATH');
    }
    expect(errorOf(() => writeDeterministicZip([{ path: 'run.json', data }, { path: 'RUN.JSON', data }])).code).toBe('ERR_ZIP_DUPLICATE_ENTRY');
  });

  it('a symlink is refused whatever creator the header claims, and so is an MS-DOS directory', () => {
    for (const creator of [0, 10, 19]) {
      const bytes = withEntries((e) => [...e, { name: 'evidence/link', data: Buffer.from('/etc'), mode: S_IFLNK | 0o777, creator }]);
      expect(errorOf(() => verifyPack(bytes, { keys })).message).toBe('zip entry "evidence/link": a symbolic link (only regular files are allowed)');
    }
    const dosDir = withEntries((e) => [...e, { name: 'evidence/d', data: Buffer.alloc(0), mode: 0, creator: 0, dosAttributes: 0x10 }]);
    expect(errorOf(() => verifyPack(dosDir, { keys })).message).toBe('zip entry "evidence/d": a directory (only regular files are allowed)');
    const dosFile = withEntries((e) => e.map((x) => ({ ...x, mode: 0, creator: 0, dosAttributes: 0x20 })));
    expect(packVerified(verifyPack(dosFile, { keys, requireSignature: true }), true)).toBe(true);
  });

  it('an entry with a second name (Info-ZIP Unicode Path extra field) is refused', () => {
    const target = Buffer.from('../../.bashrc');
    const field = Buffer.alloc(4 + 5 + target.length);
    field.writeUInt16LE(0x7075, 0);
    field.writeUInt16LE(5 + target.length, 2);
    field.writeUInt8(1, 4);
    target.copy(field, 9);
    const bytes = withEntries((e) => e.map((x) => (x.name === 'run_payload.json' ? { ...x, extra: field } : x)));
    expect(errorOf(() => verifyPack(bytes, { keys }))).toMatchObject({ code: 'ERR_ZIP_UNSAFE_PATH', message: 'zip entry "run_payload.json": has a second name (Unicode Path extra field)' });
  });

  it('bytes that belong to no entry (prepended, between entries) are refused', () => {
    const prefixed = craftZip(entriesOf(pack), { prefix: Buffer.from('#!/bin/sh\necho polyglot\n') });
    expect(errorOf(() => verifyPack(prefixed, { keys })).message).toBe('zip has 24 bytes that belong to no entry before context_envelope.json');
    const gap = withEntries((e) => e.map((x, i) => (i === 0 ? { ...x, gapAfter: Buffer.from('hidden') } : x)));
    expect(errorOf(() => verifyPack(gap, { keys }))).toMatchObject({ code: 'ERR_ZIP_INVALID', exitCode: 2 });
  });
});
