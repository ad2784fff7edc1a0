/**
 * Hand-built hostile archives: a ZIP writer with none of Ward's checks (any name, any Unix file
 * type), and helpers that rewrite a recorded runpack and sign it again, as an attacker holding a
 * key (or a careless producer) would.
 */
import { crc32 } from 'node:zlib';
import { jcs, sha256Hex, type JsonObject, type JsonValue } from '../../src/canon/index.js';
import type { SigningKey } from '../../src/keys/index.js';
import { computeManifestDigest, signManifest, type RunpackManifest } from '../../src/runpack/index.js';
import { openZip } from '../../src/zip/index.js';
import { TEST_KEY } from '../runpack/helpers.js';

export const S_IFREG = 0o100000;
export const S_IFLNK = 0o120000;
export const S_IFDIR = 0o040000;

export interface CraftedEntry {
  name: string;
  data: Buffer;
  /** Unix mode with file type bits (default regular file 0644). */
  mode?: number;
  /** "Version made by" host (default 3, Unix). */
  creator?: number;
  /** Low 16 bits of the external attributes (MS-DOS attributes). */
  dosAttributes?: number;
  /** Extra field block, in both headers. */
  extra?: Buffer;
  /** Bytes after this entry that belong to no entry. */
  gapAfter?: Buffer;
}

/** Stored (uncompressed) entries, no data descriptors, Unix creator, exactly the names given. */
export function craftZip(entries: readonly CraftedEntry[], options: { prefix?: Buffer } = {}): Buffer {
  const locals: Buffer[] = options.prefix ? [options.prefix] : [];
  const centrals: Buffer[] = [];
  let offset = options.prefix?.length ?? 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const extra = e.extra ?? Buffer.alloc(0);
    local.writeUInt16LE(extra.length, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(((e.creator ?? 3) << 8) | 0x14, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE((((e.mode ?? S_IFREG | 0o644) << 16) | (e.dosAttributes ?? 0)) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    const gap = e.gapAfter ?? Buffer.alloc(0);
    locals.push(local, name, extra, e.data, gap);
    centrals.push(central, name, extra);
    offset += 30 + name.length + extra.length + e.data.length + gap.length;
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

/** The entries of a (well-formed) archive, in order. */
export function entriesOf(bytes: Buffer): CraftedEntry[] {
  const zip = openZip(bytes);
  return zip.entries.map((e) => ({ name: e.name, data: zip.read(e) }));
}

/**
 * Rewrite a runpack: `edit` may change the manifest (signatures removed) and the files; declared
 * file hashes, `manifest_digest` and the signature are then recomputed, so the result is a
 * correctly signed runpack of whatever `edit` made. Written with `craftZip` (no name checks).
 */
export function resignRunpack(
  bytes: Buffer,
  edit: (manifest: Record<string, any>, files: CraftedEntry[]) => void,
  key: SigningKey = TEST_KEY,
): Buffer {
  const files = entriesOf(bytes);
  const manifestEntry = files.find((f) => f.name === 'manifest.json')!;
  const manifest = JSON.parse(manifestEntry.data.toString('utf8')) as Record<string, any>;
  delete manifest['signatures'];
  edit(manifest, files);
  manifest['files'] = (manifest['files'] as { path: string; sha256: string }[]).map((f) => {
    const present = files.find((e) => e.name === f.path);
    return present ? { path: f.path, sha256: sha256Hex(present.data) } : f;
  });
  manifest['manifest_digest'] = computeManifestDigest(manifest as unknown as RunpackManifest);
  manifest['signatures'] = [signManifest({ ...manifest } as JsonObject, key)];
  const body = Buffer.from(jcs(manifest as JsonValue));
  return craftZip(files.map((f) => (f.name === 'manifest.json' ? { ...f, data: body } : f)));
}
