import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../cli/run.js';
import type { TelemetryConfig } from '../../src/telemetry/config.js';
import type { DecisionRecord } from '../../src/telemetry/decision-record.js';
import type * as TelemetryModule from '../../src/telemetry/telemetry.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

// The telemetry thread runs dist/telemetry/telemetry-worker.js: the built module, as the hosts load it.
const { startTelemetry } = (await import(pathToFileURL(join(REPO, 'dist', 'telemetry', 'telemetry.js')).href)) as typeof TelemetryModule;
const { telemetryConfig } = (await import(pathToFileURL(join(REPO, 'dist', 'telemetry', 'config.js')).href)) as typeof import('../../src/telemetry/config.js');

const PARENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

function record(i: number, verdict = 'allow'): DecisionRecord {
  return {
    host: 'mcp-proxy',
    operation: 'tools/call',
    mcpMethod: 'tools/call',
    toolName: 'notes.read',
    verdict,
    reasonCodes: [verdict === 'block' ? 'rule_block' : 'default_allow'],
    matchedRule: '',
    policyDigest: 'a'.repeat(64),
    intentDigest: 'b'.repeat(64),
    traceId: `trace-${i}`,
    correlationId: `s:${i}`,
    mcpSessionId: 's',
    jsonRpcId: String(i),
  };
}

const idsOf = (traceparent: string | undefined) => {
  const [, traceId, spanId, flags] = (traceparent ?? '').split('-');
  return { traceId: traceId!, spanId: spanId!, sampled: flags === '01' };
};

