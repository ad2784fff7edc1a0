import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { JournalTraceSink, recoverJournals } from '../../../src/mcp/proxy/journal-sink.js';
import { readSegment } from '../../../src/state/journal.js';
import { traceFileText } from '../../../src/trace/write.js';
import type { SignedTrace } from '../../../src/trace/record.js';
import { tempDir } from '../../cli/run.js';

const hex = (n: number, width = 24) => n.toString(16).padStart(width, '0');
const trace = (i: number) => ({ trace_id: hex(i), event_id: hex(i + 1_000_000), verdict: 'allow', tool_name: 'echo' }) as unknown as SignedTrace;

describe('journal trace sink, --trace-sync write', () => {
  it('acknowledges once the journal record is in the file (visible to any other process), then writes every trace file', async () => {
    const dir = tempDir('ward-journal-write-');
    const sink = new JournalTraceSink(join(dir, 'traces'), join(dir, 'journal'), 'write');
    await sink.write(trace(0)); // the first write waits for the preallocated journal
    const locations: string[] = [];
    for (let i = 1; i <= 20; i++) locations.push(await sink.write(trace(i)));
    const [journal] = readdirSync(join(dir, 'journal'));
    expect(readSegment(join(dir, 'journal', journal!)).records).toHaveLength(21);
    await sink.close();
    expect(readdirSync(join(dir, 'journal'))).toEqual([]);
    for (const [i, loc] of locations.entries()) expect(readFileSync(loc, 'utf8')).toBe(traceFileText(trace(i + 1)));
  });

  it('every acknowledged trace survives a kill -9 of the writer: the next start recovers it from the journal', () => {
    const dir = tempDir('ward-journal-kill-');
    const sinkUrl = pathToFileURL(join(process.cwd(), 'dist', 'mcp', 'proxy', 'journal-sink.js')).href;
    // The child acknowledges traces on stdout as their writes resolve, then dies without closing the sink.
    const script = `
      const { JournalTraceSink } = await import(${JSON.stringify(sinkUrl)});
      const sink = new JournalTraceSink(${JSON.stringify(join(dir, 'traces'))}, ${JSON.stringify(join(dir, 'journal'))}, 'write');
      const hex = (n) => n.toString(16).padStart(24, '0');
      for (let i = 0; i < 200; i++) {
        await sink.write({ trace_id: hex(i), event_id: hex(i + 1000000), verdict: 'allow', tool_name: 'echo' });
        process.stdout.write(i + '\\n');
      }
      process.kill(process.pid, 'SIGKILL');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.signal).toBe('SIGKILL');
    const acked = child.stdout.split('\n').filter(Boolean).map(Number);
    expect(acked).toHaveLength(200);
    recoverJournals(join(dir, 'traces'), join(dir, 'journal'));
    for (const i of acked) {
      const name = `trace_${hex(i)}_${hex(i + 1_000_000)}.json`;
      expect(readFileSync(join(dir, 'traces', name), 'utf8')).toBe(traceFileText(trace(i)));
    }
    expect(readdirSync(join(dir, 'journal'))).toEqual([]);
  });
});

describe('journal trace sink, upgrade', () => {
  it('recovers a JSON-lines journal left by the previous version (dead writer) when it starts, torn last line ignored', async () => {
    const dir = tempDir('ward-journal-upgrade-');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(join(dir, 'journal'), { recursive: true });
    const t = trace(42);
    const name = `trace_${hex(42)}_${hex(42 + 1_000_000)}.json`;
    // pid 2^22+1 is above Linux's default pid_max: no such process.
    writeFileSync(join(dir, 'journal', 'journal_4194305_abcdef.jsonl'), JSON.stringify([[name, traceFileText(t)]]) + '\n[["trace_torn', { mode: 0o600 });
    const sink = new JournalTraceSink(join(dir, 'traces'), join(dir, 'journal'), 'write');
    expect(readFileSync(join(dir, 'traces', name), 'utf8')).toBe(traceFileText(t));
    expect(readdirSync(join(dir, 'journal')).filter((n) => n.endsWith('.jsonl'))).toEqual([]);
    await sink.close();
  });
});
