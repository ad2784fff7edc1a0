/**
 * A metrics registry's content at one instant, as the OTLP metrics export reads it
 * (docs/observability.md "Metrics"). The daemon's Prometheus registry produces it, so `/metrics`
 * and OTLP carry the same series under the same names and units, counted once.
 */
export type MetricLabels = Readonly<Record<string, string>>;

export interface ValueSeries {
  labels: MetricLabels;
  value: number;
}

export interface HistogramSeries {
  labels: MetricLabels;
  /** Observations per bucket (not cumulative): one per bound, then one above the last bound. */
  counts: readonly number[];
  sum: number;
  count: number;
}

interface Described {
  /** The Prometheus name, also the OTLP name (`ward_decisions_total`, `ward_eval_duration_seconds`). */
  name: string;
  description: string;
}

export type MetricSnapshot =
  | (Described & { kind: 'counter' | 'gauge'; series: readonly ValueSeries[] })
  | (Described & { kind: 'histogram'; bounds: readonly number[]; series: readonly HistogramSeries[] });

/** A metric's unit, UCUM as OTLP wants it, from its Prometheus name's suffix: `_seconds` → `s`, else `1`. */
export function metricUnit(name: string): string {
  return name.endsWith('_seconds') ? 's' : '1';
}
