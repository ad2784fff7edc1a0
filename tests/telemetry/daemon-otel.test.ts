import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, ward } from '../cli/run.js';
import { call, intent, startDaemon, workdir, type DaemonChild } from '../daemon/helpers.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

// `ward serve --otel` against a real OTLP/HTTP receiver in this process (docs/observability.md).

const SECRET = 'SECRET-ARG-VALUE-7f3a91';
const PARENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

/** A call that the baseline policy blocks, with an argument value that must never leave Ward. */
function secretIntent(): Record<string, unknown> {
  const i = intent('delete-database');
  return { ...i, args: { ...(i['args'] as object), note: SECRET } };
}

let receiver: OtlpReceiver;
let daemon: DaemonChild;
let w: ReturnType<typeof workdir>;
let log: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  w = workdir();
  log = join(w.dir, 'decisions.jsonl');
  daemon = await startDaemon(['--policy', w.policy, '--ingest-interval-ms', '0', '--otel', '--decision-log', log], {
    cwd: w.dir,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'ward-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
      OTEL_BLRP_SCHEDULE_DELAY: '50',
    },
  });
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await receiver?.close();
});

describe('ward serve --otel', () => {
  it('exports one span per decision, child of the request traceparent, with Ward attributes and no argument values', async () => {
    const r = await call(daemon.url, '/v1/gate/eval', {
      body: { intent: secretIntent() },
      headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01`, tracestate: 'vendor=abc' },
    });
    expect(r.status).toBe(200);
    expect(r.json.verdict).toBe('block');
    const [span] = await receiver.waitForSpans(1);
    expect(receiver.contentTypes[0]).toBe('application/x-protobuf');
    expect(span!.name).toBe('ward.decide fs.delete_file');
    expect(span!.kind).toBe('SPAN_KIND_SERVER');
    expect(span!.traceId).toBe(PARENT_TRACE);
    expect(span!.parentSpanId).toBe(PARENT_SPAN);
    expect(span!.resource['service.name']).toBe('ward-under-test');
    expect(span!.resource['deployment.environment']).toBe('test');
    expect(span!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'fs.delete_file',
      'ward.host': 'serve',
      'ward.operation': 'gate.eval',
      'ward.verdict': 'block',
      'ward.reason_codes': r.json.reason_codes,
      'ward.matched_rule': r.json.matched_rule,
      'ward.policy_digest': r.json.policy_digest,
      'ward.intent_digest': r.json.intent_digest,
      'ward.trace_id': r.json.trace_id,
      'ward.trace_path': r.json.trace_path,
    });
    const exported = Buffer.concat(receiver.bodies);
    expect(exported.includes(SECRET)).toBe(false);
    expect(exported.includes('/workspace/prod.db')).toBe(false);
    expect(exported.includes(r.json.trace_id as string)).toBe(true); // the check above can see strings
  });

  it('starts a new trace for a request without traceparent and ignores an invalid one', async () => {
    const before = receiver.spans.length;
    const a = await call(daemon.url, '/v1/gate/eval', { body: { intent: intent('read-report') } });
    const b = await call(daemon.url, '/v1/gate/eval', { body: { intent: intent('read-report') }, headers: { traceparent: '00-zz-not-valid-01' } });
    expect([a.status, b.status]).toEqual([200, 200]);
    const spans = (await receiver.waitForSpans(before + 2)).slice(before);
    for (const s of spans) {
      expect(s.parentSpanId).toBe('');
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.traceId).not.toBe(PARENT_TRACE);
      expect(s.attributes['ward.verdict']).toBe(a.json.verdict);
    }
    expect(new Set(spans.map((s) => s['attributes']['ward.trace_id']))).toEqual(new Set([a.json.trace_id, b.json.trace_id]));
  });

  it('writes one decision-log line per decision, carrying the span ids and the signed trace id', async () => {
    const r = await call(daemon.url, '/v1/gate/eval/batch', {
      body: { requests: [{ intent: intent('read-report') }, { intent: secretIntent() }] },
      headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` },
    });
    expect(r.status).toBe(200);
    const ids = (r.json.results as { trace_id: string }[]).map((x) => x.trace_id);
    const batchLines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['ward.operation'] === 'gate.eval.batch');
    for (let i = 0; i < 50 && batchLines().length < 2; i++) await new Promise((res) => setTimeout(res, 100));
    const mine = batchLines();
    expect(mine.map((l) => l['ward.trace_id']).sort()).toEqual([...ids].sort());
    expect(mine).toHaveLength(2);
    for (const l of mine) {
      expect(l['schema']).toBe('ward.decision_log/v1');
      expect(l['otel.trace_id']).toBe(PARENT_TRACE);
      expect(l['otel.span_id']).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(readFileSync(log, 'utf8').includes(SECRET)).toBe(false);
    // The line names a signed trace the daemon holds, which verifies.
    await expectSignedTrace(mine.find((l) => l['ward.verdict'] === 'block')!);
  });

  it('exports each decision as an OTLP log record: the span attributes, in the span, naming a signed trace that verifies', async () => {
    await receiver.waitFor(() => receiver.logs.filter((l) => l.attributes['ward.operation'] === 'gate.eval.batch').length >= 2, 'the batch decisions as log records');
    const records = receiver.logs.filter((l) => l.attributes['ward.operation'] === 'gate.eval.batch');
    expect(records).toHaveLength(2);
    for (const record of records) {
      // (a signed trace's id is not unique across decisions: equal intents and outcomes share it)
      const span = receiver.spans.find((s) => s.attributes['ward.operation'] === 'gate.eval.batch' && s.attributes['ward.trace_id'] === record.attributes['ward.trace_id'])!;
      expect(span).toBeDefined();
      expect(record.eventName).toBe('ward.decision');
      expect(record.traceId).toBe(PARENT_TRACE);
      expect(record.spanId).toBe(span.spanId);
      expect(record.attributes).toEqual(span.attributes);
      expect(record.resource['service.name']).toBe('ward-under-test');
      expect(record.severityNumber).toBe(record.attributes['ward.verdict'] === 'block' ? 13 : 9);
      expect(record.body).toBe(`${String(record.attributes['ward.verdict'])} ${String(record.attributes['gen_ai.tool.name'])}`);
    }
    await expectSignedTrace(records.find((l) => l.attributes['ward.verdict'] === 'block')!.attributes);
  });
});

