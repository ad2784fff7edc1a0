import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { crc32 } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  decodeFrames,
  decodeSegmentBytes,
  encodeFrame,
  encodeFrames,
  FRAME_HEADER,
  Journal,
  leftoverSegments,
  listSegments,
  readSegment,
  SEGMENT_MAGIC,
  type JournalRecord,
  type SegmentRef,
} from '../../src/state/journal.js';
import { tempDir } from '../cli/run.js';

const rec = (type: number, text: string): JournalRecord => ({ type, payload: Buffer.from(text) });
const texts = (records: JournalRecord[]) => records.map((r) => `${r.type}:${r.payload.toString()}`);

/** FileHandle.prototype: fsync-mode appends go through `fh.write` (O_DSYNC) or `fh.datasync`. */
async function fileHandlePrototype(dir: string): Promise<{ write: (...a: unknown[]) => unknown; datasync: (...a: unknown[]) => unknown }> {
  const fh = await open(join(dir, 'probe'), 'w');
  await fh.close();
  return Object.getPrototypeOf(fh) as { write: (...a: unknown[]) => unknown; datasync: (...a: unknown[]) => unknown };
}

afterEach(() => vi.restoreAllMocks());

describe('journal frames', () => {
  it('round-trips records and treats the preallocated zeros as a clean end', () => {
    const records = [rec(0, '{"a":1}'), rec(16, 'trace_x.json\n{}'), rec(255, 'é')];
    const bytes = Buffer.concat([encodeFrames(records), Buffer.alloc(100)]);
    expect(decodeFrames(bytes)).toEqual({ records, torn: false });
    expect(encodeFrames(records)).toEqual(Buffer.concat(records.map((r) => encodeFrame(r.type, r.payload))));
    // The layout: length, CRC-32 over length + type + payload, type, payload.
    const f = encodeFrame(7, Buffer.from('xyz'));
    expect(f.readUInt32LE(0)).toBe(3);
    expect(f.readUInt8(8)).toBe(7);
    expect(f.readUInt32LE(4)).toBe(crc32(Buffer.from('xyz'), crc32(Buffer.from([7]), crc32(f.subarray(0, 4)))));
    expect(f.length).toBe(FRAME_HEADER + 3);
  });

  it('refuses empty payloads and types that are not a byte', () => {
    expect(() => encodeFrame(1, Buffer.alloc(0))).toThrow(/empty/);
    expect(() => encodeFrame(256, Buffer.from('x'))).toThrow(/byte/);
  });

  it('stops at a torn tail', () => {
    const a = encodeFrame(0, Buffer.from('first'));
    const b = encodeFrame(0, Buffer.from('second'));
    for (let cut = 1; cut < b.length; cut++) {
      const out = decodeFrames(Buffer.concat([a, b.subarray(0, cut)]));
      expect(texts(out.records)).toEqual(['0:first']);
      expect(out.torn).toBe(true);
    }
  });

  it('stops at the first frame whose checksum fails, whichever byte flipped (payload, type, length, sum)', () => {
    const frames = [encodeFrame(0, Buffer.from('one')), encodeFrame(1, Buffer.from('two')), encodeFrame(2, Buffer.from('three'))];
    const bytes = Buffer.concat(frames);
    const second = frames[0]!.length;
    for (let i = second; i < second + frames[1]!.length; i++) {
      const bad = Buffer.from(bytes);
      bad[i] ^= 0x01;
      const out = decodeFrames(bad);
      expect(texts(out.records), `byte ${i}`).toEqual(['0:one']);
      expect(out.torn).toBe(true);
    }
  });

  it('garbage after the last frame is torn, zeros are not', () => {
    const a = encodeFrame(0, Buffer.from('ok'));
    expect(decodeFrames(Buffer.concat([a, Buffer.alloc(4)])).torn).toBe(false);
    const junk = Buffer.concat([a, Buffer.alloc(20)]);
    junk[a.length + 15] = 9;
    expect(decodeFrames(junk)).toMatchObject({ torn: true });
    expect(decodeFrames(junk).records).toHaveLength(1);
  });

  it('reads segments with the version header and the daemon segments written before it (CRC over the payload)', () => {
    const v1 = Buffer.concat([SEGMENT_MAGIC, encodeFrame(0, Buffer.from('new')), Buffer.alloc(32)]);
    expect(decodeSegmentBytes(v1)).toMatchObject({ format: 'v1', torn: false });
    expect(texts(decodeSegmentBytes(v1).records)).toEqual(['0:new']);
    // The daemon's framing before journal version 1: u32 length, u32 crc32(payload), kind byte.
    const legacy = (kind: number, text: string) => {
      const p = Buffer.from(text);
      const h = Buffer.alloc(9);
      h.writeUInt32LE(p.length, 0);
      h.writeUInt32LE(crc32(p), 4);
      h.writeUInt8(kind, 8);
      return Buffer.concat([h, p]);
    };
    const old = Buffer.concat([legacy(0, '{"t":1}'), legacy(1, '{"c":1}'), Buffer.alloc(64)]);
    expect(decodeSegmentBytes(old)).toMatchObject({ format: 'legacy', torn: false });
    expect(texts(decodeSegmentBytes(old).records)).toEqual(['0:{"t":1}', '1:{"c":1}']);
  });
});

