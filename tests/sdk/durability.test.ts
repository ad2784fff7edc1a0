import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERROR_CODES, Ward, WardError, intent, loadKeyRing, verifyTraceFile } from '../../src/index.js';
import { listSegments, readSegment } from '../../src/state/journal.js';
import { tempDir } from '../cli/run.js';

const POLICY = `schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: block
rules:
  - name: allow-reads
    priority: 10
    effect: allow
    match:
      endpoint_classes: [fs.read]
`;

const ctx = { identity: 'agent.test', workspace: '/workspace', risk_class: 'low' };
const readIntent = (path = '/workspace/a.txt') =>
  intent.tool('fs.read_file').args({ path }).target({ kind: 'path', value: path, operation: 'read' }).context(ctx).build();

/** FileHandle.prototype: the journal appends through `fh.write` (O_DSYNC) or `fh.datasync`. */
async function fileHandlePrototype(dir: string): Promise<{ write: unknown; datasync: unknown }> {
  const fh = await open(join(dir, 'probe'), 'w');
  await fh.close();
  return Object.getPrototypeOf(fh) as { write: unknown; datasync: unknown };
}

/** Every file journaled (record type 16: `<name>\n<text>`) in the Ward's journal directory. */
function journalFiles(traceDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const seg of listSegments(`${traceDir}.journal`)) {
    for (const r of readSegment(seg.path).records) {
      const nl = r.payload.indexOf(0x0a);
      out.set(r.payload.subarray(0, nl).toString('utf8'), r.payload.subarray(nl + 1).toString('utf8'));
    }
  }
  return out;
}

afterEach(() => vi.restoreAllMocks());

