import type { TelemetryConfig } from './config.js';
import type { DecisionRecord, RelayRecord } from './decision-record.js';

/** The W3C trace context of a request (HTTP headers, MCP `params._meta`). */
export interface TraceCarrier {
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

export type SpanKindName = 'client' | 'server' | 'internal';

/**
 * A span whose identity the deciding thread already fixed (its ids went into the forwarded
 * request's `traceparent`): the exporting side records it with exactly these ids. Only sampled
 * spans are planned; an unsampled one is never exported.
 */
export interface SpanPlan {
  name: string;
  kind: SpanKindName;
  traceId: string;
  spanId: string;
  /** The caller's context, when it carried a valid `traceparent` (the span's parent). */
  parent?: TraceCarrier | undefined;
  /** Epoch milliseconds, sub-millisecond precision. */
  start: number;
  /** The span's W3C tracestate (the sampler's, else the parent's), serialized; what the forwarded request carried. */
  traceState?: string | undefined;
  /** Attributes the sampler asked for (none of the SDK's own samplers do). */
  samplerAttributes?: Readonly<Record<string, string | number | boolean>> | undefined;
}

/**
 * What the deciding side hands the exporting side (`recorder.ts`), in order: plain data, so it can
 * cross to the telemetry thread as it is.
 *
 * - `decision`: one concluded decision — its log record and decision-log line at `at`, and its span
 *   (when sampled): ended at `at`, or, `open`, left open until its `end` item (the proxy's request span).
 * - `relay`: the span of a request relayed without a decision, open until its `end`.
 * - `end`: an open span's end, with the JSON-RPC error code or the reason it had no answer.
 */
export type TelemetryItem =
  | { type: 'decision'; record: DecisionRecord; at: number; parent: TraceCarrier | undefined; span: SpanPlan | undefined; open: boolean }
  | { type: 'relay'; record: RelayRecord; span: SpanPlan }
  | { type: 'end'; spanId: string; at: number; error: number | string | undefined };

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

/** Which per-decision outputs a configuration asks for besides spans: what a lost decision is counted as. */
export interface LossOutputs {
  logRecords: boolean;
  logLines: boolean;
}

export function lossOutputs(config: Pick<TelemetryConfig, 'otlp' | 'signals' | 'decisionLog'>): LossOutputs {
  return { logRecords: config.otlp && config.signals.logs !== undefined, logLines: config.decisionLog !== undefined };
}

/** What `items` would have become, counted as lost: items that never reached the exporting side. */
export function lossOf(items: readonly TelemetryItem[], outputs: LossOutputs): TelemetryStats {
  const loss = { ...NO_LOSS };
  for (const item of items) {
    if (item.type === 'end') continue;
    if (item.span) loss.droppedSpans++;
    if (item.type !== 'decision') continue;
    if (outputs.logRecords) loss.droppedLogRecords++;
    if (outputs.logLines) loss.droppedLogLines++;
  }
  return loss;
}

/** `a` plus `b`, field by field. */
export function addLoss(a: TelemetryStats, b: TelemetryStats): TelemetryStats {
  return {
    droppedSpans: a.droppedSpans + b.droppedSpans,
    failedSpans: a.failedSpans + b.failedSpans,
    droppedLogLines: a.droppedLogLines + b.droppedLogLines,
    droppedLogRecords: a.droppedLogRecords + b.droppedLogRecords,
    failedLogRecords: a.failedLogRecords + b.failedLogRecords,
    failedMetricExports: a.failedMetricExports + b.failedMetricExports,
  };
}

export const NO_LOSS: TelemetryStats = Object.freeze({ droppedSpans: 0, failedSpans: 0, droppedLogLines: 0, droppedLogRecords: 0, failedLogRecords: 0, failedMetricExports: 0 });

/** Where the items of decisions go: the exporting side, in the host's thread or on the telemetry thread. */
export interface TelemetrySink {
  record(items: readonly TelemetryItem[]): void;
  stats(): TelemetryStats;
  /** Flush what is queued, within `flushMs`, and stop; items recorded after this are counted as lost. */
  shutdown(flushMs: number): Promise<void>;
}