describe('the telemetry thread (ward serve, ward mcp proxy)', () => {
  let receiver: OtlpReceiver;
  const saved = { ...process.env };
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });
  afterEach(() => {
    for (const key of ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_BSP_SCHEDULE_DELAY']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });
  const config = (): TelemetryConfig => {
    // The SDK (and the thread, which copies the environment when it starts) reads the standard variables.
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = receiver.endpoint;
    return { ...telemetryConfig({ otel: true }, {})!, signals: { traces: true, metrics: undefined, logs: 'http/protobuf' } };
  };

  it('exports what the in-process exporter exports: the span under the forwarded ids, its parent, attributes, end and log record', async () => {
    const seen: Record<string, { name: string; parentSpanId: string; attributes: Record<string, unknown>; status: string; events: string[]; logSpan: string | undefined }> = {};
    for (const thread of [false, true]) {
      const t = await startTelemetry(config(), 'mcp-proxy', { thread });
      const open = t.request(record(thread ? 2 : 1), { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` }, Date.now() - 5);
      open.end(-32001);
      await t.shutdown();
      const { traceId, spanId, sampled } = idsOf(open.carrier?.traceparent);
      expect(sampled).toBe(true);
      expect(traceId).toBe(PARENT_TRACE);
      const span = receiver.spans.find((s) => s.spanId === spanId);
      expect(span, `thread=${thread}: a span with the forwarded span id`).toBeDefined();
      const log = receiver.logs.find((l) => l.attributes['ward.trace_id'] === `trace-${thread ? 2 : 1}`);
      seen[String(thread)] = {
        name: span!.name,
        parentSpanId: span!.parentSpanId,
        attributes: { ...span!.attributes, 'ward.trace_id': 'x', 'gen_ai.tool.call.id': 'x', 'jsonrpc.request.id': 'x' },
        status: span!.status,
        events: span!.events.map((e) => e.name),
        logSpan: log?.spanId === spanId ? 'ward span' : log?.spanId,
      };
    }
    expect(seen['true']).toEqual(seen['false']);
    expect(seen['true']).toMatchObject({ name: 'tools/call notes.read', parentSpanId: PARENT_SPAN, status: 'STATUS_CODE_ERROR', events: ['ward.decision'], logSpan: 'ward span' });
    expect(seen['true']!.attributes).toMatchObject({ 'ward.verdict': 'allow', 'error.type': '-32001', 'mcp.method.name': 'tools/call' });
  });

  it('samples where it decides: the forwarded flags and the exported spans agree (OTEL_TRACES_SAMPLER)', async () => {
    process.env['OTEL_TRACES_SAMPLER'] = 'traceidratio';
    process.env['OTEL_TRACES_SAMPLER_ARG'] = '0.5';
    const t = await startTelemetry(config(), 'mcp-proxy', { thread: true });
    const carriers = Array.from({ length: 200 }, (_, i) => t.request(record(1000 + i), undefined, Date.now()));
    // A parent that says "not sampled" is followed (parent-based): no span, flags 00.
    const unsampledChild = t.request(record(2000), { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-00` }, Date.now());
    for (const c of [...carriers, unsampledChild]) c.end();
    await t.shutdown();
    const ids = carriers.map((c) => idsOf(c.carrier?.traceparent));
    const sampled = new Set(ids.filter((i) => i.sampled).map((i) => i.spanId));
    expect(sampled.size).toBeGreaterThan(40);
    expect(sampled.size).toBeLessThan(160);
    const exported = new Set(receiver.spans.filter((s) => ids.some((i) => i.spanId === s.spanId)).map((s) => s.spanId));
    expect([...exported].sort()).toEqual([...sampled].sort());
    expect(idsOf(unsampledChild.carrier?.traceparent)).toMatchObject({ traceId: PARENT_TRACE, sampled: false });
    expect(receiver.spans.some((s) => s.spanId === idsOf(unsampledChild.carrier?.traceparent).spanId)).toBe(false);
    // Every decision still gets its log record, sampled or not.
    expect(receiver.logs.filter((l) => String(l.attributes['ward.trace_id']).match(/^trace-(1\d\d\d|2000)$/)).length).toBe(201);
  });

  it('counts what it could not hand over instead of queueing it without bound', async () => {
    // At most 4 × maxQueue items in flight to the thread: 101 decisions in one turn are 101 items over a bound of 16.
    const t = await startTelemetry({ ...config(), maxQueue: 4 }, 'serve', { thread: true });
    for (let i = 0; i < 101; i++) t.decision(record(3000 + i), undefined);
    await t.shutdown();
    expect(t.stats()).toMatchObject({ droppedSpans: 101, droppedLogRecords: 101 });
    expect(receiver.logs.some((l) => String(l.attributes['ward.trace_id']).startsWith('trace-30'))).toBe(false);
  });
});

describe('the telemetry thread at shutdown', () => {
  it('counts a decision that concludes after shutdown began instead of losing it silently', async () => {
    const t = await startTelemetry({ ...telemetryConfig({ otel: true }, {})!, signals: { traces: true, metrics: undefined, logs: 'http/protobuf' } }, 'serve', { thread: true });
    await t.shutdown(200);
    t.decision(record(4000), undefined);
    // The late item is handed over within the hand-over interval (250 ms), then counted.
    for (let i = 0; i < 40 && t.stats().droppedLogRecords === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(t.stats()).toMatchObject({ droppedSpans: 1, droppedLogRecords: 1 });
  });
});

describe('a telemetry thread that dies', () => {
  it('loses nothing silently: what it held and everything after is counted, and said once on stderr', async () => {
    const { startTelemetryThread } = (await import(pathToFileURL(join(REPO, 'dist', 'telemetry', 'telemetry-thread.js')).href)) as typeof import('../../src/telemetry/telemetry-thread.js');
    // A thread that starts, reports two spans and a log record waiting in its exporters, then dies on the first batch it is given.
    const dir = mkdtempSync(join(tmpdir(), 'ward-telemetry-thread-'));
    const dying = join(dir, 'dying-worker.mjs');
    writeFileSync(
      dying,
      `import { parentPort } from 'node:worker_threads';
const zero = { droppedSpans: 0, failedSpans: 0, droppedLogLines: 0, droppedLogRecords: 0, failedLogRecords: 0, failedMetricExports: 0 };
parentPort.on('message', (m) => { if (m.type === 'items') process.exit(3); });
parentPort.postMessage({ type: 'ready' });
parentPort.postMessage({ type: 'stats', done: 0, stats: zero, held: { ...zero, droppedSpans: 2, droppedLogRecords: 1 } });`,
    );
    const config = { ...telemetryConfig({ otel: true, decisionLog: join(dir, 'd.jsonl') }, {})!, signals: { traces: true, metrics: undefined, logs: 'http/protobuf' as const } };
    const stderr: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (stderr.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      const sink = await startTelemetryThread(config, 'serve', {}, pathToFileURL(dying));
      await new Promise((r) => setTimeout(r, 50)); // its stats message arrives
      const plan = { name: 'ward.decide x', kind: 'server' as const, traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), start: 1 };
      sink.record([
        { type: 'decision', record: record(5000), at: 2, parent: undefined, span: plan, open: false },
        { type: 'decision', record: record(5001), at: 2, parent: undefined, span: undefined, open: false },
      ]);
      for (let i = 0; i < 100 && !stderr.some((l) => l.includes('telemetry thread exited')); i++) await new Promise((r) => setTimeout(r, 20));
      // After it died: counted, not sent.
      sink.record([{ type: 'decision', record: record(5002), at: 3, parent: undefined, span: undefined, open: false }]);
      // Held (2 spans, 1 record) + the batch in flight (1 span, 2 records, 2 lines) + the late one (1 record, 1 line).
      expect(sink.stats()).toMatchObject({ droppedSpans: 3, droppedLogRecords: 4, droppedLogLines: 3 });
      expect(stderr.filter((l) => l.includes('telemetry thread exited (3)'))).toHaveLength(1);
      await sink.shutdown(100);
    } finally {
      process.stderr.write = write;
    }
  });
});

describe('a collector that accepts and never answers', () => {
  it('holds nothing: spans past the export queue are dropped and counted, and shutdown ends within its bound', async () => {
    const { createServer } = await import('node:http');
    const held: import('node:http').ServerResponse[] = [];
    const hanging = createServer((_req, res) => void held.push(res));
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const saved = process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = `http://127.0.0.1:${(hanging.address() as import('node:net').AddressInfo).port}`;
    try {
      const config = { ...telemetryConfig({ otel: true }, {})!, signals: { traces: true, metrics: undefined, logs: undefined }, maxQueue: 64 };
      const t = await startTelemetry(config, 'serve', { thread: true });
      // 600 decisions in batches the thread takes (under its in-flight bound of 256), more than its export queue of 64 holds.
      for (let i = 0; i < 600; i++) {
        t.decision(record(6000 + i), undefined);
        if (i % 100 === 99) await new Promise((r) => setTimeout(r, 300));
      }
      const stopping = t.shutdown(300);
      let stopped = false;
      void stopping.then(() => (stopped = true));
      // The flush bound (300 ms) plus the thread's (250 ms): well inside 5 s whatever the collector does.
      for (let i = 0; i < 100 && !stopped; i++) await new Promise((r) => setTimeout(r, 50));
      expect(stopped).toBe(true);
      expect(t.stats().droppedSpans).toBeGreaterThan(0);
      expect(held.length).toBeGreaterThan(0);
    } finally {
      if (saved === undefined) delete process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
      else process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = saved;
      hanging.closeAllConnections();
      await new Promise((r) => hanging.close(r));
    }
  }, 20_000);
});