describe('Ward durability', () => {
  for (const durability of ['write', 'fsync'] as const) {
    it(`${durability}: the trace file exists and verifies as soon as evaluate resolves`, async () => {
      const stateDir = tempDir();
      const ward = new Ward({ policy: POLICY, stateDir, approvalDir: false, durability, captureIntents: true });
      expect(ward.durability).toBe(durability);
      const keys = loadKeyRing(stateDir);
      for (let i = 0; i < 3; i++) {
        const d = await ward.evaluate(readIntent(`/workspace/${i}.txt`));
        expect(existsSync(d.tracePath)).toBe(true);
        expect(statSync(d.tracePath).mode & 0o777).toBe(0o600);
        expect(verifyTraceFile(d.tracePath, keys).ok).toBe(true);
        expect(JSON.parse(readFileSync(d.tracePath, 'utf8')).trace_id).toBe(d.traceId);
        expect(d.output['trace_path']).toBe(d.tracePath);
        expect(existsSync(d.capturePath!)).toBe(true);
      }
      expect(readdirSync(ward.traceDir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
      await ward.close();
    });
  }

  it('write is the default, and publishes under gate eval names without a journal', async () => {
    const ward = new Ward({ policy: POLICY, stateDir: tempDir(), approvalDir: false });
    expect(ward.durability).toBe('write');
    const a = await ward.evaluate(readIntent());
    const b = await ward.evaluate(readIntent());
    expect(basename(a.tracePath)).toBe(`trace_${a.traceId}.json`);
    expect(basename(b.tracePath)).toMatch(new RegExp(`^trace_${b.traceId}_[0-9a-f]{24}\\.json$`));
    expect(existsSync(`${ward.traceDir}.journal`)).toBe(false);
  });

  it('fsync: the trace is in the synchronized journal when evaluate resolves', async () => {
    const ward = new Ward({ policy: POLICY, stateDir: tempDir(), approvalDir: false, durability: 'fsync' });
    const d = await ward.evaluate(readIntent());
    const journaled = journalFiles(ward.traceDir);
    expect(journaled.get(basename(d.tracePath))).toBe(readFileSync(d.tracePath, 'utf8'));
    // close() syncs the files and drops the journal; the files stay and the Ward still works.
    await ward.close();
    expect(journalFiles(ward.traceDir).size).toBe(0);
    expect(existsSync(d.tracePath)).toBe(true);
    const after = await ward.evaluate(readIntent('/workspace/after.txt'));
    expect(journalFiles(ward.traceDir).get(basename(after.tracePath))).toBe(readFileSync(after.tracePath, 'utf8'));
    await ward.close();
  });

  it('fsync group commit: concurrent evaluates all resolve with verifying traces, with fewer synced writes than decisions', async () => {
    const stateDir = tempDir();
    const ward = new Ward({ policy: POLICY, stateDir, approvalDir: false, durability: 'fsync' });
    await ward.evaluate(readIntent('/workspace/warm.txt')); // the journal is created and preallocated
    const proto = await fileHandlePrototype(stateDir);
    const writes = vi.spyOn(proto as { write: (...a: unknown[]) => unknown }, 'write');
    const syncs = vi.spyOn(proto as { datasync: (...a: unknown[]) => unknown }, 'datasync');
    const n = 32;
    const decisions = await Promise.all(Array.from({ length: n }, (_, i) => ward.evaluate(readIntent(`/workspace/c${i}.txt`))));
    const synced = writes.mock.calls.length + syncs.mock.calls.length;
    expect(synced).toBeGreaterThanOrEqual(1);
    expect(synced).toBeLessThan(n);
    const keys = loadKeyRing(stateDir);
    const journaled = journalFiles(ward.traceDir);
    expect(new Set(decisions.map((d) => d.tracePath)).size).toBe(n);
    for (const d of decisions) {
      expect(verifyTraceFile(d.tracePath, keys).ok).toBe(true);
      expect(journaled.get(basename(d.tracePath))).toBe(readFileSync(d.tracePath, 'utf8'));
    }
    await ward.close();
  });

  it('fsync fails closed: a journal write that fails rejects evaluate and leaves no trace file', async () => {
    const stateDir = tempDir();
    const ward = new Ward({ policy: POLICY, stateDir, approvalDir: false, durability: 'fsync' });
    await ward.evaluate(readIntent('/workspace/warm.txt'));
    const before = readdirSync(ward.traceDir).sort();
    const proto = await fileHandlePrototype(stateDir);
    vi.spyOn(proto as { write: (...a: unknown[]) => unknown }, 'write').mockRejectedValue(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
    vi.spyOn(proto as { datasync: (...a: unknown[]) => unknown }, 'datasync').mockRejectedValue(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const failed = await Promise.allSettled([ward.evaluate(readIntent('/workspace/x.txt')), ward.evaluate(readIntent('/workspace/y.txt'))]);
    for (const f of failed) {
      expect(f.status).toBe('rejected');
      const err = (f as PromiseRejectedResult).reason as WardError;
      expect(err).toBeInstanceOf(WardError);
      expect(err.code).toBe(ERROR_CODES.STORAGE_FULL);
      expect(err.message).toMatch(/EIO/);
    }
    expect(readdirSync(ward.traceDir).sort()).toEqual(before);
  });

  it('write fails closed: an unwritable trace directory rejects evaluate', async () => {
    const stateDir = tempDir();
    const ward = new Ward({ policy: POLICY, stateDir, approvalDir: false });
    await ward.evaluate(readIntent());
    rmSync(ward.traceDir, { recursive: true });
    writeFileSync(ward.traceDir, 'not a directory');
    await expect(ward.evaluate(readIntent('/workspace/b.txt'))).rejects.toMatchObject({ code: ERROR_CODES.IO, message: expect.stringMatching(/write trace/) });
  });

  it('per call: durability on evaluate overrides the Ward, and a wrong value is refused', async () => {
    const ward = new Ward({ policy: POLICY, stateDir: tempDir(), approvalDir: false });
    const d = await ward.evaluate(readIntent(), { durability: 'fsync' });
    expect(journalFiles(ward.traceDir).get(basename(d.tracePath))).toBe(readFileSync(d.tracePath, 'utf8'));
    await expect(ward.evaluate(readIntent(), { durability: 'sync' as 'fsync' })).rejects.toMatchObject({ code: ERROR_CODES.USAGE });
    expect(() => new Ward({ policy: POLICY, stateDir: tempDir(), durability: 'disk' as 'fsync' })).toThrow(/durability must be 'write' or 'fsync'/);
    await ward.close();
  });

  it('rebuilds trace files from a journal left by a process that died', async () => {
    const stateDir = tempDir();
    const ward = new Ward({ policy: POLICY, stateDir, approvalDir: false, durability: 'fsync' });
    const d = await ward.evaluate(readIntent());
    const text = readFileSync(d.tracePath, 'utf8');
    await ward.close();
    // A dead writer's journal holding a trace whose file was lost (as after a power loss).
    const lost = basename(d.tracePath).replace(/_([0-9a-f]{24})\.json$/, '_000000000000000000000000.json');
    mkdirSync(`${ward.traceDir}.journal`, { recursive: true });
    writeFileSync(join(`${ward.traceDir}.journal`, 'journal_999999999_abcdef.jsonl'), JSON.stringify([[lost, text]]) + '\n');
    const next = new Ward({ policy: POLICY, stateDir, approvalDir: false });
    expect(readFileSync(join(next.traceDir, lost), 'utf8')).toBe(text);
    expect(readdirSync(`${ward.traceDir}.journal`)).toEqual([]);
  });
});
