import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync, crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openZip, writeDeterministicZip } from '../../src/zip/index.js';
import { isWardError } from '../../src/errors.js';

const files = [
  { path: 'run.json', data: Buffer.from('{"run_id":"run_x"}') },
  { path: 'intents.jsonl', data: Buffer.from('{"a":1}\n{"a":2}\n') },
  { path: 'source/runpack.zip', data: Buffer.from('binary'), mode: 0o700 },
  { path: 'empty.jsonl', data: Buffer.alloc(0) },
];

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isWardError(err)) return err.code;
    throw err;
  }
  throw new Error('expected an error');
}

/** A hand-built ZIP (stored entries, no descriptors) for hostile-input tests. */
function rawZip(entries: { name: string; data: Buffer; declaredSize?: number; method?: number; raw?: Buffer; offset?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  const offsets: number[] = [];
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const body = e.raw ?? e.data;
    const method = e.method ?? 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc32(e.data), 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.declaredSize ?? e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    offsets.push(offset);
    if (e.offset === undefined) {
      locals.push(local, name, body);
      offset += 30 + name.length + body.length;
    }
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc32(e.data), 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(e.declaredSize ?? e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(e.offset ?? offsets[offsets.length - 1]!, 42);
    centrals.push(central, name);
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

describe('deterministic zip writer', () => {
  it('writes the same bytes for the same files in any input order', () => {
    const a = writeDeterministicZip(files);
    const b = writeDeterministicZip([...files].reverse());
    expect(a.equals(b)).toBe(true);
  });

  it('sorts entries byte-wise and normalizes modes to 0644/0755', () => {
    const zip = openZip(writeDeterministicZip(files));
    expect(zip.entries.map((e) => e.name)).toEqual(['empty.jsonl', 'intents.jsonl', 'run.json', 'source/runpack.zip']);
    expect(zip.entries.map((e) => e.mode.toString(8))).toEqual(['644', '644', '644', '755']);
    expect(zip.read(zip.get('intents.jsonl')!).toString()).toBe('{"a":1}\n{"a":2}\n');
    expect(zip.read(zip.get('empty.jsonl')!).length).toBe(0);
  });

  it('uses Go archive/zip header conventions: 1980 DOS date, data descriptors, Unix creator', () => {
    const bytes = writeDeterministicZip([{ path: 'a.json', data: Buffer.from('{}') }]);
    expect(bytes.readUInt16LE(6) & 0x8).toBe(0x8); // data-descriptor flag
    expect(bytes.readUInt16LE(10)).toBe(0); // DOS time
    expect(bytes.readUInt16LE(12)).toBe(0x21); // DOS date 1980-01-01
    expect(bytes.readUInt32LE(14)).toBe(0); // CRC deferred to the descriptor
    const extra = bytes.subarray(30 + 6, 30 + 6 + 9);
    expect(extra.toString('hex')).toBe('5554050001' + '00a6ce12'); // UT, flags 1, mtime 315532800 LE
    const cd = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    expect(bytes.readUInt16LE(cd + 4)).toBe(0x0314);
    expect(bytes.readUInt32LE(cd + 38)).toBe(0x81a40000);
  });

  it('writes nothing for no files', () => {
    expect(writeDeterministicZip([]).length).toBe(0);
  });

  it('produces archives other tools read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-zip-'));
    const path = join(dir, 'x.zip');
    writeFileSync(path, writeDeterministicZip(files));
    const listed = execFileSync('python3', ['-c', 'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); print(z.testzip()); print(",".join(z.namelist()))', path]).toString();
    expect(listed).toBe('None\nempty.jsonl,intents.jsonl,run.json,source/runpack.zip\n');
  });

  it('refuses duplicate and unsafe names on write', () => {
    expect(codeOf(() => writeDeterministicZip([{ path: 'a', data: Buffer.alloc(0) }, { path: 'a', data: Buffer.alloc(0) }]))).toBe('ERR_ZIP_DUPLICATE_ENTRY');
    expect(codeOf(() => writeDeterministicZip([{ path: 'a', data: Buffer.alloc(0) }, { path: 'A', data: Buffer.alloc(0) }]))).toBe('ERR_ZIP_DUPLICATE_ENTRY');
    expect(codeOf(() => writeDeterministicZip([{ path: ' a', data: Buffer.alloc(0) }]))).toBe('ERR_ZIP_UNSAFE_PATH');
    expect(codeOf(() => writeDeterministicZip([{ path: '../a', data: Buffer.alloc(0) }]))).toBe('ERR_ZIP_UNSAFE_PATH');
  });
});