describe('ward serve --otel: the decision service and the hook endpoints', () => {
  it('export a span per /v1/evaluate and /v1/hooks/<host> decision, child of the traceparent, naming its trace file; no argument value', async () => {
    const headers = { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` };
    const evaluated = await call(daemon.url, '/v1/evaluate', { body: { call: JSON.parse(readFileSync(join(REPO, 'fixtures', 'mcp-compat', 'call-mcp-read.json'), 'utf8')) }, headers });
    expect(evaluated.status).toBe(200);
    const hooked = await call(daemon.url, '/v1/hooks/claude-code', { raw: readFileSync(join(REPO, 'fixtures', 'claude-code', 'pre-bash-rm.json'), 'utf8'), headers: { ...headers, 'content-type': 'application/json' } });
    expect(hooked.status).toBe(200);
    const of = (operation: string) => receiver.spans.find((s) => s.attributes['ward.operation'] === operation);
    await receiver.waitFor(() => of('evaluate') !== undefined && of('hook.claude-code') !== undefined, 'the evaluate and hook spans');
    const evaluate = of('evaluate')!;
    expect(evaluate.name).toBe(`ward.decide ${String(evaluated.json.tool_name)}`);
    expect(evaluate.attributes['ward.verdict']).toBe(evaluated.json.verdict);
    const hook = of('hook.claude-code')!;
    expect(hook.name).toBe('ward.decide tool.exec');
    for (const span of [evaluate, hook]) {
      expect([span.traceId, span.parentSpanId, span.kind]).toEqual([PARENT_TRACE, PARENT_SPAN, 'SPAN_KIND_SERVER']);
      expect(existsSync(String(span.attributes['ward.trace_path']))).toBe(true);
      const trace = JSON.parse(readFileSync(String(span.attributes['ward.trace_path']), 'utf8')) as Record<string, unknown>;
      expect([trace['trace_id'], trace['verdict']]).toEqual([span.attributes['ward.trace_id'], span.attributes['ward.verdict']]);
    }
    expect(Buffer.concat(receiver.bodies).includes('rm -rf /workspace/build')).toBe(false);
    expect('ward.targets' in hook.attributes).toBe(false); // no --otel-targets
  });
});

/** A decision's telemetry fields name a signed trace the daemon holds; it verifies with `ward trace verify` and matches. */
async function expectSignedTrace(fields: Record<string, unknown>): Promise<void> {
  const eventId = String(fields['ward.trace_path']).slice('store:trace/'.length);
  const got = await call(daemon.url, `/v1/traces/${eventId}`);
  const trace = got.json.trace as Record<string, unknown>;
  expect(trace['trace_id']).toBe(fields['ward.trace_id']);
  expect([trace['verdict'], trace['policy_digest'], trace['intent_digest']]).toEqual([fields['ward.verdict'], fields['ward.policy_digest'], fields['ward.intent_digest']]);
  const file = join(w.dir, `trace-${eventId}.json`);
  writeFileSync(file, JSON.stringify(trace));
  const verified = ward(['trace', 'verify', file, '--daemon', daemon.url, '--json'], { cwd: w.dir });
  expect(verified.code).toBe(0);
}

describe('ward serve --otel metrics', () => {
  /** The Prometheus exposition's series: name → kind, and `name{labels}` → value. */
  function prometheus(text: string) {
    const kinds = new Map<string, string>();
    const values = new Map<string, number>();
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) kinds.set(type[1]!, type[2]!);
      else if (line && !line.startsWith('#')) values.set(line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
    return { kinds, values };
  }

  it('exports the /metrics series over OTLP with the same names, units, kinds and values', async () => {
    // The earlier tests decided a block, allows and a batch; nothing decides from here on.
    const prom = prometheus((await call(daemon.url, '/metrics')).text);
    const blocks = prom.values.get('ward_decisions_total{verdict="block"}')!;
    expect(blocks).toBeGreaterThanOrEqual(2);
    const from = receiver.points.length;
    const exported = () => receiver.points.slice(from);
    const latest = (name: string, labels: Record<string, string> = {}) =>
      exported()
        .filter((p) => p.name === name && Object.entries(labels).every(([k, v]) => p.attributes[k] === v))
        .at(-1);
    await receiver.waitFor(() => latest('ward_decisions_total', { verdict: 'block' })?.value === blocks, 'an export with the decisions /metrics shows');

    const kindOf = { counter: 'sum', gauge: 'gauge', histogram: 'histogram' } as Record<string, string>;
    for (const [name, kind] of prom.kinds) {
      const point = latest(name);
      expect(point, name).toBeDefined();
      expect(point!.kind, name).toBe(kindOf[kind]);
      expect(point!.unit, name).toBe(name.endsWith('_seconds') ? 's' : '1');
      if (kind !== 'gauge') expect(point!.temporality, name).toBe('AGGREGATION_TEMPORALITY_CUMULATIVE');
      if (kind === 'counter') expect(point!.monotonic, name).toBe(true);
    }
    expect(exported().every((p) => p.resource['service.name'] === 'ward-under-test')).toBe(true);

    // Decisions by verdict and reason, as /metrics counts them.
    const reasons = exported().filter((p) => p.name === 'ward_decision_reasons_total' && p.attributes['verdict'] === 'block');
    expect(reasons.length).toBeGreaterThan(0);
    for (const p of reasons) expect(p.value).toBe(prom.values.get(`ward_decision_reasons_total{reason="${String(p.attributes['reason'])}",verdict="block"}`));

    // The decision latency histogram: same bounds, same count and per-bucket counts (Prometheus's are cumulative).
    const h = latest('ward_eval_duration_seconds')!;
    expect(h.count).toBe(prom.values.get('ward_eval_duration_seconds_count'));
    const les = [...prom.values.keys()].filter((k) => k.startsWith('ward_eval_duration_seconds_bucket{') && !k.includes('+Inf')).map((k) => Number(/le="([^"]+)"/.exec(k)![1]));
    expect(h.bounds).toEqual(les);
    let cumulative = 0;
    h.bounds!.forEach((le, i) => {
      cumulative += h.bucketCounts![i]!;
      expect(cumulative).toBe(prom.values.get(`ward_eval_duration_seconds_bucket{le="${le}"}`));
    });
    expect(cumulative + h.bucketCounts![h.bounds!.length]!).toBe(h.count);
    // Queue depth and refusals are there too (a gauge, a counter by cause).
    expect(latest('ward_trace_queue_depth')?.kind).toBe('gauge');
    expect(latest('ward_http_rejected_total')?.kind).toBe('sum');
    expect(Buffer.concat(receiver.bodies).includes(SECRET)).toBe(false);
  });
});

describe('ward serve --otel with the collector down', () => {
  it('keeps deciding at full speed and keeps the decision log', async () => {
    const dead = await startOtlpReceiver();
    const endpoint = dead.endpoint;
    await dead.close(); // nothing listens there any more
    const w2 = workdir();
    const log2 = join(w2.dir, 'decisions.jsonl');
    const d = await startDaemon(['--policy', w2.policy, '--ingest-interval-ms', '0', '--otel', '--decision-log', log2], {
      cwd: w2.dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '10', OTEL_BLRP_SCHEDULE_DELAY: '10', OTEL_EXPORTER_OTLP_TIMEOUT: '2000' },
    });
    try {
      const replies = await Promise.all(Array.from({ length: 40 }, () => call(d.url, '/v1/gate/eval', { body: { intent: intent('delete-database') } })));
      expect(replies.map((r) => r.status)).toEqual(Array(40).fill(200));
      expect(new Set(replies.map((r) => r.json.verdict))).toEqual(new Set(['block']));
      for (let i = 0; i < 50 && (!existsSync(log2) || readFileSync(log2, 'utf8').trim().split('\n').length < 40); i++) await new Promise((res) => setTimeout(res, 100));
      expect(readFileSync(log2, 'utf8').trim().split('\n')).toHaveLength(40);
      // The loss is counted where operators look: GET /metrics.
      const lost = async (what: string) => Number(new RegExp(`^ward_telemetry_lost\\{what="${what}"\\} (\\d+)$`, 'm').exec((await call(d.url, '/metrics')).text)?.[1] ?? NaN);
      for (let i = 0; i < 200 && ((await lost('spans_failed')) < 40 || (await lost('log_records_failed')) < 40); i++) await new Promise((res) => setTimeout(res, 100));
      expect(await lost('spans_failed')).toBe(40);
      expect(await lost('log_records_failed')).toBe(40);
      expect(await lost('log_lines')).toBe(0);
    } finally {
      // Shutdown is bounded even with the export failing.
      expect(await d.stop()).toBe(0);
    }
  }, 60_000);
});

describe('ward serve --decision-log - (stdout)', () => {
  it('writes every decision to stdout from the telemetry thread, all of them by the time the daemon has stopped', async () => {
    const w3 = workdir();
    const d = await startDaemon(['--policy', w3.policy, '--ingest-interval-ms', '0', '--decision-log', '-'], { cwd: w3.dir });
    let out = '';
    d.proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const traceIds: string[] = [];
    for (const name of ['read-report', 'delete-database', 'read-report'] as const) {
      const r = await call(d.url, '/v1/gate/eval', { body: { intent: intent(name) } });
      expect(r.status).toBe(200);
      traceIds.push(r.json.trace_id as string);
    }
    expect(await d.stop()).toBe(0);
    const lines = out.split('\n').filter((l) => l.includes('"ward.decision_log/v1"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['ward.trace_id'])).toEqual(traceIds);
    expect(lines.map((l) => l['ward.verdict'])).toEqual(['allow', 'block', 'allow']);
  }, 30_000);
});
