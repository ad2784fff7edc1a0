import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addSeconds, parseRFC3339 } from '../../src/canon/index.js';
import { buildTraceRecord, signTrace, verifyTracePath, writeTrace } from '../../src/trace/index.js';
import { distModule, runConcurrently } from './spawn.js';
import { V7_TRACE_TEXT, v7PublicKey, v7SigningKey, v7TraceInput } from './fixtures.js';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'ward-trace-'));

function signedAt(second: number) {
  const input = v7TraceInput();
  return signTrace(buildTraceRecord({ ...input, observedAt: addSeconds(input.observedAt, second) }, 'ward'), v7SigningKey());
}

describe('writeTrace', () => {
  it('writes 2-space JSON and a newline, mode 0600, creating the directory', () => {
    const dir = join(tempDir(), 'nested', 'traces');
    const trace = JSON.parse(V7_TRACE_TEXT);
    const path = writeTrace(trace, { dir });
    expect(path).toBe(join(dir, 'trace_98c069640be42974e73b8b6b.json'));
    expect(readFileSync(path, 'utf8')).toBe(JSON.stringify(trace, null, 2) + '\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('never overwrites a trace with the same trace_id: the next one gets its event_id in the name', () => {
    const dir = tempDir();
    const first = writeTrace(signedAt(0), { dir });
    const second = writeTrace(signedAt(1), { dir });
    const again = writeTrace(signedAt(1), { dir });
    expect(first).toMatch(/trace_98c069640be42974e73b8b6b\.json$/);
    expect(second).toBe(join(dir, `trace_98c069640be42974e73b8b6b_${signedAt(1)['event_id']}.json`));
    expect(again).toMatch(/trace_98c069640be42974e73b8b6b_[0-9a-f]{24}_[0-9a-f]{8}\.json$/);
    expect(verifyTracePath(dir, [v7PublicKey()]).summary).toEqual({ total: 3, verified: 3, failed: 0 });
  });

  it('writes an explicit path exactly, and refuses relative paths that climb out', () => {
    const dir = tempDir();
    const path = writeTrace(signedAt(0), { dir, path: 'out/t.json', cwd: dir });
    expect(path).toBe(join(dir, 'out', 't.json'));
    expect(() => writeTrace(signedAt(0), { dir, path: '../t.json', cwd: dir })).toThrow(
      'relative trace path must not traverse parent directories',
    );
  });

  it('loses no trace when 8 processes write the same trace_id at once', async () => {
    const dir = tempDir();
    const code = `
      import { writeTrace } from ${JSON.stringify(distModule('trace/write.js'))};
      const record = JSON.parse(process.argv[2]);
      process.stdout.write(writeTrace(record, { dir: process.argv[1] }));`;
    const records = Array.from({ length: 8 }, (_, i) => signedAt(i));
    const paths = await runConcurrently(code, records.map((record) => [dir, JSON.stringify(record)]));
    expect(new Set(paths).size).toBe(8);
    expect(readdirSync(dir).filter((name) => name.startsWith('trace_')).length).toBe(8);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const eventIds = paths.map((path) => JSON.parse(readFileSync(path, 'utf8'))['event_id']).sort();
    expect(eventIds).toEqual(records.map((record) => record['event_id']).sort());
    expect(verifyTracePath(dir, [v7PublicKey()]).summary.verified).toBe(8);
  });
});

describe('trace observed_at', () => {
  it('changes event_id but never trace_id', () => {
    const a = signedAt(0);
    const b = buildTraceRecord({ ...v7TraceInput(), observedAt: parseRFC3339('2027-01-01T00:00:00.000000001Z') }, 'gait');
    expect(b['trace_id']).toBe(a['trace_id']);
    expect(b['event_id']).not.toBe(a['event_id']);
    expect(b['observed_at']).toBe('2027-01-01T00:00:00.000000001Z');
  });
});