describe('Journal', () => {
  it('fsync: appends are acknowledged once written, in order, and a reader finds them all (before close)', async () => {
    const dir = tempDir('ward-journal-');
    const j = new Journal(dir);
    for (let i = 0; i < 5; i++) await j.append([rec(1, `r${i}`)]);
    const [seg] = listSegments(dir);
    expect(seg!.pid).toBe(process.pid);
    expect(texts(readSegment(seg!.path).records)).toEqual(['1:r0', '1:r1', '1:r2', '1:r3', '1:r4']);
    expect(readFileSync(seg!.path).subarray(0, 8)).toEqual(SEGMENT_MAGIC);
    await j.close();
    expect(listSegments(dir)).toEqual([]);
  });

  it('group commit: concurrent appends share writes, every one resolves, and the journal keeps their order', async () => {
    const dir = tempDir('ward-journal-');
    const j = new Journal(dir, { maxInFlight: 2 });
    await j.append([rec(1, 'warm')]);
    const proto = await fileHandlePrototype(dir);
    const writes = vi.spyOn(proto, 'write');
    const syncs = vi.spyOn(proto, 'datasync');
    const n = 64;
    const order: number[] = [];
    await Promise.all(Array.from({ length: n }, (_, i) => j.append([rec(1, `c${i}`), rec(2, `d${i}`)]).then(() => order.push(i))));
    const calls = writes.mock.calls.length + syncs.mock.calls.length;
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThan(n / 4);
    expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
    const [seg] = listSegments(dir);
    const got = texts(readSegment(seg!.path).records);
    expect(got).toEqual(['1:warm', ...Array.from({ length: n }, (_, i) => [`1:c${i}`, `2:d${i}`]).flat()]);
    await j.close();
  });

  it('write: appendNow writes on the calling thread once the segment is ready', async () => {
    const dir = tempDir('ward-journal-');
    const j = new Journal(dir, { sync: 'write' });
    expect(j.appendNow([rec(1, 'early')])).toBeUndefined(); // still preallocating
    await j.append([rec(1, 'first')]);
    const seg = j.appendNow([rec(1, 'second')]);
    expect(seg).toBeDefined();
    expect(texts(readSegment(seg!.path).records)).toEqual(['1:first', '1:second']);
    await j.close();
  });

  it('rotates full segments: each is checkpointed once its appends resolved, then deleted; a failed checkpoint keeps it', async () => {
    const dir = tempDir('ward-journal-');
    const checkpointed: { seq: number; records: string[] }[] = [];
    const j = new Journal(dir, {
      segmentBytes: 256,
      checkpoint: async (seg: SegmentRef) => {
        const records = texts(readSegment(seg.path).records);
        checkpointed.push({ seq: seg.seq, records });
        if (records.some((r) => r.includes('yyy'))) throw new Error('destination unavailable');
      },
    });
    const all: string[] = [];
    for (let i = 0; i < 30; i++) {
      await j.append([rec(3, `record-${String(i).padStart(3, '0')}-${'x'.repeat(20)}`)]);
      all.push(`3:record-${String(i).padStart(3, '0')}-${'x'.repeat(20)}`);
    }
    // A group bigger than a segment gets a segment of its own.
    await j.append([rec(3, 'y'.repeat(1000))]);
    all.push(`3:${'y'.repeat(1000)}`);
    await j.close();
    expect(checkpointed.flatMap((c) => c.records)).toEqual(all);
    expect(checkpointed.map((c) => c.seq)).toEqual([...checkpointed.map((c) => c.seq)].sort((a, b) => a - b));
    // Only the big group's checkpoint failed: its segment is still there for recovery.
    const left = listSegments(dir);
    expect(left).toHaveLength(1);
    expect(texts(readSegment(left[0]!.path).records)).toEqual([`3:${'y'.repeat(1000)}`]);
  });

  it('a failed write rejects its group and every group in flight with it (fail closed); later appends go to a new segment', async () => {
    const dir = tempDir('ward-journal-');
    const checkpointed: string[][] = [];
    const j = new Journal(dir, { checkpoint: async (seg) => void checkpointed.push(texts(readSegment(seg.path).records)) });
    await j.append([rec(1, 'ok')]);
    const proto = await fileHandlePrototype(dir);
    vi.spyOn(proto, 'write').mockRejectedValue(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
    vi.spyOn(proto, 'datasync').mockRejectedValue(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const results = await Promise.allSettled([j.append([rec(1, 'a')]), j.append([rec(1, 'b')])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/EIO/);
    vi.restoreAllMocks();
    await j.append([rec(1, 'c')]);
    await j.close();
    // The first segment's acknowledged record was checkpointed; the next append went to a new segment.
    expect(checkpointed).toEqual([['1:ok'], ['1:c']]);
    expect(listSegments(dir)).toEqual([]);
  });

  it('leftover segments: an exclusive journal recovers all, a shared one leaves live writers alone', async () => {
    const dir = tempDir('ward-journal-');
    const live = new Journal(dir, { shared: true });
    await live.append([rec(1, 'mine')]);
    // A dead writer (pid above Linux's default pid_max) and one from before version 1 (no pid).
    writeFileSync(join(dir, 'seg_0000000000000090_4194305.log'), Buffer.concat([SEGMENT_MAGIC, encodeFrame(1, Buffer.from('dead'))]));
    writeFileSync(join(dir, 'seg_0000000000000091.log'), Buffer.alloc(16));
    writeFileSync(join(dir, 'not-a-segment.log'), 'x');
    const shared = leftoverSegments(dir, { shared: true }).map((s) => s.path);
    expect(shared).toEqual([join(dir, 'seg_0000000000000090_4194305.log'), join(dir, 'seg_0000000000000091.log')]);
    expect(leftoverSegments(dir)).toHaveLength(3);
    await live.close();
  });

  it('kill -9 while appending (fsync): every acknowledged record is in the journal, in order', () => {
    const dir = tempDir('ward-journal-kill-');
    const url = pathToFileURL(join(process.cwd(), 'dist', 'state', 'journal.js')).href;
    const script = `
      const { Journal } = await import(${JSON.stringify(url)});
      // Segments are never checkpointed (as if their destination were down): all stay on disk.
      const j = new Journal(${JSON.stringify(dir)}, { segmentBytes: 4096, checkpoint: () => new Promise(() => {}) });
      let acked = 0;
      const worker = async (w) => {
        for (let i = 0; ; i++) {
          const text = 'w' + w + '-' + i;
          await j.append([{ type: 1, payload: Buffer.from(text) }]);
          process.stdout.write(text + '\\n');
          if (++acked === 300) process.kill(process.pid, 'SIGKILL');
        }
      };
      for (let w = 0; w < 8; w++) void worker(w);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.signal).toBe('SIGKILL');
    const acked = child.stdout.split('\n').filter(Boolean);
    expect(acked.length).toBeGreaterThanOrEqual(300);
    const segments = leftoverSegments(dir, { shared: true });
    expect(segments.length).toBeGreaterThan(1); // rotated under load, the latest segments are left
    const journaled = segments.flatMap((s) => readSegment(s.path).records.map((r) => r.payload.toString()));
    for (const text of acked) expect(journaled).toContain(text);
    // Each writer's records are journaled in the order they were acknowledged.
    for (let w = 0; w < 8; w++) {
      const mine = journaled.filter((t) => t.startsWith(`w${w}-`)).map((t) => Number(t.split('-')[1]));
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
    }
    expect(existsSync(dir)).toBe(true);
  });
});
