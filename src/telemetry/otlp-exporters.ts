import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { OtlpProtocol } from './config.js';
import type { OtelModules } from './otel-modules.js';

/**
 * OTLP/HTTP exporters for metrics and logs, from the SDK's own parts: the export delegate of
 * `@opentelemetry/otlp-exporter-base` (HTTP transport, retries, bounded queue, the standard
 * `OTEL_EXPORTER_OTLP_[METRICS_|LOGS_]ENDPOINT` / `HEADERS` / `TIMEOUT` variables) and the
 * serializers of `@opentelemetry/otlp-transformer` — the same wiring as the official
 * `exporter-{metrics,logs}-otlp-{proto,http}` classes, whose releases on this SDK line were not
 * published together (docs/observability.md "Dependencies").
 */
export interface OtlpExporter<T> {
  export(items: T, done: (result: { code: number; error?: Error }) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

const CONTENT_TYPE: Record<OtlpProtocol, string> = { 'http/protobuf': 'application/x-protobuf', 'http/json': 'application/json' };

export function metricsExporter(m: OtelModules, protocol: OtlpProtocol): OtlpExporter<ResourceMetrics> {
  const serializer = protocol === 'http/json' ? m.transformer.JsonMetricsSerializer : m.transformer.ProtobufMetricsSerializer;
  const options = m.exporterHttp.convertLegacyHttpOptions({}, 'METRICS', 'v1/metrics', { 'Content-Type': CONTENT_TYPE[protocol] });
  const delegate = m.exporterHttp.createOtlpHttpExportDelegate(options, serializer, 'otlp_http_metric_exporter', m.transformer.MetricsExporterMetricsHelper, undefined);
  return new m.exporterBase.OTLPExporterBase<ResourceMetrics>(delegate);
}

export function logsExporter(m: OtelModules, protocol: OtlpProtocol): OtlpExporter<ReadableLogRecord[]> {
  const serializer = protocol === 'http/json' ? m.transformer.JsonLogsSerializer : m.transformer.ProtobufLogsSerializer;
  const options = m.exporterHttp.convertLegacyHttpOptions({}, 'LOGS', 'v1/logs', { 'Content-Type': CONTENT_TYPE[protocol] });
  const delegate = m.exporterHttp.createOtlpHttpExportDelegate(options, serializer, 'otlp_http_log_exporter', m.transformer.LogsExporterMetricsHelper, undefined);
  return new m.exporterBase.OTLPExporterBase<ReadableLogRecord[]>(delegate);
}
