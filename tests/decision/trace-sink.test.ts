import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/keys/ed25519.js';
import { parsePolicyYaml } from '../../src/policy/load.js';
import { parseDecisionCapture } from '../../src/trace/capture.js';
import { decideGate, runGate, type GateRuntime } from '../../src/decision/gate-run.js';
import { FileTraceSink, runGateAsync } from '../../src/decision/trace-sink.js';
import { verifyTraceText } from '../../src/trace/verify.js';
import { tempDir } from '../cli/run.js';

const key = generateSigningKey();

function runtime(dir: string, captureIntents = false): GateRuntime {
  return {
    policy: parsePolicyYaml('default_verdict: allow\n'),
    signingKey: key,
    traceFormat: 'ward',
    traceDir: join(dir, 'traces'),
    rateLimitStatePath: join(dir, 'rate.json'),
    profile: 'standard',
    captureIntents,
  };
}

const intent = (n: number) => ({
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-11-21T10:00:00Z',
  producer_version: 'test',
  tool_name: 'fs.read',
  args: { path: `/data/${n}.txt` },
  targets: [{ kind: 'path', value: `/data/${n}.txt`, operation: 'read' }],
  context: { identity: 'alice', workspace: '/repo', risk_class: 'low' },
});

describe('FileTraceSink', () => {
  it('makes every concurrent decision durable under its own name, never overwriting, and each verifies', async () => {
    const dir = tempDir('ward-sink-');
    const rt = runtime(dir);
    const sink = new FileTraceSink(rt.traceDir);
    // 40 identical intents share a trace_id; 20 distinct ones do not.
    const requests = [...Array.from({ length: 40 }, () => intent(0)), ...Array.from({ length: 20 }, (_, i) => intent(i + 1))];
    const results = await Promise.all(requests.map((i) => runGateAsync(sink, rt, { intent: i })));
    await sink.close();
    const paths = results.map((r) => r.tracePath);
    expect(new Set(paths).size).toBe(60);
    expect(readdirSync(rt.traceDir).filter((n) => n.endsWith('.json'))).toHaveLength(60);
    expect(readdirSync(rt.traceDir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    for (const r of results) {
      expect(r.output['trace_path']).toBe(r.tracePath);
      expect(statSync(r.tracePath).mode & 0o777).toBe(0o600);
      const text = readFileSync(r.tracePath, 'utf8');
      expect(verifyTraceText(text, [key]).ok).toBe(true);
      expect(JSON.parse(text).event_id).toBe(r.trace['event_id']);
    }
  });

  it('gives the same decision output as runGate apart from where the trace went', async () => {
    const dir = tempDir('ward-sink-');
    const rt = runtime(dir);
    const sync = runGate(rt, { intent: intent(7), correlationId: 'c' });
    const sink = new FileTraceSink(join(dir, 'async'));
    const viaSink = await runGateAsync(sink, rt, { intent: intent(7), correlationId: 'c' });
    const strip = (o: Record<string, unknown>) => ({ ...o, trace_path: undefined });
    expect(strip(viaSink.output)).toEqual(strip(sync.output));
    expect(viaSink.tracePath.startsWith(join(dir, 'async'))).toBe(true);
  });

  it('writes the capture beside the trace when capturing', async () => {
    const dir = tempDir('ward-sink-');
    const rt = runtime(dir, true);
    const sink = new FileTraceSink(rt.traceDir);
    const pending = decideGate(rt, { intent: intent(3) });
    expect(pending.capture).toBeDefined();
    const path = await sink.write(pending.trace, pending.capture);
    const capture = parseDecisionCapture(readFileSync(join(rt.traceDir, `capture_${String(pending.trace['event_id'])}.json`)));
    expect(capture.trace_id).toBe(pending.trace['trace_id']);
    expect(capture.intent?.['args']).toEqual({ path: '/data/3.txt' });
    expect(pending.finish(path).output['trace_path']).toBe(path);
  });

  it('fails closed when the directory cannot be written', async () => {
    const dir = tempDir('ward-sink-');
    const rt = runtime(dir);
    const sink = new FileTraceSink(join(dir, 'traces'));
    const { rmSync, writeFileSync } = await import('node:fs');
    rmSync(join(dir, 'traces'), { recursive: true });
    writeFileSync(join(dir, 'traces'), 'not a directory');
    await expect(runGateAsync(sink, rt, { intent: intent(1) })).rejects.toThrow(/write trace/);
  });
});
