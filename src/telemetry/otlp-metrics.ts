import type { HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { MetricData, MetricProducer } from '@opentelemetry/sdk-metrics';
import type { OtlpProtocol } from './config.js';
import { metricUnit, type MetricSnapshot } from './metric-snapshot.js';
import type { OtelModules } from './otel-modules.js';
import { metricsExporter } from './otlp-exporters.js';

/** Where the OTLP metrics export reads its series (the daemon's registry); set once a host has one. */
export interface MetricsSource {
  /** Sync in the host's thread; a round trip to the host from the telemetry thread. */
  read?: (() => readonly MetricSnapshot[] | Promise<readonly MetricSnapshot[]>) | undefined;
}

export interface MetricsExport {
  /** Export attempts that failed (the collector down or refusing). */
  failed(): number;
  shutdown(): Promise<void>;
}

/**
 * Periodic OTLP export of a Ward registry. Nothing is recorded twice: at each interval the SDK's
 * reader collects from a producer that converts the registry's current values (cumulative, as
 * Prometheus reads them), so `/metrics` and OTLP agree and the decision path does no extra work.
 */
export function startMetricsExport(m: OtelModules, resource: Resource, source: MetricsSource, opts: { protocol: OtlpProtocol; interval: number; timeout: number }): MetricsExport {
  const inner = metricsExporter(m, opts.protocol);
  let failed = 0;
  const startTime = m.core.hrTime();
  const producer: MetricProducer = {
    collect: async () => {
      const metrics = source.read ? toMetricData(m, await source.read(), startTime, m.core.hrTime()) : [];
      return { resourceMetrics: { resource, scopeMetrics: metrics.length === 0 ? [] : [{ scope: { name: 'ward' }, metrics }] }, errors: [] };
    },
  };
  const reader = new m.metricsSdk.PeriodicExportingMetricReader({
    exporter: {
      export: (metrics, done) =>
        inner.export(metrics, (result) => {
          if (result.code !== 0) failed++;
          done(result);
        }),
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
      // The registry's values are totals since start, as Prometheus reads them.
      selectAggregationTemporality: () => m.metricsSdk.AggregationTemporality.CUMULATIVE,
    },
    exportIntervalMillis: opts.interval,
    exportTimeoutMillis: Math.min(opts.timeout, opts.interval),
    metricProducers: [producer],
  });
  const provider = new m.metricsSdk.MeterProvider({ resource, readers: [reader] });
  return { failed: () => failed, shutdown: () => provider.shutdown() };
}

/** OTLP metric data of registry snapshots: counters as monotonic cumulative sums, gauges, explicit-bucket histograms; same names. */
function toMetricData(m: Pick<OtelModules, 'api' | 'metricsSdk'>, snapshots: readonly MetricSnapshot[], startTime: HrTime, endTime: HrTime): MetricData[] {
  const { DataPointType, AggregationTemporality } = m.metricsSdk;
  const out: MetricData[] = [];
  for (const s of snapshots) {
    if (s.series.length === 0) continue;
    const descriptor = { name: s.name, description: s.description, unit: metricUnit(s.name), valueType: m.api.ValueType.DOUBLE };
    const aggregationTemporality = AggregationTemporality.CUMULATIVE;
    if (s.kind === 'histogram') {
      out.push({
        descriptor,
        aggregationTemporality,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: s.series.map((h) => ({ startTime, endTime, attributes: { ...h.labels }, value: { buckets: { boundaries: [...s.bounds], counts: [...h.counts] }, sum: h.sum, count: h.count } })),
      });
      continue;
    }
    const dataPoints = s.series.map((v) => ({ startTime, endTime, attributes: { ...v.labels }, value: v.value }));
    out.push(
      s.kind === 'counter'
        ? { descriptor, aggregationTemporality, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints }
        : { descriptor, aggregationTemporality, dataPointType: DataPointType.GAUGE, dataPoints },
    );
  }
  return out;
}
