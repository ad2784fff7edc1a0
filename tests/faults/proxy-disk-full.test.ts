import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalTraceSink } from '../../src/mcp/proxy/journal-sink.js';
import { sweepTempFiles, writeFileAtomic } from '../../src/state/atomic-file.js';
import { fsSeam } from '../../src/state/fs-seam.js';
import { traceFileText } from '../../src/trace/write.js';
import type { SignedTrace } from '../../src/trace/record.js';
import { tempDir } from '../cli/run.js';

/**
 * The MCP proxy's trace sink (and every atomic file) on a full disk, failing at Ward's syscall seam:
 * a call is refused with ERR_STORAGE_FULL, no partial or 0-byte trace file and no temporary file
 * is left, the sink takes traces again by itself once space returns, and every acknowledged trace
 * ends up as a complete file.
 */
const hex = (n: number, width = 24) => n.toString(16).padStart(width, '0');
const trace = (i: number) => ({ trace_id: hex(i), event_id: hex(i + 1_000_000), verdict: 'allow', tool_name: 'echo' }) as unknown as SignedTrace;
const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

afterEach(() => vi.restoreAllMocks());

/** An empty directory of its own (tempDir's has a state directory in it). */
function subdir(prefix: string): string {
  const dir = join(tempDir(prefix), 'files');
  mkdirSync(dir);
  return dir;
}

describe.each(['fsync', 'write'] as const)('proxy trace sink on a full disk (--trace-sync %s)', (sync) => {
  it('refuses with ERR_STORAGE_FULL, leaves no partial or temporary file, and recovers by itself', async () => {
    const dir = tempDir('ward-proxy-enospc-');
    const traces = join(dir, 'traces');
    const sink = new JournalTraceSink(traces, join(dir, 'journal'), sync);
    const acked: number[] = [];
    await sink.write(trace(0));
    acked.push(0);

    // The disk fills: the journal's appends fail (write mode writes with writeSync, fsync mode with write).
    const w = vi.spyOn(fsSeam, 'write').mockRejectedValue(enospc());
    const ws = vi.spyOn(fsSeam, 'writeSync').mockImplementation(() => {
      throw enospc();
    });
    let refused = 0;
    for (let i = 1; i <= 5; i++) {
      try {
        await sink.write(trace(i));
        acked.push(i);
      } catch (err) {
        refused++;
        expect(err).toMatchObject({ code: 'ERR_STORAGE_FULL', details: { errno: 'ENOSPC' } });
      }
    }
    expect(refused).toBeGreaterThan(0);
    w.mockRestore();
    ws.mockRestore();

    // Space is back: the next append takes a fresh segment.
    for (let i = 10; i < 20; i++) {
      await sink.write(trace(i));
      acked.push(i);
    }
    await sink.close();
    const names = readdirSync(traces);
    expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
    for (const n of names) expect(statSync(join(traces, n)).size, n).toBeGreaterThan(0);
    for (const i of acked) expect(readFileSync(join(traces, `trace_${hex(i)}_${hex(i + 1_000_000)}.json`), 'utf8')).toBe(traceFileText(trace(i)));
  });
});

describe('atomic files on a full disk', () => {
  it('a failed write leaves the old file and no temporary file', () => {
    const dir = subdir('ward-atomic-enospc-');
    const path = join(dir, 'trace_x.json');
    writeFileAtomic(path, 'old');
    const ws = vi.spyOn(fsSeam, 'writeSync').mockImplementation(() => {
      throw enospc();
    });
    expect(() => writeFileAtomic(path, 'new content')).toThrow(/no space left/);
    expect(ws).toHaveBeenCalled();
    ws.mockRestore();
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['trace_x.json']);
  });

  it('a short write continues; a write of 0 bytes is a full disk', () => {
    const dir = subdir('ward-atomic-short-');
    const real = fsSeam.writeSync.bind(fsSeam);
    const ws = vi.spyOn(fsSeam, 'writeSync').mockImplementation((fd, buf, off, len, pos) => real(fd, buf, off, Math.min(len, 3), pos));
    writeFileAtomic(join(dir, 'a.json'), '{"a":"0123456789"}');
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{"a":"0123456789"}');
    ws.mockImplementation(() => 0);
    expect(() => writeFileAtomic(join(dir, 'b.json'), 'x')).toThrow(/ENOSPC/);
    ws.mockRestore();
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('temporary files of writers that are gone are swept at start; a live writer\'s are kept', () => {
    const dir = subdir('ward-sweep-');
    const dead = 2 ** 22 + 12345; // above pid_max's default: no such process
    writeFileSync(join(dir, `.trace_a.json.${dead}.0123456789ab.tmp`), '');
    writeFileSync(join(dir, `.trace_b.json.${process.pid}.0123456789ab.tmp`), '');
    writeFileSync(join(dir, 'trace_c.json'), '{}');
    expect(sweepTempFiles(dir)).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([`.trace_b.json.${process.pid}.0123456789ab.tmp`, 'trace_c.json']);
    // The proxy's sink sweeps its trace directory when it starts.
    writeFileSync(join(dir, `.trace_d.json.${dead}.0123456789ab.tmp`), '');
    const sink = new JournalTraceSink(dir, join(dir, '..', 'sweep-journal'));
    expect(readdirSync(dir).filter((n) => n.includes(String(dead)))).toEqual([]);
    return sink.close();
  });
});
