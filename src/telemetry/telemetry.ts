import type { TelemetryConfig } from './config.js';
import { decisionAttributes, spanName, type DecisionRecord, type RelayRecord } from './decision-record.js';
import type { TelemetryItem, TelemetryStats, TraceCarrier } from './items.js';
import type { MetricSnapshot } from './metric-snapshot.js';
import type { MetricsSource } from './otlp-metrics.js';
import { startRecorder } from './recorder.js';
import { spanPlanner } from './span-planner.js';

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

export type { TelemetryStats, TraceCarrier } from './items.js';

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

export interface TelemetryOptions {
  /**
   * Export from a thread of its own (`ward serve`, `ward mcp proxy`): the deciding thread only fixes
   * each span's identity and hands plain items over in batches. Off (the command hook, one
   * decision per process), the exporting runs in this thread, after the reply.
   */
  thread?: boolean | undefined;
}

/**
 * Start the telemetry `config` asks for. The OpenTelemetry SDK's exporting side is loaded on the
 * exporting side only, when export is on: with it off, a host pays for no module and no span.
 */
export async function startTelemetry(config: TelemetryConfig, host: DecisionRecord['host'], opts: TelemetryOptions = {}): Promise<DecisionTelemetry> {
  const metricsSource: MetricsSource = {};
  const [sink, plan] = await Promise.all([
    opts.thread ? (await import('./telemetry-thread.js')).startTelemetryThread(config, host, metricsSource) : startRecorder(config, host, metricsSource),
    config.otlp && config.signals.traces ? spanPlanner() : undefined,
  ]);
  // Items are handed over in batches: at most HANDOVER_MS after the first one waits, or at once
  // when HANDOVER_ITEMS wait. Each hand-over costs both threads a message, whatever it carries
  // (measured: 10 ms batches cost the proxy about twice the CPU per call of 250 ms ones).
  let pending: TelemetryItem[] = [];
  let scheduled: NodeJS.Timeout | undefined;
  const handOver = () => {
    if (scheduled !== undefined) clearTimeout(scheduled);
    scheduled = undefined;
    const items = pending;
    pending = [];
    sink.record(items);
  };
  const push = (item: TelemetryItem) => {
    pending.push(item);
    if (pending.length >= HANDOVER_ITEMS) {
      // Not in the caller's turn: after the host has answered or forwarded.
      if (pending.length === HANDOVER_ITEMS) setImmediate(handOver);
      return;
    }
    if (scheduled === undefined) {
      scheduled = setTimeout(handOver, HANDOVER_MS);
      // Hosts flush at exit (`shutdown`); the timer alone keeps no process alive.
      scheduled.unref();
    }
  };
  const openSpan = (spanId: string, carrier: TraceCarrier): OpenSpan => {
    let ended = false;
    return {
      carrier,
      end(error) {
        if (ended) return;
        ended = true;
        push({ type: 'end', spanId, at: preciseNow(), error });
      },
    };
  };
  // The proxy calls the server; the daemon serves its caller; the command hook is a step of the agent's process.
  const kind = host === 'mcp-proxy' ? 'client' : host === 'hook' ? 'internal' : 'server';
  /**
   * One concluded decision: its span's identity now (the proxy passes it on), everything else on
   * the exporting side. The span ends at the decision's time, or, `open`, when the host ends it
   * (the proxy's request span).
   */
  const concluded = (record: DecisionRecord, parent: TraceCarrier | undefined, startedAt: number | undefined, open: boolean, at?: number): OpenSpan => {
    try {
      const decidedAt = at ?? preciseNow();
      const planned = plan?.(spanName(record), kind, parent, startedAt ?? decidedAt);
      push({ type: 'decision', record, at: decidedAt, parent, span: planned?.plan, open: open && planned?.plan !== undefined });
      if (!planned) return NO_SPAN;
      // Only the proxy passes the context on (to the MCP server); the daemon answers its caller.
      const carrier = host === 'mcp-proxy' ? planned.carrier : undefined;
      if (open && planned.plan && carrier) return openSpan(planned.plan.spanId, carrier);
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
      if (!plan) return NO_SPAN;
      try {
        const planned = plan(record.method, 'client', parent, preciseNow());
        if (!planned.plan) return { carrier: planned.carrier, end() {} };
        push({ type: 'relay', record, span: planned.plan });
        return openSpan(planned.plan.spanId, planned.carrier);
      } catch {
        return NO_SPAN;
      }
    },
    exportMetrics(read) {
      metricsSource.read = read;
    },
    stats: () => sink.stats(),
    async shutdown(flushMs = SHUTDOWN_FLUSH_MS) {
      // What waits goes before the exporters flush.
      handOver();
      await sink.shutdown(flushMs);
    },
  };
}

/** How long items wait on the deciding side before they are handed over together, and how many at most. */
const HANDOVER_MS = 250;
const HANDOVER_ITEMS = 512;

/** Longest a host waits at exit for queued spans to reach the collector. */
export const SHUTDOWN_FLUSH_MS = 2000;
