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
}

export interface OtlpReceiver {
  /** The base endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request body received, raw (for privacy checks over the exported bytes). */
  bodies: Buffer[];
  contentTypes: string[];
  /** Resolves once at least `n` spans arrived (or rejects after `ms`). */
  waitForSpans(n: number, ms?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const root = protobuf.loadSync(fileURLToPath(new URL('./otlp-trace.proto', import.meta.url)));
const Request = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');

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
        out.push({ name: s.name, kind: s.kind, traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), attributes: attrs(s.attributes), resource });
      }
    }
  }
  return out;
}

/** A real OTLP/HTTP trace receiver on a loopback port (POST /v1/traces, protobuf). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const contentTypes: string[] = [];
  let waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      bodies.push(body);
      contentTypes.push(String(req.headers['content-type']));
      spans.push(...decodeTraces(body));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    contentTypes,
    async waitForSpans(n, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (spans.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} spans, got ${spans.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200).unref();
        });
      }
      return spans;
    },
    close: () =>
      new Promise((resolve) => {
        waiters = [];
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
