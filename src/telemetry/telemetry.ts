import type { Context, Span, SpanContext, SpanKind, SpanOptions, Tracer } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { BasicTracerProvider, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { TelemetryConfig } from './config.js';
import { DecisionLog } from './decision-log.js';
import { decisionAttributes, decisionLogLine, relayAttributes, spanName, type DecisionRecord, type RelayRecord, type SpanIds } from './decision-record.js';
import { budgetedExporter, ExportBudget } from './export-budget.js';
import type { MetricSnapshot } from './metric-snapshot.js';
import { startLogsExport, type DecisionLogRecords } from './otlp-logs.js';
import type { OtelModules } from './otel-modules.js';
import { startMetricsExport, type MetricsExport, type MetricsSource } from './otlp-metrics.js';

/** Decisions as spans on the application's own OpenTelemetry setup (the SDK's `otel` option). */
export interface ApplicationSpans {
  /** One span, child of the active span (the agent's tool call), from `startedAt` (epoch ms) to now. Never throws. */
  decision(record: DecisionRecord, startedAt: number): void;
}

/**
 * The SDK's spans: a library does not run its own exporter, it records on the tracer provider and
 * context manager the application registered (`@opentelemetry/api`'s globals; with none, the API's
 * no-op tracer, and nothing is recorded). Loaded on first use, only with the `otel` option.
 */
export async function applicationSpans(): Promise<ApplicationSpans> {
  const api = await import('@opentelemetry/api');
  const tracer = api.trace.getTracer('ward');
  return {
    decision(record, startedAt) {
      try {
        const span = tracer.startSpan(spanName(record), { kind: api.SpanKind.INTERNAL, startTime: startedAt, attributes: decisionAttributes(record) }, api.context.active());
        span.end(preciseNow());
      } catch {
        // telemetry never decides anything
      }
    },
  };
}

/** Now, in epoch milliseconds with sub-millisecond precision: a span's start and a decision's duration. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The W3C trace context of a request (HTTP headers, MCP `params._meta`). */
export interface TraceCarrier {
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

export interface TelemetryStats {
  /** Spans dropped because the export queue was full (a slow or dead collector). */
  droppedSpans: number;
  /** Spans the exporter failed to deliver. */
  failedSpans: number;
  droppedLogLines: number;
  /** Decision log records dropped (export queue full) and failed to deliver. */
  droppedLogRecords: number;
  failedLogRecords: number;
  /** Metric exports that failed (each carries every series, so the next one makes up for it). */
  failedMetricExports: number;
}

/** The decision hook hosts call (one call where a decision concludes). */
export interface DecisionTelemetry {
  /**
   * Record one concluded decision: a span (child of `parent` when it carries a valid traceparent)
   * and a decision-log line. Returns the span's context for propagation (the proxy puts it in the
   * forwarded request's `_meta`), or undefined when no span was recorded. `decidedAt` (epoch ms):
   * when the decision concluded, if not now (the command hook records it after its reply). Never
   * throws, never waits.
   */
  decision(record: DecisionRecord, parent: TraceCarrier | undefined, startedAt?: number, decidedAt?: number): TraceCarrier | undefined;
  /**
   * The MCP proxy's span for one decided request, child of `parent`: it starts at `startedAt`,
   * carries the decision's attributes (and a `ward.decision` event at the decision's time), and
   * stays open until the host calls `end` — when the answer is handed to the client, or the
   * request is refused, cancelled or its session ends. The decision-log line and record are
   * written at the decision's time, as for `decision`. Never throws, never waits.
   */
  request(record: DecisionRecord, parent: TraceCarrier | undefined, startedAt: number): OpenSpan;
  /**
   * The span of a request the MCP proxy relays without a decision (`initialize`, `tools/list`, ...),
   * child of `parent`, open until `end` as for `request`. Never throws.
   */
  relay(record: RelayRecord, parent: TraceCarrier | undefined): OpenSpan;
  /** Whether canonical targets may go into spans and logs (`--otel-targets`); hosts build them only then. */
  readonly includeTargets: boolean;
  /** Export these metrics over OTLP at each interval (the daemon's registry: the same series as `/metrics`); nothing when metrics export is off. */
  exportMetrics(read: () => readonly MetricSnapshot[]): void;
  stats(): TelemetryStats;
  /** Flush what is queued, within `flushMs` (default `SHUTDOWN_FLUSH_MS`), and stop. */
  shutdown(flushMs?: number): Promise<void>;
}

/** A span still open (`request`, `relay`): its context for the forwarded request's `_meta`, and its end. */
export interface OpenSpan {
  /** Undefined when no span is recorded (traces not exported). */
  readonly carrier: TraceCarrier | undefined;
  /**
   * End the span now; only the first call counts. `error`: the JSON-RPC error code the client was
   * answered with, or why there was no answer (`cancelled`, `session_ended`) — the span's
   * `error.type` and an error status. The end itself is recorded off the caller's path.
   */
  end(error?: number | string): void;
}

/** The open span of nothing: traces are off, or the span could not be started. */
export const NO_SPAN: OpenSpan = { carrier: undefined, end() {} };

interface Otel {
  /** Undefined when traces are not exported (`OTEL_TRACES_EXPORTER=none`). */
  tracer: Tracer | undefined;
  root: Context;
  kinds: typeof SpanKind;
  /** `SpanStatusCode.ERROR`. */
  errorStatus: number;
  extract(carrier: TraceCarrier): Context;
  metrics: MetricsExport | undefined;
  logs: DecisionLogRecords | undefined;
  setSpan(ctx: Context, span: Span): Context;
  shutdown(flushMs: number): Promise<void>;
}

/**
 * Start the telemetry `config` asks for. The OpenTelemetry SDK is imported here and only here, when
 * export is on: with it off, a host pays for no module and no span.
 */
export async function startTelemetry(config: TelemetryConfig, host: DecisionRecord['host']): Promise<DecisionTelemetry> {
  const spans = new ExportBudget(config.maxQueue);
  const logRecords = new ExportBudget(config.maxQueue);
  const metricsSource: MetricsSource = {};
  const otel = config.otlp ? await startOtel(config, host, { spans, logRecords }, metricsSource) : undefined;
  const log = config.decisionLog !== undefined ? DecisionLog.open(config.decisionLog, config.maxQueue * 1024) : undefined;
  // Work decisions leave for the next turn of the event loop: one immediate runs all of it.
  const deferred: (() => void)[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  const runDeferred = () => {
    scheduled = undefined;
    for (const work of deferred.splice(0)) work();
  };
  const defer = (work: () => void) => {
    deferred.push(work);
    scheduled ??= setImmediate(runDeferred);
  };
  /** A span whose end the host reports; the end (and its error, if any) is recorded on the next turn, after the decision's attributes. */
  const openSpan = (span: Span, carrier: TraceCarrier | undefined): OpenSpan => {
    let ended = false;
    return {
      carrier,
      end(error) {
        if (ended) return;
        ended = true;
        const at = preciseNow();
        defer(() => {
          try {
            if (error !== undefined) {
              span.setAttribute('error.type', String(error));
              span.setStatus({ code: otel!.errorStatus });
            }
            span.end(at);
          } catch {
            // telemetry never decides anything
          }
        });
      },
    };
  };
  /**
   * One concluded decision: a span (child of `parent` when it carries a valid traceparent) and a
   * decision-log line and record. The span ends at the decision's time, or, `open`, when the host
   * ends it (the proxy's request span).
   */
  const concluded = (record: DecisionRecord, parent: TraceCarrier | undefined, startedAt: number | undefined, open: boolean, at?: number): OpenSpan => {
    try {
      let ids: SpanIds | undefined;
      let carrier: TraceCarrier | undefined;
      const decidedAt = at ?? preciseNow();
      // The caller's context, then Ward's span in it: the log record joins whichever exists.
      const callerCtx = otel && parent?.traceparent ? otel.extract(parent) : otel?.root;
      let span: Span | undefined;
      if (otel?.tracer) {
        // The proxy calls the server; the daemon serves its caller; the command hook is a step of the agent's process.
        const kind = record.host === 'mcp-proxy' ? otel.kinds.CLIENT : record.host === 'hook' ? otel.kinds.INTERNAL : otel.kinds.SERVER;
        // Options built key by key (a conditional spread is a slow path on every call).
        const options: SpanOptions = { kind };
        if (startedAt !== undefined) options.startTime = startedAt;
        span = otel.tracer.startSpan(spanName(record), options, callerCtx);
        const sc = span.spanContext();
        // Sampled out spans are not exported; their ids mean nothing to a collector.
        if (sc.traceFlags & 1) ids = { traceId: sc.traceId, spanId: sc.spanId };
        // Only the proxy passes the context on (to the MCP server); the daemon answers its caller.
        if (record.host === 'mcp-proxy') carrier = traceCarrier(sc);
      }
      // The rest waits until the host has answered or forwarded (the next turn of the event
      // loop): attributes, the span's end (at the decision's time) or its decision event, the
      // log record and line.
      defer(() => {
        try {
          // Values stay out unless the operator opted in, whatever a host passed.
          const attributes = decisionAttributes(config.includeTargets || !record.targets ? record : { ...record, targets: undefined });
          if (span) {
            span.setAttributes(attributes);
            if (open) span.addEvent('ward.decision', decidedAt);
            else span.end(decidedAt);
          }
          const at = new Date(decidedAt);
          if (otel?.logs && callerCtx) otel.logs.emit(record, attributes, span ? otel.setSpan(otel.root, span) : callerCtx, at);
          log?.write(decisionLogLine(attributes, at, ids));
        } catch {
          // telemetry never decides anything
        }
      });
      if (open && span) return openSpan(span, carrier);
      return carrier ? { carrier, end() {} } : NO_SPAN;
    } catch {
      return NO_SPAN; // telemetry never decides anything
    }
  };
  return {
    includeTargets: config.includeTargets,
    decision(record, parent, startedAt, decidedAt) {
      return concluded(record, parent, startedAt, false, decidedAt).carrier;
    },
    request(record, parent, startedAt) {
      return concluded(record, parent, startedAt, true);
    },
    relay(record, parent) {
      if (!otel?.tracer) return NO_SPAN;
      try {
        const ctx = parent?.traceparent ? otel.extract(parent) : otel.root;
        const span = otel.tracer.startSpan(record.method, { kind: otel.kinds.CLIENT, attributes: relayAttributes(record) }, ctx);
        return openSpan(span, traceCarrier(span.spanContext()));
      } catch {
        return NO_SPAN;
      }
    },
    exportMetrics(read) {
      metricsSource.read = read;
    },
    stats: () => ({
      droppedSpans: spans.dropped,
      failedSpans: spans.failed,
      droppedLogLines: log?.droppedLines ?? 0,
      droppedLogRecords: logRecords.dropped,
      failedLogRecords: logRecords.failed,
      failedMetricExports: otel?.metrics?.failed() ?? 0,
    }),
    async shutdown(flushMs = SHUTDOWN_FLUSH_MS) {
      // What decisions left for the next turn is done before the exporters flush.
      if (scheduled) clearImmediate(scheduled);
      runDeferred();
      await Promise.all([otel?.shutdown(flushMs), log?.close()]);
    },
  };
}

async function loadOtel(): Promise<OtelModules> {
  const [api, core, resources, traceSdk, metricsSdk, logsSdk, exporterBase, exporterHttp, transformer] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/sdk-logs'),
    import('@opentelemetry/otlp-exporter-base'),
    import('@opentelemetry/otlp-exporter-base/node-http'),
    import('@opentelemetry/otlp-transformer'),
  ]);
  return { api, core, resources, traceSdk, metricsSdk, logsSdk, exporterBase, exporterHttp, transformer };
}

async function startOtel(config: TelemetryConfig, host: string, budgets: { spans: ExportBudget; logRecords: ExportBudget }, metricsSource: MetricsSource): Promise<Otel> {
  const m = await loadOtel();
  const { api, core, resources } = m;
  // Ward's defaults first; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
  const resource = resources
    .resourceFromAttributes({ 'service.name': 'ward', 'ward.host': host })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const metrics = config.signals.metrics
    ? startMetricsExport(m, resource, metricsSource, { protocol: config.signals.metrics, interval: config.metricInterval, timeout: config.metricTimeout })
    : undefined;
  const logs = config.signals.logs
    ? startLogsExport(m, resource, budgets.logRecords, { protocol: config.signals.logs, delay: config.logDelay, maxQueue: config.maxQueue })
    : undefined;
  const provider = config.signals.traces ? await tracerProvider(m, config, resource, budgets.spans) : undefined;
  const propagator = new core.W3CTraceContextPropagator();
  return {
    tracer: provider?.getTracer('ward'),
    kinds: api.SpanKind,
    errorStatus: api.SpanStatusCode.ERROR,
    root: api.ROOT_CONTEXT,
    extract: (carrier) => propagator.extract(api.ROOT_CONTEXT, carrier, api.defaultTextMapGetter),
    metrics,
    logs,
    setSpan: (ctx, span) => api.trace.setSpan(ctx, span),
    // A dead collector must not hold the process at exit (the exporter retries with backoff):
    // what is not flushed within the bound is dropped.
    shutdown: (flushMs) => bounded(Promise.all([provider?.shutdown(), metrics?.shutdown(), logs?.shutdown()]), flushMs),
  };
}

async function tracerProvider(m: OtelModules, config: TelemetryConfig, resource: Resource, budget: ExportBudget): Promise<BasicTracerProvider> {
  const exporterModule = await (config.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'));
  const sdk = m.traceSdk;
  // The exporter reads OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, headers and timeout from the environment.
  const exporter = budgetedExporter<ReadableSpan>(new exporterModule.OTLPTraceExporter(), budget);
  const processor = new sdk.BatchSpanProcessor(exporter, { maxQueueSize: config.maxQueue, maxExportBatchSize: Math.min(512, config.maxQueue) });
  return new sdk.BasicTracerProvider({
    resource,
    spanProcessors: [
      {
        // Bounded: past maxQueue spans waiting, a span is dropped here and counted (the batch
        // processor would drop it too, silently).
        onStart: (span, ctx) => processor.onStart(span, ctx),
        onEnd(span: ReadableSpan) {
          if (!(span.spanContext().traceFlags & 1)) return; // not sampled: never exported
          if (budget.admit()) processor.onEnd(span);
        },
        forceFlush: () => processor.forceFlush(),
        shutdown: () => processor.shutdown(),
      },
    ],
  });
}

/**
 * A span's W3C trace context, as the W3C propagator writes it (version 00), without a propagator,
 * a context and a carrier object per call.
 */
export function traceCarrier(sc: SpanContext): TraceCarrier {
  const carrier: TraceCarrier = { traceparent: `00-${sc.traceId}-${sc.spanId}-0${Number(sc.traceFlags & 0xff).toString(16)}` };
  const state = sc.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/** Longest a host waits at exit for queued spans to reach the collector. */
export const SHUTDOWN_FLUSH_MS = 2000;

function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([work.then(() => undefined, () => undefined), limit]).finally(() => clearTimeout(timer));
}
