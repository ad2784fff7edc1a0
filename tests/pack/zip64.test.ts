import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openZip, openZipFile, writeDeterministicZip, writeDeterministicZipFile, ZipStreamWriter } from '../../src/zip/index.js';
import { errorOf } from './helpers.js';

const EOCD = 22;
const LOCATOR = 20;
const ZIP64_EOCD = 56;
const many = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `e/${String(i).padStart(6, '0')}.json`, data: Buffer.from(`{"n":${i}}`) }));
const LIMITS = { limits: { maxEntries: 1_000_000 } };

describe('ZIP64: archives with 65,535 entries or more', () => {
  // 65,535 records is the first count that does not fit the classic end record (0xffff is its marker).
  const files = many(65_535);
  const zip = writeDeterministicZip(files);

  it('writes Go’s ZIP64 end record and locator, with the classic fields saturated', () => {
    const end = zip.length - EOCD;
    expect(zip.readUInt32LE(end)).toBe(0x06054b50);
    expect([zip.readUInt16LE(end + 8), zip.readUInt16LE(end + 10), zip.readUInt32LE(end + 12), zip.readUInt32LE(end + 16)]).toEqual([0xffff, 0xffff, 0xffffffff, 0xffffffff]);
    const locator = end - LOCATOR;
    expect(zip.readUInt32LE(locator)).toBe(0x07064b50);
    const record = Number(zip.readBigUInt64LE(locator + 8));
    expect(record).toBe(locator - ZIP64_EOCD);
    expect(zip.readUInt32LE(record)).toBe(0x06064b50);
    expect(Number(zip.readBigUInt64LE(record + 32))).toBe(65_535);
    expect(zip.readUInt16LE(record + 14)).toBe(45);
  });

  it('reads back every entry, from memory and from a file', async () => {
    const archive = openZip(zip, LIMITS);
    expect(archive.entries).toHaveLength(65_535);
    expect(archive.read(archive.get('e/065534.json')!).toString()).toBe('{"n":65534}');
    const dir = mkdtempSync(join(tmpdir(), 'ward-zip64-'));
    const path = join(dir, 'big.zip');
    const written = await writeDeterministicZipFile(path, files.map((f) => f.path), async (p) => ({ data: files[Number(p.slice(2, 8))]!.data }));
    expect(written).toEqual({ bytes: zip.length, entries: 65_535 });
    const onDisk = openZipFile(path, LIMITS);
    try {
      expect(onDisk.entries.map((e) => e.name)).toEqual(archive.entries.map((e) => e.name));
      expect(onDisk.read(onDisk.entries[12_345]!).toString()).toBe('{"n":12345}');
    } finally {
      onDisk.close();
    }
    // The streamed file and the in-memory archive are the same bytes.
    expect(execFileSync('sha256sum', [path]).toString().split(' ')[0]).toBe(require256(zip));
  });

  it('is a standard archive: Python’s zipfile lists and tests it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-zip64-'));
    const path = join(dir, 'big.zip');
    writeFileSync(path, zip);
    const out = execFileSync('python3', ['-c', 'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); print(len(z.namelist()), z.testzip(), z.read("e/000007.json").decode())', path]).toString();
    expect(out).toBe('65535 None {"n":7}\n');
  });

  it('reads ZIP64 archives written by Python’s zipfile', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-zip64-'));
    const path = join(dir, 'py.zip');
    execFileSync('python3', ['-c', 'import sys,zipfile\nwith zipfile.ZipFile(sys.argv[1],"w",zipfile.ZIP_DEFLATED) as z:\n  for i in range(65535): z.writestr("e/%06d.json"%i, "{\\"n\\":%d}"%i)', path]);
    const archive = openZipFile(path, LIMITS);
    try {
      expect(archive.entries).toHaveLength(65_535);
      expect(archive.read(archive.get('e/065534.json')!).toString()).toBe('{"n":65534}');
    } finally {
      archive.close();
    }
  });

  it('stays classic below the threshold (the layout the reference writes for packs)', () => {
    const small = writeDeterministicZip(many(65_534));
    expect(small.readUInt16LE(small.length - EOCD + 10)).toBe(65_534);
    expect(small.readUInt32LE(small.length - EOCD - LOCATOR)).not.toBe(0x07064b50);
    expect(openZip(small, LIMITS).entries).toHaveLength(65_534);
  });

  it('keeps the default entry limit for packs and runpacks', () => {
    expect(errorOf(() => openZip(zip)).message).toBe('zip has too many entries: 65535 > 10000');
  });

  it('refuses ZIP64 records that disagree or point elsewhere', () => {
    const end = zip.length - EOCD;
    const locator = end - LOCATOR;
    const record = locator - ZIP64_EOCD;
    const mutate = (fn: (b: Buffer) => void) => {
      const b = Buffer.from(zip);
      fn(b);
      return b;
    };
    const cases: [string, Buffer][] = [
      ['classic count disagrees', mutate((b) => (b.writeUInt16LE(4464, end + 10), b.writeUInt16LE(4464, end + 8)))],
      ['locator points elsewhere', mutate((b) => b.writeBigUInt64LE(BigInt(record - 1), locator + 8))],
      ['entry count larger than the directory holds', mutate((b) => (b.writeBigUInt64LE(10_000_000n, record + 24), b.writeBigUInt64LE(10_000_000n, record + 32)))],
      ['directory offset moved', mutate((b) => b.writeBigUInt64LE(BigInt(Number(b.readBigUInt64LE(record + 48)) + 46), record + 48))],
      ['record signature broken', mutate((b) => b.writeUInt32LE(0, record))],
      ['multi-disk', mutate((b) => b.writeUInt32LE(2, locator + 16))],
    ];
    for (const [why, bytes] of cases) {
      const err = errorOf(() => openZip(bytes, { limits: { maxEntries: 100_000_000 } }));
      expect({ why, code: err.code }).toEqual({ why, code: 'ERR_ZIP_INVALID' });
    }
    const dropped = Buffer.concat([zip.subarray(0, locator), zip.subarray(end)]); // locator gone, classic fields still saturated
    expect(errorOf(() => openZip(dropped, LIMITS)).code).toBe('ERR_ZIP_INVALID');
  });

  it('reads per-entry ZIP64 extra fields (sizes and offset past 32 bits, as Go writes them beyond 4 GiB)', () => {
    const name = Buffer.from('big.json');
    const data = Buffer.from('{"zip64":true}');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(45, 4);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const extra = Buffer.alloc(28);
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(24, 2);
    extra.writeBigUInt64LE(BigInt(data.length), 4);
    extra.writeBigUInt64LE(BigInt(data.length), 12);
    extra.writeBigUInt64LE(0n, 20);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4);
    central.writeUInt16LE(45, 6);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(0xffffffff, 20);
    central.writeUInt32LE(0xffffffff, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(0xffffffff, 42);
    const body = Buffer.concat([local, name, data]);
    const cd = Buffer.concat([central, name, extra]);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(1, 8);
    end.writeUInt16LE(1, 10);
    end.writeUInt32LE(cd.length, 12);
    end.writeUInt32LE(body.length, 16);
    const archive = openZip(Buffer.concat([body, cd, end]));
    expect(archive.entries[0]).toMatchObject({ name: 'big.json', size: data.length, localOffset: 0, zip64Sizes: true });
    expect(archive.read(archive.entries[0]!).equals(data)).toBe(true);
    // A saturated field without the extra that resolves it is refused.
    const noExtra = Buffer.concat([body, Buffer.concat([central, name]), end]);
    noExtra.writeUInt16LE(0, body.length + 30);
    noExtra.writeUInt32LE(cd.length - extra.length, noExtra.length - 22 + 12);
    expect(errorOf(() => openZip(noExtra)).message).toBe('zip entry big.json: ZIP64 extra field missing');

    // Streamed (data descriptor, flag bit 3), as Ward's and Go's writers lay out an entry past 4 GiB:
    // the descriptor keeps 4-byte sizes; an 8-byte (ZIP64) descriptor is read too.
    for (const wide of [false, true]) {
      const streamedLocal = Buffer.from(local);
      streamedLocal.writeUInt16LE(0x0008, 6);
      streamedLocal.fill(0, 14, 26);
      const descriptor = Buffer.alloc(wide ? 24 : 16);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc32(data), 4);
      if (wide) {
        descriptor.writeBigUInt64LE(BigInt(data.length), 8);
        descriptor.writeBigUInt64LE(BigInt(data.length), 16);
      } else {
        descriptor.writeUInt32LE(data.length, 8);
        descriptor.writeUInt32LE(data.length, 12);
      }
      const streamedCentral = Buffer.from(central);
      streamedCentral.writeUInt16LE(0x0008, 8);
      const streamedBody = Buffer.concat([streamedLocal, name, data, descriptor]);
      const streamedEnd = Buffer.from(end);
      streamedEnd.writeUInt32LE(streamedBody.length, 16);
      const streamed = openZip(Buffer.concat([streamedBody, streamedCentral, name, extra, streamedEnd]));
      expect(streamed.read(streamed.entries[0]!).equals(data)).toBe(true);
      descriptor.writeUInt32LE(data.length + 1, wide ? 16 : 12);
      const lying = Buffer.concat([streamedLocal, name, data, descriptor, streamedCentral, name, extra, streamedEnd]);
      expect(errorOf(() => openZip(lying)).message).toBe('zip entry big.json: data descriptor sizes differ');
    }
  });
});