describe('strict zip reader', () => {
  const good = writeDeterministicZip(files);

  it('rejects a truncated archive', () => {
    expect(codeOf(() => openZip(good.subarray(0, good.length - 10)))).toBe('ERR_ZIP_INVALID');
    expect(codeOf(() => openZip(good.subarray(0, 100)))).toBe('ERR_ZIP_INVALID');
    expect(codeOf(() => openZip(Buffer.from('not a zip')))).toBe('ERR_ZIP_INVALID');
  });

  it('rejects trailing bytes after the end record', () => {
    expect(codeOf(() => openZip(Buffer.concat([good, Buffer.from('x')])))).toBe('ERR_ZIP_INVALID');
  });

  it('detects a flipped byte in entry data by checksum', () => {
    const zip = openZip(Buffer.from(rawZip([{ name: 'a.json', data: Buffer.from('{"a":1}') }])));
    expect(zip.read(zip.entries[0]!).toString()).toBe('{"a":1}');
    const tampered = rawZip([{ name: 'a.json', data: Buffer.from('{"a":1}') }]);
    tampered[30 + 6 + 3] ^= 1;
    const z2 = openZip(tampered);
    expect(codeOf(() => z2.read(z2.entries[0]!))).toBe('ERR_ZIP_CHECKSUM');
  });

  it('rejects duplicate entry names with the sorted list (reference rule, names not required canonical)', () => {
    const dup = rawZip([
      { name: 'b', data: Buffer.from('1') },
      { name: 'a', data: Buffer.from('1') },
      { name: 'b', data: Buffer.from('2') },
      { name: 'a\\', data: Buffer.from('2') },
      { name: 'a', data: Buffer.from('3') },
    ]);
    expect(codeOf(() => openZip(dup))).toBe('ERR_ZIP_UNSAFE_PATH'); // `a\\` is not canonical
    try {
      openZip(dup, { strictNames: false });
      expect.unreachable();
    } catch (err) {
      expect(isWardError(err) && err.code).toBe('ERR_ZIP_DUPLICATE_ENTRY');
      expect((err as Error).message).toBe('zip contains duplicate entries: a, b');
    }
    expect(openZip(dup, { rejectDuplicates: false, strictNames: false }).entries).toHaveLength(5);
  });

  it('rejects path traversal and absolute paths', () => {
    for (const name of ['../evil', 'a/../../evil', '/etc/passwd', 'C:/x', '..\\evil']) {
      expect(codeOf(() => openZip(rawZip([{ name, data: Buffer.from('x') }])))).toBe('ERR_ZIP_UNSAFE_PATH');
    }
  });

  it('rejects an entry declared over the size limit', () => {
    const zip = rawZip([{ name: 'big', data: Buffer.from('x'.repeat(100)) }]);
    expect(codeOf(() => openZip(zip, { limits: { maxEntryBytes: 50 } }))).toBe('ERR_ZIP_ENTRY_TOO_LARGE');
  });

  it('caps inflation at the declared size (zip bomb with a lying header)', () => {
    const data = Buffer.alloc(1_000_000);
    const raw = deflateRawSync(data);
    const zip = openZip(rawZip([{ name: 'bomb', data, raw, method: 8, declaredSize: 1000 }]));
    expect(codeOf(() => zip.read(zip.entries[0]!))).toBe('ERR_ZIP_BOMB');
  });

  it('rejects overlapping entries (non-recursive zip bomb)', () => {
    const data = Buffer.from('shared');
    const bomb = rawZip([
      { name: 'a', data },
      { name: 'b', data, offset: 0 },
    ]);
    expect(codeOf(() => openZip(bomb))).toBe('ERR_ZIP_INVALID'); // b's local name differs from its central name
    const sameName = rawZip([{ name: 'a', data }, { name: 'a', data, offset: 0 }]);
    expect(codeOf(() => openZip(sameName, { rejectDuplicates: false }))).toBe('ERR_ZIP_BOMB');
  });

  it('rejects archives expanding past the total limit', () => {
    const zip = rawZip([
      { name: 'a', data: Buffer.alloc(60) },
      { name: 'b', data: Buffer.alloc(60) },
    ]);
    expect(codeOf(() => openZip(zip, { limits: { maxTotalBytes: 100 } }))).toBe('ERR_ZIP_BOMB');
  });

  it('rejects corrupt deflate data', () => {
    const data = Buffer.from('hello world hello world');
    const raw = deflateRawSync(data).subarray(0, 5);
    const zip = openZip(rawZip([{ name: 'x', data, raw, method: 8 }]));
    expect(codeOf(() => zip.read(zip.entries[0]!))).toBe('ERR_ZIP_INVALID');
  });
});
