import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/** One exported span as a collector sees it (ids in hex, attributes as plain values). */
export interface ReceivedSpan {
  name: string;
  kind: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  /** Start and end, epoch milliseconds (sub-millisecond precision kept). */
  startMs: number;
  endMs: number;
  events: { name: string; timeMs: number }[];
  /** `STATUS_CODE_ERROR`, `STATUS_CODE_OK`, or '' (unset). */
  status: string;
}

/** Epoch nanoseconds (a decimal string) as epoch milliseconds. */
const nanosToMs = (n: unknown) => Number(BigInt(String(n ?? 0)) / 1000n) / 1000;

/** One exported metric data point (a sum's or gauge's value, or a histogram's buckets), with its metric's name, unit and kind. */
export interface ReceivedPoint {
  name: string;
  unit: string;
  kind: 'sum' | 'gauge' | 'histogram';
  monotonic?: boolean;
  temporality?: string;
  attributes: Record<string, unknown>;
  value?: number;
  count?: number;
  sum?: number;
  bounds?: number[];
  bucketCounts?: number[];
  resource: Record<string, unknown>;
}

/** One exported log record. */
export interface ReceivedLog {
  body: unknown;
  severityNumber: number;
  eventName: string;
  traceId: string;
  spanId: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Metric points of every metrics export, in arrival order (a cumulative series appears once per export). */
  points: ReceivedPoint[];
  logs: ReceivedLog[];
  /** Every request body received, raw (for privacy checks over the exported bytes). */
  bodies: Buffer[];
  contentTypes: string[];
  /** Resolves once at least `n` spans arrived (or rejects after `ms`). */
  waitForSpans(n: number, ms?: number): Promise<ReceivedSpan[]>;
  /** Resolves once `done()` holds (checked after every export), or rejects after `ms`. */
  waitFor(done: () => boolean, what: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

const root = protobuf.loadSync(fileURLToPath(new URL('./otlp.proto', import.meta.url)));
const Request = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');
const MetricsRequest = root.lookupType('opentelemetry.proto.ExportMetricsServiceRequest');
const LogsRequest = root.lookupType('opentelemetry.proto.ExportLogsServiceRequest');

type Any = { stringValue?: string; boolValue?: boolean; intValue?: unknown; doubleValue?: number; arrayValue?: { values?: Any[] } };
type KV = { key: string; value?: Any };

function valueOf(v: Any | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attrs = (list: KV[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('hex');

/** Decode one OTLP/HTTP protobuf trace export body with the official message definitions. */
export function decodeTraces(body: Uint8Array): ReceivedSpan[] {
  const msg = Request.toObject(Request.decode(body), { enums: String, longs: String, defaults: false }) as {
    resourceSpans?: { resource?: { attributes?: KV[] }; scopeSpans?: { spans?: any[] }[] }[];
  };
  const out: ReceivedSpan[] = [];
  for (const rs of msg.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          name: s.name,
          kind: s.kind,
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          attributes: attrs(s.attributes),
          resource,
          startMs: nanosToMs(s.startTimeUnixNano),
          endMs: nanosToMs(s.endTimeUnixNano),
          events: ((s.events ?? []) as { name: string; timeUnixNano: unknown }[]).map((e) => ({ name: e.name, timeMs: nanosToMs(e.timeUnixNano) })),
          status: String(s.status?.code ?? ''),
        });
      }
    }
  }
  return out;
}

/** Decode one OTLP/HTTP protobuf metrics export body. */
export function decodeMetrics(body: Uint8Array): ReceivedPoint[] {
  const msg = MetricsRequest.toObject(MetricsRequest.decode(body), { enums: String, longs: String, defaults: false }) as {
    resourceMetrics?: { resource?: { attributes?: KV[] }; scopeMetrics?: { metrics?: any[] }[] }[];
  };
  const out: ReceivedPoint[] = [];
  for (const rm of msg.resourceMetrics ?? []) {
    const resource = attrs(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const base = { name: m.name as string, unit: (m.unit ?? '') as string, resource };
        for (const p of m.sum?.dataPoints ?? []) out.push({ ...base, kind: 'sum', monotonic: m.sum.isMonotonic === true, temporality: m.sum.aggregationTemporality, attributes: attrs(p.attributes), value: Number(p.asDouble ?? p.asInt ?? 0) });
        for (const p of m.gauge?.dataPoints ?? []) out.push({ ...base, kind: 'gauge', attributes: attrs(p.attributes), value: Number(p.asDouble ?? p.asInt ?? 0) });
        for (const p of m.histogram?.dataPoints ?? [])
          out.push({
            ...base,
            kind: 'histogram',
            temporality: m.histogram.aggregationTemporality,
            attributes: attrs(p.attributes),
            count: Number(p.count ?? 0),
            sum: Number(p.sum ?? 0),
            bounds: (p.explicitBounds ?? []).map(Number),
            bucketCounts: (p.bucketCounts ?? []).map(Number),
          });
      }
    }
  }
  return out;
}

/** Decode one OTLP/HTTP protobuf logs export body. */
export function decodeLogs(body: Uint8Array): ReceivedLog[] {
  const msg = LogsRequest.toObject(LogsRequest.decode(body), { enums: String, longs: String, defaults: false }) as {
    resourceLogs?: { resource?: { attributes?: KV[] }; scopeLogs?: { logRecords?: any[] }[] }[];
  };
  const out: ReceivedLog[] = [];
  for (const rl of msg.resourceLogs ?? []) {
    const resource = attrs(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        out.push({ body: valueOf(r.body), severityNumber: r.severityNumber ?? 0, eventName: r.eventName ?? '', traceId: hex(r.traceId), spanId: hex(r.spanId), attributes: attrs(r.attributes), resource });
      }
    }
  }
  return out;
}

/** A real OTLP/HTTP trace receiver on a loopback port (POST /v1/traces, protobuf). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const logs: ReceivedLog[] = [];
  const bodies: Buffer[] = [];
  const contentTypes: string[] = [];
  let waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const decode = req.method === 'POST' ? { '/v1/traces': () => spans.push(...decodeTraces(body)), '/v1/metrics': () => points.push(...decodeMetrics(body)), '/v1/logs': () => logs.push(...decodeLogs(body)) }[req.url ?? ''] : undefined;
      if (!decode) {
        res.writeHead(404).end();
        return;
      }
      bodies.push(body);
      contentTypes.push(String(req.headers['content-type']));
      decode();
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      waiters.splice(0).forEach((w) => w());
    });
  });
  async function waitFor(done: () => boolean, what: string, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    points,
    logs,
    bodies,
    contentTypes,
    async waitForSpans(n, ms = 15_000) {
      await waitFor(() => spans.length >= n, `${n} spans`, ms);
      return spans;
    },
    waitFor,
    close: () =>
      new Promise((resolve) => {
        waiters = [];
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The environment that points a Ward process at `receiver`, its spans and log records exported every 50 ms. */
export function exportingTo(receiver: OtlpReceiver): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_BLRP_SCHEDULE_DELAY: '50' };
}