describe('ZIP64 per-entry fields from the writer', () => {
  it('an entry starting past 4 GiB gets saturated sizes and offset and a ZIP64 extra, as Go writes it', () => {
    const chunks: Buffer[] = [];
    const writer = new ZipStreamWriter((c) => chunks.push(c));
    // Pretend 4 GiB were already written (writing them would take minutes): only the headers are checked.
    (writer as unknown as { offset: number }).offset = 2 ** 32 + 10;
    writer.add({ path: 'late.json', data: Buffer.from('{"late":true}') });
    const before = Buffer.concat(chunks).length;
    writer.finish();
    const tail = Buffer.concat(chunks).subarray(before);
    expect(tail.readUInt32LE(0)).toBe(0x02014b50);
    expect([tail.readUInt32LE(20), tail.readUInt32LE(24), tail.readUInt32LE(42)]).toEqual([0xffffffff, 0xffffffff, 0xffffffff]);
    const nameLength = tail.readUInt16LE(28);
    const extra = tail.subarray(46 + nameLength, 46 + nameLength + tail.readUInt16LE(30));
    const z = extra.subarray(9); // after the extended timestamp
    expect([z.readUInt16LE(0), z.readUInt16LE(2)]).toEqual([0x0001, 24]);
    expect([Number(z.readBigUInt64LE(4)), Number(z.readBigUInt64LE(20))]).toEqual([13, 2 ** 32 + 10]);
    // The directory itself starts past 4 GiB, so the end records are ZIP64 too.
    expect(tail.readUInt32LE(tail.length - 22 - 20)).toBe(0x07064b50);
  });
});

function require256(bytes: Buffer): string {
  return execFileSync('sha256sum', { input: bytes }).toString().split(' ')[0]!;
}
