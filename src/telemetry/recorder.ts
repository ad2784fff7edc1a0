import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { BasicTracerProvider, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { TelemetryConfig } from './config.js';
import { DecisionLog } from './decision-log.js';
import { decisionAttributes, decisionLogLine, relayAttributes, type AttributeValue } from './decision-record.js';
import { budgetedExporter, ExportBudget } from './export-budget.js';
import { addLoss, lossOf, lossOutputs, NO_LOSS, type SpanPlan, type TelemetryItem, type TelemetrySink, type TelemetryStats, type TraceCarrier } from './items.js';
import { DECISION_EVENT, startLogsExport, type DecisionLogRecords } from './otlp-logs.js';
import type { OtelModules } from './otel-modules.js';
import { startMetricsExport, type MetricsExport, type MetricsSource } from './otlp-metrics.js';

/**
 * The exporting side of telemetry: turns the deciding side's items into OpenTelemetry spans, log
 * records and decision-log lines, and exports them. Everything here is off the decision's path:
 * it runs on the telemetry thread (`ward serve`, `ward mcp proxy`) or after the reply (the command hook).
 */
export interface Recorder extends TelemetrySink {
  /** What waits in the exporters' queues now (as counts of what it would be lost as). */
  held(): TelemetryStats;
}

/**
 * Spans open at once at most (requests in flight: the proxy ends each when it is answered,
 * cancelled or its session ends); past it the oldest is ended with `error.type = evicted`.
 */
const MAX_OPEN_SPANS = 65_536;

interface Otel {
  /** Undefined when traces are not exported (`OTEL_TRACES_EXPORTER=none`). */
  tracer: Tracer | undefined;
  /** The plan of the span being started: the tracer's id generator and sampler read it. */
  next: { plan: SpanPlan | undefined };
  root: Context;
  kinds: { client: number; server: number; internal: number };
  errorStatus: number;
  extract(carrier: TraceCarrier): Context;
  metrics: MetricsExport | undefined;
  logs: DecisionLogRecords | undefined;
  setSpan(ctx: Context, span: Span): Context;
  shutdown(flushMs: number): Promise<void>;
}

/**
 * Start the exporters `config` asks for. The OpenTelemetry SDK is imported here and only here (on
 * the exporting side), when export is on.
 */
export async function startRecorder(config: TelemetryConfig, host: string, metricsSource: MetricsSource): Promise<Recorder> {
  const spans = new ExportBudget(config.maxQueue);
  const logRecords = new ExportBudget(config.maxQueue);
  const otel = config.otlp ? await startOtel(config, host, { spans, logRecords }, metricsSource) : undefined;
  const log = config.decisionLog !== undefined ? DecisionLog.open(config.decisionLog, config.maxQueue * 1024) : undefined;
  const open = new Map<string, Span>();
  let stopped = false;
  let late = NO_LOSS;

  const started = (plan: SpanPlan, attributes: Record<string, AttributeValue>): Span | undefined => {
    if (!otel?.tracer) return undefined;
    const ctx = plan.parent?.traceparent ? otel.extract(plan.parent) : otel.root;
    otel.next.plan = plan;
    try {
      return otel.tracer.startSpan(plan.name, { kind: otel.kinds[plan.kind], startTime: plan.start, attributes }, ctx);
    } finally {
      otel.next.plan = undefined;
    }
  };
  const keepOpen = (plan: SpanPlan, span: Span | undefined) => {
    if (!span) return;
    if (open.size >= MAX_OPEN_SPANS) {
      const [oldestId, oldest] = open.entries().next().value as [string, Span];
      open.delete(oldestId);
      endSpan(oldest, 'evicted', Date.now());
    }
    open.set(plan.spanId, span);
  };

  const endSpan = (span: Span, error: number | string | undefined, at: number) => {
    if (error !== undefined) {
      span.setAttribute('error.type', String(error));
      span.setStatus({ code: otel!.errorStatus });
    }
    span.end(at);
  };
  const one = (item: TelemetryItem) => {
    switch (item.type) {
      case 'decision': {
        const { record, at, span: plan } = item;
        // Values stay out unless the operator opted in, whatever a host passed.
        const attributes = decisionAttributes(config.includeTargets || !record.targets ? record : { ...record, targets: undefined });
        const span = plan ? started(plan, attributes) : undefined;
        if (span && plan) {
          if (item.open) {
            span.addEvent(DECISION_EVENT, at);
            keepOpen(plan, span);
          } else span.end(at);
        }
        const time = new Date(at);
        if (otel?.logs) {
          // The log record joins Ward's span, else the caller's context.
          const ctx = span ? otel.setSpan(otel.root, span) : item.parent?.traceparent ? otel.extract(item.parent) : otel.root;
          otel.logs.emit(record, attributes, ctx, time);
        }
        log?.write(decisionLogLine(attributes, time, plan && span ? { traceId: plan.traceId, spanId: plan.spanId } : undefined));
        return;
      }
      case 'relay':
        keepOpen(item.span, started(item.span, relayAttributes(item.record)));
        return;
      case 'end': {
        const span = open.get(item.spanId);
        if (!span) return;
        open.delete(item.spanId);
        endSpan(span, item.error, item.at);
        return;
      }
    }
  };

  return {
    record(items) {
      if (stopped) {
        // After shutdown the exporters take nothing: counted, not recorded.
        late = addLoss(late, lossOf(items, lossOutputs(config)));
        return;
      }
      for (const item of items) {
        try {
          one(item);
        } catch {
          // telemetry never decides anything; one bad item does not stop the others
        }
      }
    },
    stats: () =>
      addLoss(late, {
        droppedSpans: spans.dropped,
        failedSpans: spans.failed,
        droppedLogLines: log?.droppedLines ?? 0,
        droppedLogRecords: logRecords.dropped,
        failedLogRecords: logRecords.failed,
        failedMetricExports: otel?.metrics?.failed() ?? 0,
      }),
    // Spans still open (requests in flight) are held too: they are exported when they end.
    held: () => ({ ...NO_LOSS, droppedSpans: spans.queued + open.size, droppedLogRecords: logRecords.queued }),
    async shutdown(flushMs) {
      stopped = true;
      // A span still open at exit (a request never answered) is exported as it stands.
      const now = Date.now();
      for (const span of open.values()) span.end(now);
      open.clear();
      await bounded(Promise.all([otel?.shutdown(flushMs), log?.close()]), flushMs);
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
  const next: Otel['next'] = { plan: undefined };
  const provider = config.signals.traces ? await tracerProvider(m, config, resource, budgets.spans, next) : undefined;
  const propagator = new core.W3CTraceContextPropagator();
  return {
    tracer: provider?.getTracer('ward'),
    next,
    kinds: { client: api.SpanKind.CLIENT, server: api.SpanKind.SERVER, internal: api.SpanKind.INTERNAL },
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

/**
 * The tracer of planned spans: the deciding side sampled each one (`OTEL_TRACES_SAMPLER`) and fixed
 * its ids, so here every span is recorded with the ids, tracestate and sampler attributes it was given.
 */
async function tracerProvider(m: OtelModules, config: TelemetryConfig, resource: Resource, budget: ExportBudget, next: Otel['next']): Promise<BasicTracerProvider> {
  const exporterModule = await (config.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'));
  const sdk = m.traceSdk;
  // The exporter reads OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, headers and timeout from the environment.
  const exporter = budgetedExporter<ReadableSpan>(new exporterModule.OTLPTraceExporter(), budget);
  const processor = new sdk.BatchSpanProcessor(exporter, { maxQueueSize: config.maxQueue, maxExportBatchSize: Math.min(512, config.maxQueue) });
  return new sdk.BasicTracerProvider({
    resource,
    sampler: {
      shouldSample: () => ({
        decision: m.api.SamplingDecision.RECORD_AND_SAMPLED,
        attributes: next.plan?.samplerAttributes,
        traceState: next.plan?.traceState ? m.api.createTraceState(next.plan.traceState) : undefined,
      }),
      toString: () => 'WardPlannedSampler',
    },
    idGenerator: { generateTraceId: () => next.plan!.traceId, generateSpanId: () => next.plan!.spanId },
    spanProcessors: [
      {
        // Bounded: past maxQueue spans waiting, a span is dropped here and counted (the batch
        // processor would drop it too, silently).
        onStart: (span, ctx) => processor.onStart(span, ctx),
        onEnd(span: ReadableSpan) {
          if (budget.admit()) processor.onEnd(span);
        },
        forceFlush: () => processor.forceFlush(),
        shutdown: () => processor.shutdown(),
      },
    ],
  });
}

/** `work`, or nothing once `ms` have passed (a dead collector or a stuck thread never holds an exit). */
export function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([work.then(() => undefined, () => undefined), limit]).finally(() => clearTimeout(timer));
}
