import type { Gauge } from './registry.js';
import type { TelemetryStats } from './items.js';

/** `ward_telemetry_lost{what}`: what a slow or dead collector or log file cost since start, one series per kind of loss. */
export function trackTelemetryLoss(gauge: Gauge, stats: () => TelemetryStats): void {
  gauge.track(() => stats().droppedSpans, { what: 'spans' });
  gauge.track(() => stats().failedSpans, { what: 'spans_failed' });
  gauge.track(() => stats().droppedLogLines, { what: 'log_lines' });
  gauge.track(() => stats().droppedLogRecords, { what: 'log_records' });
  gauge.track(() => stats().failedLogRecords, { what: 'log_records_failed' });
  gauge.track(() => stats().failedMetricExports, { what: 'metric_exports_failed' });
}
